"""``venom-mem session hook --harness H``: what a harness's session-start hook runs
(``setup --apply`` installs it; ADR 0036).

Claude Code hands a SessionStart hook a JSON object on stdin: ``session_id``, ``cwd``,
``source`` (startup, resume, clear, compact), ``transcript_path``. The hook:

1. records the session: ``session.start`` with the harness's own ID, so a resumed or
   compacted session (Claude Code keeps its ID then) is the same venom-mem session and a
   new one gets one of its own, without the agent starting sessions itself. Where the
   harness names the session a new one came from (``parent_session_id``; Claude Code 2.1
   names none), it is recorded as a ``continue`` of it;
2. prints the memory context of the session's directory, as ``memory context --here``
   does: what a hook prints on stdout is added to the session's context.

It speaks with the token the harness's own registration of venom-mem holds (one copy of
the credential, in the harness's user config, gone with ``setup --remove``), or
``VENOM_MEM_TOKEN`` when set. A write that is refused costs only the record: the context
is a read. Whatever goes wrong, it prints nothing on stdout and exits 0, so no session is
held up by venom-mem.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from venom_mem_core.errors import VenomError

__all__ = ["hook_token", "run_session_hook"]

_STDIN_LIMIT = 1 << 20
_CONTINUED = ("resume", "compact")


def hook_token(harness: str, environ: Mapping[str, str]) -> str:
    """``VENOM_MEM_TOKEN`` when set, else the token of the harness's registration."""
    if "VENOM_MEM_TOKEN" in environ:
        return environ["VENOM_MEM_TOKEN"]
    from .harness_edits import registered
    from .harness_files import config_paths, read_bytes

    data = read_bytes(config_paths(harness, environ)["registration"])
    found = registered(harness, None if data is None else data.decode(errors="replace"))
    return (found.token if found is not None else None) or ""


def _stdin() -> dict[str, Any]:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        data = json.loads(sys.stdin.read(_STDIN_LIMIT) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _session_params(harness: str, given: Mapping[str, Any], cwd: str) -> dict[str, Any] | None:
    session_id = given.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return None
    params: dict[str, Any] = {"harness": harness, "harness_session": session_id}
    if os.path.isabs(cwd):
        params["cwd"] = cwd
    return params


def _record(conn: Any, harness: str, given: Mapping[str, Any], cwd: str) -> dict[str, Any] | None:
    params = _session_params(harness, given, cwd)
    if params is None:
        return None
    parent_id = given.get("parent_session_id")
    if given.get("source") in _CONTINUED and isinstance(parent_id, str) and parent_id:
        parent = conn.call("session.start", {"harness": harness, "harness_session": parent_id})
        params.update(parent=parent["session"], relation="continue")
    started: dict[str, Any] = conn.call("session.start", params)
    return started


def run_session_hook(harness: str, environ: Mapping[str, str]) -> int:
    from venom_mem_adapters.client import connect

    from .here import apply_here

    given = _stdin()
    cwd = given.get("cwd") if isinstance(given.get("cwd"), str) else os.getcwd()
    assert isinstance(cwd, str)
    try:
        with connect(environ, token=hook_token(harness, environ)) as conn:
            try:
                _record(conn, harness, given, cwd)
            except VenomError as error:  # a read-only token still gets the context
                print(f"venom-mem: session not recorded: {error.code}", file=sys.stderr)
            params = apply_here("memory.context", {}, cwd if os.path.isdir(cwd) else None)
            context = conn.call("memory.context", params)
    except VenomError as error:
        print(f"venom-mem: {error.code}: {error.message}", file=sys.stderr)
        return 0
    sys.stdout.write(context["text"])
    return 0
