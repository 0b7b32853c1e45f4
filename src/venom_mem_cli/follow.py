"""``venom-mem events --follow``: stream events, one JSON line each, until interrupted.

It calls ``events`` again and again with the last reply's cursor and a long-poll ``wait_ms``,
so a new event is printed as soon as the daemon has it. Snapshot entities (the first reply,
and again after the daemon restarted) are printed first, one line each, before the events.
Output is JSON lines with ``--json`` (CONTRACT section 8); without it, one readable line
per event (local time, type, resource, data). Like ``events``, it
never starts a daemon, so with none running it fails at once; once streaming, a daemon that
goes away is waited for until interrupted (an on-demand daemon comes back when some other
command starts it), and the stale cursor then brings a snapshot.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest_types import Verb
from venom_mem_core.params import check_params

if TYPE_CHECKING:
    from venom_mem_adapters.client import Connection

__all__ = ["POLL_WAIT_MS", "follow", "run_follow"]

POLL_WAIT_MS = 20_000
_RECONNECT_PAUSE_S = (0.1, 1.0)  # the first retry, and the longest pause between retries
_LOST = ("unavailable.connection", "unavailable.not_running")


def _write_line(obj: Mapping[str, Any], out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")


def _human_line(full: bool) -> Callable[[Mapping[str, Any], TextIO], None]:
    from .cells import Clock, event_line

    clock = Clock()

    def write(obj: Mapping[str, Any], out: TextIO) -> None:
        clock.now = datetime.now(UTC)
        out.write(event_line(dict(obj), clock, full=full) + "\n")

    return write


def _call(conn: Connection, verb: Verb, request: dict[str, Any]) -> dict[str, Any]:
    try:
        return conn.call(verb.name, check_params(verb, request))
    except OSError as exc:  # the socket broke mid-call
        raise VenomError("unavailable.connection", f"lost the daemon: {exc}") from None


def follow(
    verb: Verb,
    params: Mapping[str, Any],
    environ: Mapping[str, str],
    out: TextIO = sys.stdout,
    *,
    max_calls: int | None = None,
    write: Callable[[Mapping[str, Any], TextIO], None] = _write_line,
) -> None:
    """Stream until interrupted (or ``max_calls`` replies, for tests). Raises VenomError."""
    from venom_mem_adapters.client import connect

    base = {k: v for k, v in params.items() if k != "after"}
    base.setdefault("wait_ms", POLL_WAIT_MS)
    cursor = params.get("after")
    calls = 0
    conn: Connection | None = None
    pause = _RECONNECT_PAUSE_S[0]
    try:
        while max_calls is None or calls < max_calls:
            request = dict(base)
            if cursor:
                request["after"] = cursor
            try:
                if conn is None:
                    conn = connect(environ, may_start=False)
                reply = _call(conn, verb, request)
            except VenomError as error:
                # Once streaming, a daemon that went away is waited for, "until interrupted"
                # (CONTRACT section 8): a restarted one answers the old cursor with a snapshot.
                if error.code not in _LOST or calls == 0:
                    raise
                if conn is not None:
                    conn.close()
                    conn = None
                time.sleep(pause)
                pause = min(pause * 2, _RECONNECT_PAUSE_S[1])
                continue
            pause = _RECONNECT_PAUSE_S[0]
            calls += 1
            for entity in reply.get("snapshot") or []:
                write(entity, out)
            for event in reply.get("events") or []:
                write(event, out)
            out.flush()
            cursor = reply.get("cursor") or cursor
    finally:
        if conn is not None:
            conn.close()


def run_follow(
    verb: Verb,
    params: Mapping[str, Any],
    as_json: bool,
    environ: Mapping[str, str],
    *,
    full_times: bool = False,
) -> int:
    """The command: stream, and turn the end into an exit code. Raises VenomError."""
    check_params(verb, params)  # a bad flag fails before any connection
    try:
        follow(verb, params, environ, write=_write_line if as_json else _human_line(full_times))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`events --follow | head`): a normal end. Point stdout at the
        # null device so the interpreter's last flush doesn't complain.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0
