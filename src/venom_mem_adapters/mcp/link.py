"""The adapter's one connection to the daemon (RFC-0020 section 8, CONTRACT section 7).

- Lazy: nothing connects until the first tool call that needs the daemon, and that call may
  start it on demand (the launcher strips tokens from the daemon's environment).
- Held: the connection stays open while the adapter runs, so an on-demand daemon doesn't idle
  out under a harness.
- Lost replies: a request is never resent once the daemon could have received it. If the
  connection refuses the frame (the daemon went away between calls, so the send fails), the
  daemon never got a whole request (it acts only on a complete line) and the call is made once
  more on a new connection, starting a new daemon if needed. If the frame was accepted and
  the connection breaks before the reply, the call fails with ``unavailable.connection`` and
  the next call reconnects.

Standard library only; the protocols it meets are :mod:`.upstream`'s. Not thread-safe: the
server runs one call at a time, off its event loop.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST

TYPE_CHECKING = False  # typing costs the relay's start milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from .upstream import Wire

__all__ = [
    "CLIENT_NAME",
    "DaemonLink",
    "daemon_connector",
    "early_token_check",
    "lost_reply",
    "starts_daemon",
]

CLIENT_NAME = "venom-mem-mcp"
EARLY_HELLO_TIMEOUT_S = 3.0  # initialize must not wait long on a daemon that is stuck, but a
# loaded machine answers hello in over a second; harnesses wait 10 s or more for initialize
_RETRY_FIX = (
    "call again on purpose: memory.add, and session.start with harness_session, are safe to "
    "repeat; memory.update is protected by revision"
)


def daemon_connector(environ: Mapping[str, str]) -> Callable[[bool], Wire]:
    """Connect with ``VENOM_MEM_TOKEN`` from ``environ`` (the adapter's own), starting the
    daemon on demand when the verb being called may (RFC-0020 section 8's table)."""
    env = dict(environ)

    def open_wire(may_start: bool) -> Wire:
        from venom_mem_adapters.client import connect

        return connect(env, may_start=may_start, client=CLIENT_NAME)

    return open_wire


def early_token_check(
    environ: Mapping[str, str], *, protocol: str | None = None
) -> tuple[VenomError | None, Wire | None]:
    """At ``initialize``: is the adapter's token one the store will take?

    A malformed token is refused without any daemon. A well-formed one is tried with hello
    only when a daemon already serves the store (nothing is started before the first tool
    call that needs one, RFC-0020 section 8); the connection is kept for that call (said
    hello with ``protocol``, for the relay). A daemon that doesn't answer in time is left for
    the tool calls to report.
    """
    from venom_mem_adapters.client import check_startup_context, connect
    from venom_mem_core.token_text import well_formed

    token = environ.get("VENOM_MEM_TOKEN", "")
    if not token:
        return None, None
    try:
        check_startup_context(environ, token)
    except VenomError as error:
        return error, None
    if not well_formed(token):
        return (
            VenomError(
                "denied.token",
                "VENOM_MEM_TOKEN is not a venom-mem token (vnt1.venom-mem.g<N>.<43 characters>)",
                {"reason": "invalid", "fix": _NEW_TOKEN_FIX},
            ),
            None,
        )
    try:
        wire = connect(
            environ,
            may_start=False,
            client=CLIENT_NAME,
            hello_timeout_s=EARLY_HELLO_TIMEOUT_S,
            protocol=protocol,
        )
    except VenomError as error:
        if error.code.startswith(("denied.", "failed.")):
            return error, None
        return None, None  # not running, or not answering: the first tool call reports it
    except OSError:
        return None, None
    return None, wire


_NEW_TOKEN_FIX = (
    "in a terminal of your own: VENOM_MEM_TOKEN=@owner venom-mem setup <harness>, then "
    "register the printed token with the harness"
)


def lost_reply(verb: str, *, started: bool) -> VenomError:
    """A request sent whose connection broke before its reply (never resent)."""
    what = (
        f"the connection to the daemon broke before it answered {verb}; the request was not "
        "resent and may or may not have been applied"
    )
    if started:  # section 8, Lost replies: this call was starting the daemon
        return VenomError("unavailable.startup_result", what, {"fix": _RETRY_FIX})
    return VenomError("unavailable.connection", what, {"fix": _RETRY_FIX})


def starts_daemon(verb: str) -> bool:
    """Whether a call of ``verb`` may start the daemon (RFC-0020 section 8's table)."""
    found = MANIFEST.verb(verb)
    return found is not None and found.starts_daemon


class DaemonLink:
    """The held connection, opened on the first call."""

    def __init__(self, connector: Callable[[bool], Wire], wire: Wire | None = None) -> None:
        self._connector = connector
        self._wire = wire  # one opened at initialize, if any

    @property
    def connected(self) -> bool:
        return self._wire is not None

    def call(self, verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The ok object, or :class:`VenomError` (the daemon's, or a transport failure)."""
        from venom_mem_adapters.client import reply_budget_s

        may_start = starts_daemon(verb)
        wire = self._open(may_start)
        deadline = time.monotonic() + reply_budget_s(verb, params)
        try:
            request_id = wire.send(verb, params, deadline=deadline)
        except OSError:
            # Refused before the daemon could read a whole request: it went away between
            # calls. Once more, on a new connection (and a new daemon if needed).
            self._drop()
            wire = self._open(may_start)
            deadline = time.monotonic() + reply_budget_s(verb, params)
            try:
                request_id = wire.send(verb, params, deadline=deadline)
            except OSError as exc:
                self._drop()
                raise VenomError(
                    "unavailable.connection", f"could not send {verb} to the daemon: {exc}"
                ) from None
        except VenomError as error:
            if error.code == "unavailable.daemon_timeout":
                self._drop()  # part of the frame may be in the socket: this link is done
            # else refused locally (a frame over 1 MiB): nothing was sent, the link is intact
            raise
        except BaseException:
            self._drop()
            raise
        return self._reply(wire, verb, request_id, deadline)

    def close(self) -> None:
        self._drop()

    def _open(self, may_start: bool) -> Wire:
        if self._wire is None:
            try:
                self._wire = self._connector(may_start)
            except OSError as exc:
                raise VenomError(
                    "unavailable.connection", f"could not reach the daemon: {exc}"
                ) from None
        return self._wire

    def _drop(self) -> None:
        wire, self._wire = self._wire, None
        if wire is not None:
            with contextlib.suppress(OSError):
                wire.close()

    def _reply(self, wire: Wire, verb: str, request_id: int, deadline: float) -> dict[str, Any]:
        while True:
            reply = self._receive(wire, verb, deadline)
            reply_id = reply.get("id")
            if reply_id == request_id:
                break
            if reply_id is None:
                # The daemon refused the frame itself, and closes the connection.
                self._drop()
                error = reply.get("error")
                if isinstance(error, Mapping):
                    raise VenomError.from_json(error)
                raise lost_reply(verb, started=wire.started)
        if "error" in reply:
            error = reply["error"]
            raise VenomError.from_json(error if isinstance(error, Mapping) else {})
        ok = reply.get("ok")
        return ok if isinstance(ok, dict) else {}

    def _receive(self, wire: Wire, verb: str, deadline: float) -> dict[str, Any]:
        try:
            return wire.receive(deadline=deadline, verb=verb)
        except VenomError as exc:
            # A reply that comes after the deadline must not answer a later call: a timed-out
            # connection is dropped like a broken one, and the next call reconnects.
            self._drop()
            if exc.code in ("unavailable.connection", "unavailable.startup_result"):
                raise lost_reply(verb, started=wire.started) from None
            raise
        except OSError:
            self._drop()
            raise lost_reply(verb, started=wire.started) from None
        except ValueError:
            self._drop()
            raise VenomError(
                "failed.protocol", f"the daemon answered {verb} with a frame that isn't JSON"
            ) from None
        except BaseException:
            self._drop()
            raise
