"""The check of one value against its manifest type: JSON type, choices, IDs, bounds and the
grammars of RFC-0020 sections 2, 3, 4 and 7 that :mod:`.grammar` writes down.

:func:`check_value` returns the value (an object's members checked in turn) or raises
:class:`VenomError` ``invalid_params.*`` with ``data.param``: a wrong JSON type, a malformed
ID or a string outside its pattern or choices is ``type`` (or the type's ``code``: ``space``,
``tag``, ``branch``, ``relation``), a length or count out of bounds ``range``, a venom token
in stored text ``secret_content``, an unknown member ``unknown`` and a missing one
``missing``.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import VenomError
from .grammar import SECRET_PATTERN, SPACE_PATTERN, python_regex
from .ids import id_number
from .manifest_types import Type

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SECRET_RE",
    "check_content_size",
    "check_value",
    "is_space",
    "matches",
    "utf8_len",
]

SECRET_RE = re.compile(SECRET_PATTERN)
_COMPILED: dict[str, re.Pattern[str]] = {}
# Line breaks a wrapped or pasted token may carry inside it.
_LINE_BREAKS = dict.fromkeys(map(ord, "\n\r\v\f\x85\u2028\u2029"))


def _regex(pattern: str) -> re.Pattern[str]:
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        compiled = _COMPILED[pattern] = re.compile(python_regex(pattern))
    return compiled


# bool before int: True is an int to Python, a boolean to JSON.
_JSON_NAMES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for cls, name in _JSON_NAMES:
        if isinstance(value, cls):
            return name
    return type(value).__name__


def utf8_len(text: str, param: str) -> int:
    """Length in UTF-8 bytes; a string that isn't valid Unicode text is ``invalid_params.type``."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise VenomError.param("type", param, f"{param} is not valid UTF-8 text") from None


def matches(pattern: str, text: str) -> bool:
    """Whether ``text`` matches one of the grammar's ECMA-262 patterns."""
    return _regex(pattern).match(text) is not None


def is_space(name: str) -> bool:
    """Whether ``name`` is a space name (RFC-0020 section 3)."""
    return matches(SPACE_PATTERN, name)


def _secret_view(text: str) -> str:
    """The text as the token check reads it: NFKC (fullwidth dots and letters become plain
    ones), with format characters (Unicode Cf: zero-width spaces and joiners, bidi marks)
    and line breaks taken out, so an invisible character or a wrap inside a token doesn't
    hide it. Only for the check: the text is stored as sent."""
    if text.isascii() and not any(c in text for c in "\n\r\v\f"):
        return text
    folded = unicodedata.normalize("NFKC", text).translate(_LINE_BREAKS)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf")


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "...")


def _check_text(value: str, type_: Type, param: str) -> None:
    size = utf8_len(value, param)
    if type_.min_bytes is not None and size < type_.min_bytes:
        if type_.min_bytes == 1:
            raise VenomError.param("range", param, f"{param} must not be empty")
        raise VenomError.param(
            "range", param, f"{param} is {size} bytes; at least {type_.min_bytes}"
        )
    if type_.max_bytes is not None and size > type_.max_bytes:
        raise VenomError.param(
            "range", param, f"{param} is {size} bytes; at most {type_.max_bytes}"
        )
    if type_.pattern is not None and not _regex(type_.pattern).match(value):
        rule = type_.rule or f"match {type_.pattern}"
        # Stored text isn't echoed: it may hold what the token check is about to refuse.
        got = "" if type_.secret_free else f", got {_shown(value)}"
        raise VenomError.param(type_.code or "type", param, f"{param} must {rule}{got}")
    if type_.secret_free and (SECRET_RE.search(value) or SECRET_RE.search(_secret_view(value))):
        raise VenomError.param(
            "secret_content",
            param,
            f"{param} contains a venom token; store a reference to it instead",
        )


def check_content_size(content: str, max_bytes: int, param: str = "content") -> None:
    """The store's ``memory.max_content_bytes``, which a config file sets (RFC-0020 section 2)."""
    size = utf8_len(content, param)
    if size > max_bytes:
        raise VenomError.param("range", param, f"content is {size} bytes; at most {max_bytes}")


def _check_items(value: list[Any], type_: Type, param: str) -> list[Any]:
    count = len(value)
    if type_.min_items is not None and count < type_.min_items:
        raise VenomError.param(
            "range", param, f"{param} needs at least {type_.min_items} item(s), got {count}"
        )
    if type_.max_items is not None and count > type_.max_items:
        raise VenomError.param(
            "range", param, f"{count} items in {param}; at most {type_.max_items}"
        )
    items = value if type_.items is None else [check_value(v, type_.items, param) for v in value]
    if type_.unique and len(set(map(repr, items))) != count:
        code = (type_.items.code if type_.items is not None else None) or "type"
        raise VenomError.param(code, param, f"{param} must be unique")
    return items


def _check_object(value: dict[str, Any], type_: Type, param: str) -> dict[str, Any]:
    known = {f.name: f for f in type_.fields}
    for name in value:
        if name not in known:
            raise VenomError.param("unknown", param, f"{param} has no member {name!r}")
    out: dict[str, Any] = {}
    for f in type_.fields:
        if f.name in value:
            out[f.name] = check_value(value[f.name], f.type, param)
        elif f.required:
            raise VenomError.param("missing", param, f"{param} needs {f.name}")
    return out


def check_value(value: Any, type_: Type, param: str) -> Any:
    """``value`` checked against ``type_`` (see the module docstring), errors naming ``param``."""
    if type_.kind == "any":
        return value
    found = _json_type(value)
    if type_.kind == "object" and type_.fields and found == "object":
        return _check_object(value, type_, param)
    if value is None and type_.nullable:
        return None
    expected = type_.kind
    if not (found == expected or (expected == "number" and found == "integer")):
        raise VenomError.param("type", param, f"{param} must be {expected}, got {found}")
    if expected == "string":
        utf8_len(value, param)
        if type_.id_prefix and id_number(value, type_.id_prefix) is None:
            raise VenomError.param(
                "type", param, f"{param} must look like {type_.id_prefix}<N>, got {_shown(value)}"
            )
        if type_.choices and value not in type_.choices:
            raise VenomError.param(
                type_.code or "type", param, f"{param} must be one of {', '.join(type_.choices)}"
            )
        _check_text(value, type_, param)
    elif expected == "integer":
        if type_.min is not None and value < type_.min:
            raise VenomError.param("range", param, f"{param} must be at least {type_.min}")
        if type_.max is not None and value > type_.max:
            raise VenomError.param("range", param, f"{param} must be at most {type_.max}")
    elif expected == "array":
        return _check_items(value, type_, param)
    return value
