"""The edits ``setup --apply`` makes inside a harness's files where the harness has no
command for them, as pure functions from text to text (ADR 0036):

- Codex's two keys in ``[mcp_servers.venom-mem]`` of ``config.toml``, through tomlkit, which
  round-trips a document: every comment, blank line and key order stays as it was.
- A session-start hook in a JSON settings file of the shape Claude Code and Codex share
  (``{"hooks": {"SessionStart": [{"matcher": ..., "hooks": [{"type": "command", ...}]}]}}``),
  found again by its command, so a second run adds nothing and ``--remove`` takes out only
  its own entry.
- Reading what a harness registered (command, args, environment), opencode's JSONC included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import tomlkit
from tomlkit.items import Table

from venom_mem_core.errors import VenomError

__all__ = [
    "CODEX_KEYS",
    "HOOK_MARK",
    "Registered",
    "codex_keeping_text",
    "codex_with_keys",
    "codex_with_trust",
    "codex_without_keys",
    "codex_without_trust",
    "has_hook",
    "load_jsonc",
    "registered",
    "with_hook",
    "without_hook",
]

SERVER = "venom-mem"
# What Codex needs beyond `codex mcp add` (docs/mcp-setup.md): wait for the tools, and
# let a non-interactive `codex exec` call them.
CODEX_KEYS: dict[str, Any] = {"required": True, "default_tools_approval_mode": "approve"}
HOOK_MARK = " session hook --harness "  # in every hook command setup installs
HOOK_TIMEOUT_S = 10


def _server_table(doc: tomlkit.TOMLDocument) -> Table | None:
    servers = doc.get("mcp_servers")
    table = servers.get(SERVER) if isinstance(servers, Table) else None
    return table if isinstance(table, Table) else None


def codex_with_keys(text: str) -> str:
    """``config.toml`` with :data:`CODEX_KEYS` set in the venom-mem table ``codex mcp add``
    wrote, placed after its ``args`` so the table reads as the docs show it."""
    doc = tomlkit.parse(text)
    table = _server_table(doc)
    if table is None:
        raise VenomError(
            "failed.harness",
            f"no [mcp_servers.{SERVER}] table in Codex's config.toml after codex mcp add",
        )
    for key, value in CODEX_KEYS.items():
        if table.get(key) != value:
            table[key] = value
    return tomlkit.dumps(doc)


def codex_keeping_text(before: str, after: str) -> str:
    """``before`` with venom-mem's table as Codex's own command left it in ``after``.

    ``codex mcp add`` and ``remove`` (0.171) rewrite every ``[mcp_servers.*]`` table and
    drop the comments in them; the command stays the authority on what the table holds,
    and tomlkit puts that into the document as the person wrote it. Should the two differ
    in anything else, Codex's text is kept."""
    doc, theirs = tomlkit.parse(before), tomlkit.parse(after)
    table = _server_table(theirs)
    servers = doc.get("mcp_servers")
    if table is not None:
        if not isinstance(servers, Table):
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        servers[SERVER] = table
    elif isinstance(servers, Table) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del doc["mcp_servers"]
    merged = tomlkit.dumps(doc)
    return merged if tomlkit.parse(merged).unwrap() == theirs.unwrap() else after


def codex_without_keys(text: str) -> str:
    doc = tomlkit.parse(text)
    table = _server_table(doc)
    if table is not None:
        for key in CODEX_KEYS:
            if key in table:
                del table[key]
    return tomlkit.dumps(doc)


_JSONC_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def load_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas, as opencode reads it: comments and trailing
    commas go, strings stay whole."""

    def keep_strings(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token.startswith('"') else ""

    return json.loads(_JSONC_TOKENS.sub(keep_strings, text)) if text.strip() else {}


class Registered:
    """venom-mem's entry in a harness's registration file: how it is launched, with which
    environment."""

    def __init__(self, argv: list[str], env: Mapping[str, str]) -> None:
        self.argv = argv
        self.env = dict(env)

    @property
    def token(self) -> str | None:
        return self.env.get("VENOM_MEM_TOKEN")


def registered(harness: str, text: str | None) -> Registered | None:
    """What ``harness``'s registration file says of venom-mem, or ``None``."""
    if not text:
        return None
    if harness == "codex":
        table = _server_table(tomlkit.parse(text))
        if table is None:
            return None
        plain = table.unwrap()
        return Registered([plain.get("command", ""), *plain.get("args", [])], plain.get("env", {}))
    data = load_jsonc(text)
    if harness == "claude-code":
        entry = (data.get("mcpServers") or {}).get(SERVER)
        if not isinstance(entry, dict):
            return None
        return Registered([entry.get("command", ""), *entry.get("args", [])], entry.get("env", {}))
    entry = (data.get("mcp") or {}).get(SERVER)
    if not isinstance(entry, dict):
        return None
    return Registered(list(entry.get("command", [])), entry.get("environment", {}))


