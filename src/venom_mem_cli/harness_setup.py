"""``venom-mem setup <harness>...``: the human's one-time setup, done right (ADR 0021).

For each harness it creates a client of its own (read and write on ``*``), so every memory
records which harness wrote it, and prints the exact command that registers venom-mem with
that harness: the token, the absolute path of this ``venom-mem``, and the settings the
harness needs. It edits no harness file (RFC-0020 section 14: the human runs the lines).

The lines are the ones the tests run against the real harness CLIs (Claude Code 2.1, Codex
0.171, opencode 1.18): see tests/integration/test_harness_clis.py.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST

__all__ = ["HARNESSES", "registration", "run_setup", "venom_mem_path"]


def _setup_harnesses() -> tuple[str, ...]:
    """The harnesses ``setup`` knows: the choices of its manifest param."""
    verb = MANIFEST.verb("setup")
    param = verb.param("harnesses") if verb is not None else None
    items = param.type.items if param is not None else None
    assert items is not None, "the manifest's setup verb takes harnesses"
    return items.choices


HARNESSES = _setup_harnesses()
SERVER = "venom-mem"
CLIENT_GRANTS = [{"right": "read", "scope": "*"}, {"right": "write", "scope": "*"}]
# Variables that decide which store and config an adapter resolves. A harness launches
# the adapter with an environment of its own, so those the human has set are passed on.
_LOCATION_VARS = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "VENOM_MEM_CONFIG")


def venom_mem_path() -> str:
    """The absolute path of the ``venom-mem`` being run, for the harness to launch."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "venom-mem":
        return os.path.abspath(argv0)
    beside = os.path.join(os.path.dirname(sys.executable), "venom-mem")
    return beside if os.path.exists(beside) else "venom-mem"


def _location_env(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(key, environ[key]) for key in _LOCATION_VARS if environ.get(key)]


def _step(kind: str, *lines: str) -> dict[str, Any]:
    return {"kind": kind, "lines": list(lines)}


def steps(harness: str, executable: str) -> list[dict[str, Any]]:
    """The steps after the registration command, in the words both modes print: ``kind``
    says what ``--apply`` does for it (``note``: nothing, it is for the person)."""
    from .harness_edits import hook_command

    hook = hook_command(executable, harness)
    if harness == "claude-code":
        return [
            _step(
                "hook",
                "add a SessionStart hook to ~/.claude/settings.json (memory in every session):",
                f"  {hook}",
            ),
            _step("note", "claude mcp list  # shows venom-mem as Connected"),
            _step(
                "note",
                "for claude -p in scripts: MCP_CONNECTION_NONBLOCKING=false makes it wait for "
                "venom-mem's tools; --allowedTools mcp__venom-mem__memory_dadd,... lets it call "
                "them",
            ),
        ]
    if harness == "codex":
        return [
            _step(
                "codex_keys",
                f"add to the [mcp_servers.{SERVER}] table it wrote in ~/.codex/config.toml:",
                "  required = true  # codex exec waits for venom-mem's tools before it starts",
                '  default_tools_approval_mode = "approve"  # or "prompt" to confirm each call',
            ),
            _step(
                "hook",
                "add a SessionStart hook to ~/.codex/hooks.json (memory in every session):",
                f"  {hook}",
            ),
            _step(
                "codex_trust",
                "trust that hook: Codex runs it only then (/hooks at its next interactive start; "
                "codex exec never asks). --apply records the trust of this one hook in "
                "~/.codex/config.toml with the hash Codex gives for it",
            ),
            _step("note", "codex mcp list  # shows venom-mem enabled"),
        ]
    if harness == "opencode":
        return [
            _step(
                "chmod",
                "chmod 600 ~/.config/opencode/opencode.jsonc  # opencode writes it 0644, and "
                "the token is in it",
            ),
            _step(
                "plugin",
                "add a plugin to ~/.config/opencode/plugins/venom-mem.js (memory in every "
                "session; docs/context.md shows it). With a plugin there, opencode waits at "
                "its start for the @opencode-ai/plugin it fetches from npm into "
                "~/.config/opencode (this plugin needs none of it; --remove takes out what "
                "that fetch added)",
            ),
            _step("note", "opencode mcp list  # shows venom-mem connected"),
        ]
    raise VenomError.param("type", "harnesses", f"unknown harness {harness!r}")


