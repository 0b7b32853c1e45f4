"""The MCP tool catalog, generated from the manifest at runtime (CONTRACT section 7).

One tool per verb that runs on the daemon, except ``hello`` (the connection's own handshake)
and the local verbs (``serve``, ``mcp``). ``events`` is a one-shot tool: its CLI-only
``follow`` param is left out. The name is the verb's with ``_`` written ``_u`` and then ``.``
written ``_d`` (``memory.add`` is ``memory_dadd``). ``inputSchema`` is the params' JSON Schema,
the description is the verb's summary, and ``outputSchema`` is the result's shape when the
result is an object with members.

Output schemas are the result shapes with ``additionalProperties`` left open: the spec's
result shapes are closed, but a harness validates every structured result against the
schema it listed, and this adapter outlives daemon restarts. A newer daemon that adds a
member must not make a harness reject an otherwise valid result. Required members and types
stay checked.

Arguments are checked twice before anything reaches the daemon: by a Draft 2020-12 validator
built on a tool's first call, whose first error is mapped to the generic ``invalid_params.*``
codes, and then by the manifest's own :func:`~venom_mem_core.params.check_params`, the check
the CLI and the daemon run, so all three report one mistake the same way.

A catalog is sized to its caller (:data:`AUDIENCES`): a harness's context carries only the
tools its principal could ever call. A client token never holds admin or files, and the
unknown principal only reads (RFC-0020 sections 3 and 4).

Nothing here imports ``jsonschema`` until a tool is called: ``initialize`` and
``tools/list`` are answered from this catalog within the adapter's start-up budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST, T1_SENTENCE
from venom_mem_core.manifest_types import Manifest, Verb
from venom_mem_core.params import check_params, json_schema, params_schema
from venom_mem_core.usecases.verbs import VERBS

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

__all__ = [
    "AUDIENCES",
    "EXCLUDED_VERBS",
    "INSTRUCTIONS",
    "SERVER_NAME",
    "ToolSpec",
    "audience_for_token",
    "build_catalog",
    "exposed_verbs",
    "schema_error",
    "tool_name",
    "verb_name",
]

SERVER_NAME = "venom-mem"
INSTRUCTIONS = (
    f"{MANIFEST.summary}. Use spaces `user` for what is true of this person everywhere and "
    f"`project/<repository directory name>` for one repository. {T1_SENTENCE}"
)
# hello is the connection's own handshake; stop is the human's (an agent must not end the
# daemon every other harness shares, even as the owner).
EXCLUDED_VERBS = frozenset({"hello", "serve", "mcp", "stop"})
# Which rights' verbs each kind of caller is shown (None: verbs anyone may call).
AUDIENCES: Mapping[str, frozenset[str | None] | None] = {
    "owner": None,  # every tool
    "client": frozenset({None, "read", "write"}),
    "unknown": frozenset({None, "read"}),
}

_RANGE_KEYWORDS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
    }
)
_JSON_TYPE_NAMES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def tool_name(verb: str) -> str:
    """``memory.add`` is ``memory_dadd``; ``a_b.c`` is ``a_ub_dc`` (reversible)."""
    return verb.replace("_", "_u").replace(".", "_d")


def verb_name(tool: str) -> str:
    """The inverse of :func:`tool_name`."""
    out: list[str] = []
    chars = iter(tool)
    for ch in chars:
        if ch != "_":
            out.append(ch)
            continue
        escape = next(chars, "")
        if escape == "u":
            out.append("_")
        elif escape == "d":
            out.append(".")
        else:
            raise ValueError(f"{tool!r} is not a tool name")
    return "".join(out)


@dataclasses.dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its verb (as exposed), schemas and argument check."""

    name: str
    verb: Verb
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    read_only: bool
    _validator: list[Any] = dataclasses.field(default_factory=list, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The tool as ``tools/list`` carries it."""
        tool: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        tool["annotations"] = {"readOnlyHint": self.read_only, "openWorldHint": False}
        return tool

    @property
    def validator(self) -> Any:
        """The Draft 2020-12 validator, built on first use (``jsonschema`` costs ~0.5 s)."""
        if not self._validator:
            from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

            self._validator.append(Draft202012Validator(self.input_schema))
        return self._validator[0]

    def check(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The checked params (defaults filled in), or :class:`VenomError`
        ``invalid_params.*`` naming the param in ``data.param``."""
        from jsonschema.exceptions import best_match

        args: dict[str, Any] = dict(arguments or {})
        error: ValidationError | None = best_match(self.validator.iter_errors(args))
        if error is not None:
            raise _refine(self.verb, args, schema_error(self.verb, error))
        return check_params(self.verb, args)


def schema_error(verb: Verb, error: ValidationError) -> VenomError:
    """Map a JSON Schema validation error to the generic ``invalid_params.*`` codes."""
    path = list(error.absolute_path)
    top = str(path[0]) if path else None
    keyword = str(error.validator)
    instance = error.instance
    if keyword == "additionalProperties" and isinstance(instance, Mapping):
        known = error.schema.get("properties", {})
        extra = sorted(str(k) for k in instance if k not in known)
        name = extra[0] if extra else "?"
        if top is None:
            return VenomError.param("unknown", name, f"{verb.name} has no param {name!r}")
        return VenomError.param("unknown", top, f"{top} has no member {name!r}")
    if keyword == "required" and isinstance(instance, Mapping):
        missing = [str(n) for n in error.validator_value if n not in instance]
        name = missing[0] if missing else "?"
        if top is None:
            return VenomError.param("missing", name, f"{verb.name} needs {name}")
        return VenomError.param("missing", top, f"{top} needs {name}")
    param = top or "params"
    if keyword in _RANGE_KEYWORDS:
        return VenomError.param("range", param, f"{param} is out of range: {error.message}")
    if keyword == "type":
        found = _JSON_TYPE_NAMES.get(type(instance), type(instance).__name__)
        expected = error.validator_value
        if isinstance(expected, list):
            expected = " or ".join(str(e) for e in expected)
        return VenomError.param("type", param, f"{param} must be {expected}, got {found}")
    if keyword == "enum":
        choices = ", ".join(str(c) for c in error.validator_value)
        return VenomError.param("type", param, f"{param} must be one of {choices}")
    return VenomError.param("type", param, f"{param} is not valid: {error.message}")


def _refine(verb: Verb, args: dict[str, Any], mapped: VenomError) -> VenomError:
    """Prefer the manifest check's code when it blames the same param: it knows the codes
    the generic mapping can't (a bad ``relation`` is ``invalid_params.relation``)."""
    try:
        check_params(verb, args)
    except VenomError as exc:
        same_param = exc.data.get("param") == mapped.data.get("param")
        if exc.code.startswith("invalid_params.") and same_param:
            return exc
    return mapped


def _output_schema(verb: Verb) -> dict[str, Any] | None:
    result = verb.result
    if result.kind != "object" or result.open or not result.fields:
        return None
    opened: dict[str, Any] = _opened(json_schema(result))
    return opened


def _opened(schema: Any) -> Any:
    """A copy without ``additionalProperties: false`` anywhere (see the module docstring)."""
    if isinstance(schema, dict):
        return {
            key: _opened(value)
            for key, value in schema.items()
            if not (key == "additionalProperties" and value is False)
        }
    if isinstance(schema, list):
        return [_opened(item) for item in schema]
    return schema


def _exposed(verb: Verb) -> Verb:
    """The verb as a tool: without the CLI's own switches (``follow`` means nothing in one
    tool call)."""
    if not any(p.cli_only for p in verb.params):
        return verb
    return verb.replace(params=tuple(p for p in verb.params if not p.cli_only))


def audience_for_token(token: str) -> str:
    """Who a ``VENOM_MEM_TOKEN`` makes the adapter: ``owner``, ``client`` or ``unknown``."""
    if token == "@owner":
        return "owner"
    return "client" if token else "unknown"


def exposed_verbs(manifest: Manifest, audience: str = "owner") -> Iterable[Verb]:
    """The verbs that become tools for ``audience``, in manifest order."""
    rights = AUDIENCES[audience]
    for verb in manifest.verbs:
        if verb.name not in VERBS or verb.name in EXCLUDED_VERBS:  # served by no daemon
            continue
        if rights is not None and verb.right not in rights:
            continue
        yield _exposed(verb)


def build_catalog(manifest: Manifest, audience: str = "owner") -> dict[str, ToolSpec]:
    """Every tool ``audience`` could call, by name."""
    catalog: dict[str, ToolSpec] = {}
    for verb in exposed_verbs(manifest, audience):
        spec = ToolSpec(
            name=tool_name(verb.name),
            verb=verb,
            description=verb.summary,
            input_schema=params_schema(verb),
            output_schema=_output_schema(verb),
            read_only=VERBS[verb.name].read_only,
        )
        catalog[spec.name] = spec
    return catalog