def _entries(settings: Mapping[str, Any]) -> list[Any]:
    hooks = settings.get("hooks")
    found = hooks.get("SessionStart") if isinstance(hooks, dict) else None
    return found if isinstance(found, list) else []


def _is_ours(group: Any, command: str) -> bool:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(inner, list) and any(
        isinstance(h, dict) and h.get("command") == command for h in inner
    )


def has_hook(settings: Mapping[str, Any], harness: str) -> bool:
    """Whether a session-start hook of venom-mem's for ``harness`` is there (whatever
    path of venom-mem it runs)."""
    mark = HOOK_MARK + harness
    return any(
        isinstance(h, dict) and mark in str(h.get("command", ""))
        for group in _entries(settings)
        if isinstance(group, dict)
        for h in (group.get("hooks") or [])
    )


def hook_command(executable: str, harness: str) -> str:
    # `|| true`: a session must start when venom-mem is gone; the hook itself never fails.
    return f"{executable}{HOOK_MARK}{harness} 2>/dev/null || true"


def with_hook(text: str | None, command: str, matcher: str) -> str | None:
    """The settings text with the hook added, or ``None`` when it is there already. Other
    keys and hooks stay in their order; written as Claude Code writes it (two spaces)."""
    settings: dict[str, Any] = json.loads(text) if text and text.strip() else {}
    if any(_is_ours(group, command) for group in _entries(settings)):
        return None
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise VenomError("failed.harness", "the settings file's hooks is not an object")
    group = {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}],
    }
    hooks.setdefault("SessionStart", []).append(group)
    return json.dumps(settings, indent=2) + "\n"


def without_hook(text: str, harness: str) -> str | None:
    """The settings text without venom-mem's hooks for ``harness`` (and without the
    containers that leaves empty), or ``None`` when there were none."""
    settings: dict[str, Any] = json.loads(text) if text.strip() else {}
    if not has_hook(settings, harness):
        return None
    mark = HOOK_MARK + harness
    groups = []
    for group in _entries(settings):
        inner = [h for h in group.get("hooks", []) if mark not in str(h.get("command", ""))]
        if inner:
            groups.append({**group, "hooks": inner})
    hooks = settings["hooks"]
    if groups:
        hooks["SessionStart"] = groups
    else:
        del hooks["SessionStart"]
    if not hooks:
        del settings["hooks"]
    return json.dumps(settings, indent=2) + "\n"


def _hook_states(doc: tomlkit.TOMLDocument, *, make: bool) -> Table | None:
    hooks = doc.get("hooks")
    if hooks is None and make:
        hooks = doc["hooks"] = tomlkit.table(is_super_table=True)
    state = hooks.get("state") if isinstance(hooks, Table) else None
    if state is None and make and isinstance(hooks, Table):
        state = hooks["state"] = tomlkit.table(is_super_table=True)
    return state if isinstance(state, Table) else None


def codex_with_trust(text: str, key: str, trusted_hash: str) -> str:
    """``config.toml`` recording the person's trust in one hook, as Codex records it
    (``[hooks.state."<key>"] trusted_hash``), the rest of the document as it was."""
    doc = tomlkit.parse(text)
    state = _hook_states(doc, make=True)
    assert state is not None
    entry = state.get(key)
    if isinstance(entry, Table):
        entry["trusted_hash"] = trusted_hash
    else:
        made = tomlkit.table()
        made["trusted_hash"] = trusted_hash
        state[key] = made
    return tomlkit.dumps(doc)


def codex_without_trust(text: str, key: str) -> str:
    """``config.toml`` without the trust of hook ``key`` (and the tables that leaves empty)."""
    doc = tomlkit.parse(text)
    state = _hook_states(doc, make=False)
    if state is None or key not in state:
        return text
    entry = state[key]
    if isinstance(entry, Table):
        entry.pop("trusted_hash", None)
    if not isinstance(entry, Table) or not entry:
        del state[key]
    hooks = doc["hooks"]
    if isinstance(hooks, Table) and not state:
        del hooks["state"]
    if isinstance(hooks, Table) and not hooks:
        del doc["hooks"]
    return tomlkit.dumps(doc)
