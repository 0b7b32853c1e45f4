"""Request params checked against the manifest before any handler runs.

Unknown params are ``invalid_params.unknown``, missing required ones
``invalid_params.missing``, wrong JSON types ``invalid_params.type``, numbers and counts out of
bounds ``invalid_params.range``; each names the param in ``data.param``. Defaults are filled in.
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import VenomError
from .grammar import SECRET_PATTERN, id_pattern
from .manifest_types import Type, Verb
from .validation import check_value

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["check_params", "json_schema", "params_schema"]

_JSON_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
    "object": "object",
}


def check_params(verb: Verb, params: Any) -> dict[str, Any]:
    """Validate ``params`` for ``verb`` and return them with defaults filled in."""
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise VenomError.param("type", "params", "params must be an object")
    known = {p.name for p in verb.params}
    for name in params:
        if name not in known:
            # data.param goes back on the wire: a lone surrogate can't be encoded, so escape it.
            shown = str(name).encode("utf-8", "backslashreplace").decode("utf-8")
            raise VenomError.param("unknown", shown, f"{verb.name} has no param {name!r}")
    out: dict[str, Any] = {}
    for p in verb.params:
        if p.name in params:
            out[p.name] = check_value(params[p.name], p.type, p.name)
        elif p.required:
            raise VenomError.param("missing", p.name, f"{verb.name} needs {p.name}")
        elif p.default is not None:
            out[p.name] = p.default
    _check_together(verb, params)
    return out


def _check_together(verb: Verb, params: Mapping[str, Any]) -> None:
    """The rules between params: ``pairs_with`` and the verb's ``one_of``."""
    for p in verb.params:
        if p.pairs_with is None or (p.name in params) == (p.pairs_with in params):
            continue
        if p.name in params:
            raise VenomError.param(
                p.type.code or "type", p.name, f"{p.name} is only allowed with {p.pairs_with}"
            )
        raise VenomError.param("missing", p.name, f"{p.name} is required with {p.pairs_with}")
    if verb.one_of and not any(name in params for name in verb.one_of):
        raise VenomError.param(
            "missing", verb.one_of[0], f"{verb.name} needs at least one of {', '.join(verb.one_of)}"
        )


def json_schema(type_: Type) -> dict[str, Any]:
    """JSON Schema for a manifest type (for MCP ``inputSchema``/``outputSchema``), with its
    grammar. A byte limit is published as ``maxLength`` (a code point is at least a byte, so
    a longer string is over it too: exact for ASCII text) and said in the description; ADR
    0024."""
    if type_.kind == "any":
        return {}
    schema: dict[str, Any] = {"type": _JSON_TYPES[type_.kind]}
    if type_.nullable:
        schema["type"] = [schema["type"], "null"]
    if type_.choices:
        schema["enum"] = list(type_.choices)
    if type_.id_prefix:
        schema["pattern"] = f"^{id_pattern(type_.id_prefix)}$"
    if type_.min_bytes:
        schema["minLength"] = -(-type_.min_bytes // 4)  # four bytes at most per code point
    if type_.max_bytes is not None:
        schema["maxLength"] = type_.max_bytes
        schema["description"] = f"At most {type_.max_bytes} UTF-8 bytes."
    if type_.pattern is not None:
        schema["pattern"] = type_.pattern
    if type_.secret_free:
        schema["not"] = {"pattern": SECRET_PATTERN}
    if type_.min is not None:
        schema["minimum"] = type_.min
    if type_.max is not None:
        schema["maximum"] = type_.max
    if type_.min_items is not None:
        schema["minItems"] = type_.min_items
    if type_.max_items is not None:
        schema["maxItems"] = type_.max_items
    if type_.unique:
        schema["uniqueItems"] = True
    if type_.items is not None:
        schema["items"] = json_schema(type_.items)
    if type_.kind == "object" and not type_.open:
        schema["properties"] = {f.name: json_schema(f.type) for f in type_.fields}
        schema["required"] = [f.name for f in type_.fields if f.required]
        schema["additionalProperties"] = False
    return schema


def params_schema(verb: Verb) -> dict[str, Any]:
    """The JSON Schema of a verb's params object, with the rules between params."""
    props: dict[str, Any] = {}
    for p in verb.params:
        s = json_schema(p.type)
        note = s.pop("description", None)
        s["description"] = f"{p.summary} ({note[0].lower()}{note[1:-1]})" if note else p.summary
        if p.default is not None:
            s["default"] = p.default
        props[p.name] = s
    required = [p.name for p in verb.params if p.required]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }
    pairs = {p.name: [p.pairs_with] for p in verb.params if p.pairs_with is not None}
    for name, (other,) in list(pairs.items()):
        pairs.setdefault(other, [name])
    if pairs:
        schema["dependentRequired"] = pairs
    if verb.one_of:
        optional = {p.name for p in verb.params if not p.required}
        if set(verb.one_of) == optional:  # the members are closed: one more than required
            schema["minProperties"] = len(required) + 1
        else:
            schema["anyOf"] = [{"required": [name]} for name in verb.one_of]
    return schema
