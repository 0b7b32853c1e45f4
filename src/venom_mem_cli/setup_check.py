"""``venom-mem setup --check``: per harness, whether it is fully set up (ADR 0036).

For each harness asked about (every one found on PATH when none is named): whether venom-mem
is registered in its user config, as which client (``whoami`` with the registered token),
whether the harness itself reports it connected (its own ``mcp list``: Claude Code and
opencode start the server and say "Connected"/"connected"; Codex 0.171's list starts
nothing and says "enabled", so there the registered token answering ``whoami`` is the
connection), and whether what else the steps set is there (the context hook, Codex's keys,
opencode's file mode).
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from venom_mem_core.errors import VenomError

from .harness_edits import CODEX_KEYS, HOOK_MARK, has_hook, registered
from .harness_files import config_paths, read_bytes
from .harness_setup import HARNESSES, SERVER
from .setup_apply import harness_binary, run_harness, token_principal

__all__ = ["check_setup", "render_check"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _listed(binary: str, harness: str, environ: Mapping[str, str]) -> bool:
    argv = [binary, "mcp", "list"] + (["--json"] if harness == "codex" else [])
    try:
        done = run_harness(argv, environ)
    except VenomError:
        return False
    out = _ANSI.sub("", done.stdout + done.stderr)
    if harness == "claude-code":
        return re.search(rf"^{SERVER}: .*- ✔ Connected", out, re.MULTILINE) is not None
    if harness == "opencode":
        return re.search(rf"{SERVER}\s+connected", out) is not None
    try:
        servers = json.loads(done.stdout)
    except ValueError:
        return False
    return any(s.get("name") == SERVER and s.get("enabled") is True for s in servers)


def _trusted(binary: str, paths: Mapping[str, Path], environ: Mapping[str, str]) -> bool:
    """Whether Codex lists venom-mem's session-start hook as trusted (ADR 0044)."""
    from .codex_hooks import listed_hooks

    mark = HOOK_MARK + "codex"
    try:
        hooks = listed_hooks(binary, environ)
    except VenomError:
        return False
    return any(
        mark in str(hook.get("command"))
        and hook.get("sourcePath") == str(paths["hooks"])
        and hook.get("trustStatus") == "trusted"
        for hook in hooks
    )


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode(errors="replace")


def _check_one(harness: str, environ: Mapping[str, str]) -> dict[str, Any]:
    paths = config_paths(harness, environ)
    binary = harness_binary(harness, environ)
    found = registered(harness, _text(read_bytes(paths["registration"])))
    who = token_principal(found.token, environ) if found is not None and found.token else None
    row: dict[str, Any] = {
        "harness": harness,
        "found": binary is not None,
        "registered": found is not None,
        "client": who.get("label") if who else None,
        "principal": who.get("principal") if who else None,
        "connected": bool(binary and found and who and _listed(binary, harness, environ)),
    }
    if "hooks" in paths:
        settings = _text(read_bytes(paths["hooks"])) or "{}"
        row["hook"] = has_hook(json.loads(settings), harness)
    if harness == "codex":
        import tomlkit

        text = _text(read_bytes(paths["registration"])) or ""
        table = tomlkit.parse(text).unwrap().get("mcp_servers", {}).get(SERVER, {})
        row["keys"] = all(table.get(key) == value for key, value in CODEX_KEYS.items())
        row["trusted"] = bool(binary and row["hook"] and _trusted(binary, paths, environ))
    if harness == "opencode":
        from .opencode_plugin import PLUGIN_MARK

        plugin = _text(read_bytes(paths["plugin"])) or ""
        row["hook"] = plugin.startswith(PLUGIN_MARK)  # its context hook is the plugin
        config = paths["registration"]
        row["private"] = config.exists() and stat.S_IMODE(config.stat().st_mode) == 0o600
    checks = [v for k, v in row.items() if k not in ("harness", "client", "principal")]
    row["ok"] = all(checks)
    return row


def check_setup(harnesses: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any]:
    asked = list(harnesses) or [h for h in HARNESSES if harness_binary(h, environ)]
    rows = [_check_one(name, environ) for name in asked]
    return {"harnesses": rows, "ok": bool(rows) and all(row["ok"] for row in rows)}


def _cell(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "NO"
    return "-" if value is None else str(value)


def render_check(result: Mapping[str, Any]) -> str:
    columns = ("harness", "found", "registered", "client", "connected", "hook", "trusted", "keys",
               "private")  # fmt: skip
    rows = result["harnesses"]
    shown = [c for c in columns if any(c in row for row in rows)]
    table = [shown] + [[_cell(row.get(c, "n/a")) for c in shown] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(shown))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
             for line in table]  # fmt: skip
    if not rows:
        lines.append("no harness found on PATH (claude, codex, opencode)")
    lines += [
        f"{row['harness']}: hook installed, not yet trusted (Codex asks at its next interactive "
        "start, /hooks; or venom-mem setup codex --apply records it)"
        for row in rows
        if row.get("hook") is True and row.get("trusted") is False
    ]
    verdict = (
        "every harness is set up"
        if result["ok"]
        else "not set up: venom-mem setup "
        + " ".join(row["harness"] for row in rows if not row["ok"])
        + " --apply"
    )
    return "\n".join([*lines, "", verdict]) + "\n"
