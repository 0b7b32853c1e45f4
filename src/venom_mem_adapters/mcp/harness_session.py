"""The harness session an adapter serves, named on its writes (ADR 0036).

Claude Code 2.1 launches a stdio MCP server with ``CLAUDE_CODE_SESSION_ID`` in its
environment (measured in the binary's launch code and by tests/integration/
test_setup_apply.py): the same ID its SessionStart hook hands ``session hook``. So the
adapter can say which venom-mem session a ``memory.add`` came from when the agent did not:
``session.start`` with that ID is the session the hook recorded (it returns the same one for
the same harness session), made once per adapter and named on each ``memory.add`` that
names none. Codex 0.171 and opencode 1.18 hand their MCP servers no session ID.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from venom_mem_core.errors import VenomError

TYPE_CHECKING = False  # typing costs the relay's start milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from .upstream import Upstream

__all__ = ["HARNESS_SESSION_VARS", "NAMED_VERBS", "SessionNaming", "served_session"]

# The variable a harness sets for its MCP servers, and the harness it names.
HARNESS_SESSION_VARS = {"CLAUDE_CODE_SESSION_ID": "claude-code"}
NAMED_VERBS = frozenset({"memory.add"})


def served_session(environ: Mapping[str, str]) -> dict[str, Any] | None:
    """``session.start``'s params for the harness session ``environ`` names (with this
    process's working directory), or None where the harness names none. The in-process
    adapter starts it itself; the relay hands it to the daemon's MCP session at hello."""
    for var, harness in HARNESS_SESSION_VARS.items():
        if environ.get(var):
            params: dict[str, Any] = {"harness": harness, "harness_session": environ[var]}
            cwd = os.getcwd()
            if os.path.isabs(cwd):
                params["cwd"] = cwd
            return params
    return None


class SessionNaming:
    """An :class:`Upstream` that names the harness's session on writes that name none."""

    def __init__(self, upstream: Upstream, environ: Mapping[str, str]) -> None:
        self._upstream = upstream
        self._start = served_session(environ)
        self._session: str | None = None

    def _session_id(self) -> str | None:
        if self._session is None and self._start is not None:
            try:
                self._session = str(self._upstream.call("session.start", self._start)["session"])
            except VenomError:
                self._start = None  # refused once (a read-only token): don't ask again
        return self._session

    def call(self, verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if verb in NAMED_VERBS and "session" not in params:
            session = self._session_id()
            if session is not None:
                params = {**params, "session": session}
        return self._upstream.call(verb, params)

    def close(self) -> None:
        self._upstream.close()
