"""The MCP tool catalog, generated from the manifest at runtime (CONTRACT section 7).

One tool per verb the manifest offers MCP (``Verb.mcp``: every verb the daemon answers but
``stop``, which is the human's; not ``hello``, the connection's own handshake, nor the CLI's
local verbs, docs/adr/0033). ``events`` is a one-shot tool: its CLI-only
``follow`` param is left out. The name is the verb's with ``_`` written ``_u`` and then ``.``
written ``_d`` (``memory.add`` is ``memory_dadd``). ``inputSchema`` is the params' JSON Schema,
the description is the verb's summary, and ``outputSchema`` is the result's shape when the
result is an object with members.

Output schemas are the result shapes with ``additionalProperties`` left open: the spec's
result shapes are closed, but a harness validates every structured result against the
schema it listed, and this adapter outlives daemon restarts. A newer daemon that adds a
member must not make a harness reject an otherwise valid result. Required members and types
stay checked.

``inputSchema`` carries every grammar of RFC-0020 sections 2, 3 and 7 the manifest writes
down (patterns, byte and item limits, uniqueness, ID shapes, enums, the rules between params;
ADR 0024), so a harness sees the rules it will be held to. Arguments are checked once, by the
manifest's own :func:`~venom_mem_core.params.check_params`, the check the CLI and the daemon
run, so all three report one mistake the same way; ``jsonschema`` is the tests' oracle that
the published schema and that check agree (tests/security/test_schema_oracle.py), not a second
validator here.

A catalog is sized to its caller (:data:`AUDIENCES`): a harness's context carries only the
tools its principal could ever call. A client token never holds admin or files, and the
unknown principal only reads (RFC-0020 sections 3 and 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST, T1_SENTENCE
from venom_mem_core.manifest_types import Manifest, Verb
from venom_mem_core.params import check_params, json_schema, params_schema
from venom_mem_core.token_text import OWNER_TOKEN

TYPE_CHECKING = False  # typing costs the relay's start milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AUDIENCES",
    "INSTRUCTIONS",
    "SERVER_NAME",
    "ToolSpec",
    "audience_for_principal",
    "audience_for_token",
    "build_catalog",
    "exposed_verbs",
    "no_such_tool",
    "tool_name",
    "verb_name",
]

SERVER_NAME = "venom-mem"
INSTRUCTIONS = (
    f"{MANIFEST.summary}. Use spaces `user` for what is true of this person everywhere and "
    f"`project/<repository directory name>` for one repository. {T1_SENTENCE}"
)
# Which rights' verbs each kind of caller is shown (None: verbs anyone may call).
AUDIENCES: Mapping[str, frozenset[str | None] | None] = {
    "owner": None,  # every tool
    "client": frozenset({None, "read", "write"}),
    "unknown": frozenset({None, "read"}),
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


class ToolSpec:
    """One tool: its verb (as exposed), schemas and argument check. Made once per catalog
    and never changed. A plain class: ``dataclasses`` (with ``inspect``) was a tenth of the
    relay's start (docs/adr/0038)."""

    __slots__ = ("description", "input_schema", "name", "output_schema", "read_only", "verb")

    def __init__(
        self,
        *,
        name: str,
        verb: Verb,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        read_only: bool,
    ) -> None:
        self.name = name
        self.verb = verb
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.read_only = read_only

    def __repr__(self) -> str:
        return f"ToolSpec(name={self.name!r})"

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

    def check(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The checked params (defaults filled in), or :class:`VenomError`
        ``invalid_params.*`` naming the param in ``data.param``."""
        return check_params(self.verb, dict(arguments or {}))


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


def no_such_tool(name: Any) -> VenomError:
    """A call to a tool no catalog has."""
    return VenomError("unsupported.verb", f"no tool named {name!r}", {"tool": name})


def audience_for_token(token: str) -> str:
    """Who a ``VENOM_MEM_TOKEN`` makes the adapter: ``owner``, ``client`` or ``unknown``."""
    if token == OWNER_TOKEN:
        return "owner"
    return "client" if token else "unknown"


def audience_for_principal(principal: str) -> str:
    """Who a principal that said hello is, for the daemon's MCP sessions: the same three
    audiences, so a relay's listing before and after its daemon answers is one listing."""
    if principal in ("owner", "unknown"):
        return principal
    return "client"


def exposed_verbs(manifest: Manifest, audience: str = "owner") -> Iterable[Verb]:
    """The verbs that become tools for ``audience``, in manifest order."""
    rights = AUDIENCES[audience]
    for verb in manifest.verbs:
        if not verb.mcp:
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
            read_only=verb.read_only,
        )
        catalog[spec.name] = spec
    return catalog
