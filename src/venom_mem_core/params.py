"""Request params checked against the manifest before any handler runs.

Unknown params are ``invalid_params.unknown``, missing required ones
``invalid_params.missing``, wrong JSON types ``invalid_params.type``, numbers and counts out of
bounds ``invalid_params.range``; each names the param in ``data.param``. Defaults are filled in.
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import VenomError
from .ids import id_number
from .manifest_types import Type, Verb

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["check_params", "json_schema"]

# A value outside a param's choices gets the spec's specific code where it has one.
_CHOICE_CODES = {"relation": "relation"}

_JSON_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
    "object": "object",
}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _check_value(value: Any, type_: Type, param: str) -> Any:
    found = _type_name(value)
    if type_.kind == "any":
        return value
    if type_.kind == "object" and type_.fields and isinstance(value, dict):
        return _check_object(value, type_, param)
    if value is None and type_.nullable:
        return None
    expected = type_.kind
    ok = found == expected or (expected == "number" and found == "integer")
    if not ok:
        raise VenomError.param("type", param, f"{param} must be {expected}, got {found}")
    if expected == "string":
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise VenomError.param("type", param, f"{param} is not valid UTF-8 text") from None
    if expected == "string" and type_.id_prefix and id_number(value, type_.id_prefix) is None:
        raise VenomError.param(
            "type", param, f"{param} must look like {type_.id_prefix}<N>, got {value!r}"
        )
    if expected == "string" and type_.choices and value not in type_.choices:
        raise VenomError.param(
            _CHOICE_CODES.get(param, "type"),
            param,
            f"{param} must be one of {', '.join(type_.choices)}",
        )
    if expected == "integer":
        if type_.min is not None and value < type_.min:
            raise VenomError.param("range", param, f"{param} must be at least {type_.min}")
        if type_.max is not None and value > type_.max:
            raise VenomError.param("range", param, f"{param} must be at most {type_.max}")
    if expected == "array":
        if type_.max_items is not None and len(value) > type_.max_items:
            raise VenomError.param("range", param, f"{param} has more than {type_.max_items} items")
        if type_.items is not None:
            return [_check_value(item, type_.items, param) for item in value]
    return value


def _check_object(value: dict[str, Any], type_: Type, param: str) -> dict[str, Any]:
    known = {f.name: f for f in type_.fields}
    for name in value:
        if name not in known:
            raise VenomError.param("unknown", param, f"{param} has no member {name!r}")
    out: dict[str, Any] = {}
    for f in type_.fields:
        if f.name in value:
            out[f.name] = _check_value(value[f.name], f.type, param)
        elif f.required:
            raise VenomError.param("missing", param, f"{param} needs {f.name}")
    return out


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
            out[p.name] = _check_value(params[p.name], p.type, p.name)
        elif p.required:
            raise VenomError.param("missing", p.name, f"{verb.name} needs {p.name}")
        elif p.default is not None:
            out[p.name] = p.default
    return out


def json_schema(type_: Type) -> dict[str, Any]:
    """JSON Schema for a manifest type (for MCP ``inputSchema``/``outputSchema``)."""
    if type_.kind == "any":
        return {}
    schema: dict[str, Any] = {"type": _JSON_TYPES[type_.kind]}
    if type_.nullable:
        schema["type"] = [schema["type"], "null"]
    if type_.choices:
        schema["enum"] = list(type_.choices)
    if type_.min is not None:
        schema["minimum"] = type_.min
    if type_.max is not None:
        schema["maximum"] = type_.max
    if type_.max_items is not None:
        schema["maxItems"] = type_.max_items
    if type_.items is not None:
        schema["items"] = json_schema(type_.items)
    if type_.kind == "object" and not type_.open:
        schema["properties"] = {f.name: json_schema(f.type) for f in type_.fields}
        schema["required"] = [f.name for f in type_.fields if f.required]
        schema["additionalProperties"] = False
    return schema


def params_schema(verb: Verb) -> dict[str, Any]:
    """The JSON Schema of a verb's params object."""
    props: dict[str, Any] = {}
    for p in verb.params:
        s = json_schema(p.type)
        s["description"] = p.summary
        if p.default is not None:
            s["default"] = p.default
        props[p.name] = s
    return {
        "type": "object",
        "properties": props,
        "required": [p.name for p in verb.params if p.required],
        "additionalProperties": False,
    }
