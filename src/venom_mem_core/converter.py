"""The one cattrs converter at the trust boundary: checked params become a verb's typed
command (:mod:`.commands`), and a structure error becomes ``invalid_params.*``.

It runs after :func:`~venom_mem_core.params.check_params`, which stays the one place the
grammar lives, so on the daemon's and ``LocalClient``'s paths it only converts: an ID to its
number, a list to a tuple, a grant object to a :class:`~venom_mem_core.records.Grant`. It is
strict all the same (``forbid_extra_keys``; a string, integer or boolean is taken only as
itself, never coerced), so a value that reaches it unchecked is refused, not guessed at:
:func:`structure` turns cattrs' errors (through :func:`cattrs.transform_error`) into the
``invalid_params.unknown``, ``.missing`` or ``.type`` of the param the path starts at.

cattrs costs tens of milliseconds to import, so nothing on the CLI's path imports this
module: the daemon and ``LocalClient`` load it at their first core call.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, get_args, get_origin

import cattrs
from cattrs.cols import homogenous_tuple_structure_factory
from cattrs.errors import ForbiddenExtraKeysError

from .commands import COMMANDS, ID_PREFIXES, Command, field_name
from .errors import VenomError
from .ids import MAX_ID, id_number

__all__ = ["CONVERTER", "structure", "structure_command"]

T = TypeVar("T")

CONVERTER = cattrs.Converter(forbid_extra_keys=True)


def _exactly(cls: type[T]) -> Callable[[Any, Any], T]:
    """A hook taking only a ``cls`` itself (cattrs' defaults would call ``str(1)``), and for
    ``int`` never a boolean, which is one to Python but not to JSON."""

    def hook(value: Any, _: Any) -> T:
        if not isinstance(value, cls) or (cls is int and isinstance(value, bool)):
            raise TypeError(f"expected {cls.__name__}, got {type(value).__name__}")
        return value

    return hook


def _id_hook(prefix: str) -> Callable[[Any, Any], int]:
    def hook(value: Any, _: Any) -> int:
        number = id_number(value, prefix) if isinstance(value, str) else None
        if number is None:
            raise ValueError(f"expected {prefix}<N> with N from 1 to {MAX_ID}")
        return number

    return hook


def _is_tuple_of(type_: Any) -> bool:
    return get_origin(type_) is tuple and get_args(type_)[1:] == (...,)


def _arrays(type_: Any, converter: cattrs.Converter) -> Callable[[Any, Any], tuple[Any, ...]]:
    """``tuple[X, ...]`` from a JSON array only (cattrs' default takes any iterable, so a
    string would become its letters)."""
    items = homogenous_tuple_structure_factory(type_, converter)

    def hook(value: Any, type_: Any) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            raise TypeError(f"expected an array, got {type(value).__name__}")
        found: tuple[Any, ...] = items(value, type_)
        return found

    return hook


CONVERTER.register_structure_hook_factory(_is_tuple_of, _arrays)
for _cls in (str, int, bool):
    CONVERTER.register_structure_hook(_cls, _exactly(_cls))
for _id_type, _prefix in ID_PREFIXES.items():
    CONVERTER.register_structure_hook(_id_type, _id_hook(_prefix))

_SITUATED = re.compile(r"^(?P<code>\w+) (?P<detail>.*) @ \$(?P<path>.*)$")
_MEMBER = re.compile(r"\.(\w+)")


def _describe(exc: BaseException, _type: Any) -> str:
    """Each leaf error as ``<code> <detail>``, for :func:`cattrs.transform_error` to situate."""
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"unknown {sorted(exc.extra_fields)[0]}"
    if isinstance(exc, KeyError):
        return "missing field"
    return f"type {exc}"


def _venom_error(exc: Exception, what: str) -> VenomError:
    """The first of cattrs' errors as the ``invalid_params.*`` of the param it is under."""
    first = cattrs.transform_error(exc, format_exception=_describe)[0]
    found = _SITUATED.match(first)
    if found is None:  # not one of the shapes _describe writes: still the caller's mistake
        return VenomError.param("type", "params", f"{what}: {first}")
    code, detail = found["code"], found["detail"]
    members = _MEMBER.findall(found["path"])  # "$.grants[0].scope": grants, scope
    if not members and code == "unknown":  # an extra key of the params object itself
        shown = detail.encode("utf-8", "backslashreplace").decode("utf-8")
        return VenomError.param("unknown", shown, f"{what} has no param {detail!r}")
    param = members[0] if members else "params"
    if code == "unknown":
        return VenomError.param("unknown", param, f"{param} has no member {detail!r}")
    if code == "missing":
        owner = f"an item of {param}" if len(members) > 1 else what
        return VenomError.param("missing", param, f"{owner} needs {members[-1]}")
    return VenomError.param("type", param, f"{param}: {detail}")


def structure(value: Any, cls: type[T], what: str) -> T:
    """``value`` as a ``cls``, or ``invalid_params.*`` naming the param (``what`` names the
    verb or section in the message)."""
    if not isinstance(value, Mapping):
        raise VenomError.param("type", "params", f"{what} must be an object")
    try:
        return CONVERTER.structure(value, cls)
    except VenomError:
        raise
    except Exception as exc:  # cattrs' ClassValidationError, or one leaf error
        raise _venom_error(exc, what) from None


def structure_command(verb: str, params: Mapping[str, Any]) -> Command:
    """The command of core verb ``verb`` from its checked params (a param named for a
    Python keyword fills the field :func:`~venom_mem_core.commands.field_name` gives it)."""
    if any(keyword.iskeyword(name) for name in params):
        params = {field_name(name): value for name, value in params.items()}
    return structure(params, COMMANDS[verb], verb)