def registration(
    harness: str, token: str, executable: str, environ: Mapping[str, str]
) -> dict[str, Any]:
    """What to run for ``harness``: ``command`` (argv), ``steps`` (what follows it, by
    kind), and ``then`` (those steps' lines, as printed)."""
    env = [("VENOM_MEM_TOKEN", token), *_location_env(environ)]
    launch = ["--", executable, "mcp"]
    flag = "-e" if harness == "claude-code" else "--env"
    flags = [part for key, value in env for part in (flag, f"{key}={value}")]
    if harness == "claude-code":
        command = ["claude", "mcp", "add", "--scope", "user", SERVER, *flags, *launch]
    elif harness in ("codex", "opencode"):
        command = [harness, "mcp", "add", SERVER, *flags, *launch]
    else:
        raise VenomError.param("type", "harnesses", f"unknown harness {harness!r}")
    after = steps(harness, executable)
    return {
        "command": command,
        "steps": after,
        "then": [line for step in after for line in step["lines"]],
    }


def _check_names_free(conn: Any, names: Sequence[str], *, replace: bool) -> None:
    """Refuse before creating anything: a token made and never shown would be lost."""
    existing = {entry["client"] for entry in conn.call("client.list", {})["clients"]}
    taken = [name for name in names if name in existing]
    if taken and not replace:
        raise VenomError(
            "conflict.client_exists",
            f"a client named {', '.join(taken)} exists; nothing was changed",
            {"fix": f"venom-mem setup {' '.join(names)} --replace  # old tokens stop working"},
        )
    for name in taken:
        conn.call("client.remove", {"name": name})


def run_setup(
    harnesses: Sequence[str], *, replace: bool, environ: Mapping[str, str]
) -> dict[str, Any]:
    """Create the clients and return what to run, per harness. Owner only: it speaks as
    ``@owner``, which is refused below a process manager (``denied.startup_context``)."""
    from venom_mem_adapters.client import connect

    unknown = [name for name in harnesses if name not in HARNESSES]
    if unknown or not harnesses:
        raise VenomError.param(
            "type",
            "harnesses",
            f"name one or more of {', '.join(HARNESSES)}"
            + (f"; got {', '.join(unknown)}" if unknown else ""),
        )
    executable = venom_mem_path()
    done: list[dict[str, Any]] = []
    names = list(dict.fromkeys(harnesses))
    with connect(environ, token="@owner") as conn:
        _check_names_free(conn, names, replace=replace)
        for name in names:
            client = conn.call("client.add", {"name": name, "grants": CLIENT_GRANTS})
            done.append(
                {
                    "harness": name,
                    "client": client["client"],
                    "principal": client["principal"],
                    "token": client["token"],
                    **registration(name, client["token"], executable, environ),
                }
            )
    result: dict[str, Any] = {"executable": executable, "harnesses": done}
    if f"{os.sep}.venv{os.sep}" in executable or "/site-packages/" in executable:
        result["warning"] = (
            f"{executable} is inside a project's virtual environment; harnesses stop working if "
            "it moves. For daily use install it once: uv tool install <path to the venom-mem "
            "clone> (or pipx install <path>), then run venom-mem setup again with --replace."
        )
    return result


def render_setup(result: Mapping[str, Any]) -> str:
    """The human text: one block per harness, commands exactly as they are to be run."""
    lines = [
        "Each harness has its own client, so every memory records which harness wrote it.",
        "Tokens are shown once. Run these yourself (venom-mem edits no harness file), or run "
        "the same command with --apply to have them done.",
        "Register in the harness's user config only, never in a project file that gets committed.",
    ]
    for entry in result["harnesses"]:
        lines += ["", f"{entry['harness']}  (client {entry['client']}, {entry['principal']})"]
        lines.append("  " + shlex.join(entry["command"]))
        lines += [f"  {step}" for step in entry["then"]]
    if result.get("warning"):
        lines += ["", f"note: {result['warning']}"]
    return "\n".join(lines) + "\n"
