"""A client for the daemon: connect (starting it on demand), hello, call verbs.

Standard library only, so ``venom-mem ... --json`` stays close to the cost of a bare socket
request. Other Python tools can use it directly::

    from venom_mem_adapters.client import connect
    with connect() as conn:
        conn.call("memory.search", {"query": "zig version"})

``call`` returns the ok object or raises :class:`VenomError` with the daemon's code.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from collections.abc import Mapping
from types import TracebackType

from venom_mem_core.errors import VenomError

from .runtime_paths import socket_path
from .wire import MAX_FRAME, decode_frame, encode_frame

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Connection", "connect", "startup_settings"]

OWNER_TOKEN = "@owner"
_NOT_RUNNING = (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTDIR)
# A daemon that is stopping may have accepted a connection it will never answer: hello
# has no effect, so it is tried again (and a new daemon started) a few times.
HELLO_ATTEMPTS = 3


class Connection:
    """One authenticated connection. Not thread-safe: one call at a time."""

    def __init__(self, sock: socket.socket, hello: dict[str, Any]) -> None:
        self._sock = sock
        self._file = sock.makefile("rb")
        self._next_id = 2
        self.hello = hello
        self.started = False  # launched the daemon, and no reply has come back yet

    @property
    def principal(self) -> str:
        return str(self.hello.get("principal", ""))

    def send(self, verb: str, params: Mapping[str, Any] | None = None) -> int:
        request_id = self._next_id
        self._next_id += 1
        frame = encode_frame({"id": request_id, "verb": verb, "params": dict(params or {})})
        if len(frame) > MAX_FRAME:
            raise VenomError.param("range", "params", "the request is larger than 1 MiB")
        self._sock.sendall(frame)
        return request_id

    def receive(self) -> dict[str, Any]:
        line = self._file.readline(MAX_FRAME + 1)
        if not line.endswith(b"\n"):
            raise VenomError("unavailable.connection", "the daemon closed the connection")
        reply = decode_frame(line[:-1])
        if not isinstance(reply, dict):
            raise VenomError("failed.protocol", "the daemon sent something that isn't an object")
        self.started = False  # answered: a reply lost later is not the starting call's
        return reply

    def call(self, verb: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply. Never resends (RFC-0020 section 8): a
        lost reply is ``unavailable.startup_result`` when this caller started the daemon,
        else ``unavailable.connection``; either way the request may or may not have run."""
        try:
            request_id = self.send(verb, params)
            while True:
                reply = self.receive()
                if reply.get("id") in (request_id, None):
                    break
        except OSError as exc:
            raise self._lost(str(exc)) from None
        except VenomError as error:
            if error.code != "unavailable.connection":
                raise
            raise self._lost(error.message) from None
        if "error" in reply:
            raise VenomError.from_json(reply["error"])
        ok = reply.get("ok")
        return ok if isinstance(ok, dict) else {}

    def _lost(self, why: str) -> VenomError:
        what = f"{why}; the request may or may not have been applied"
        if self.started:
            return VenomError(
                "unavailable.startup_result",
                f"the daemon this call started went away before answering: {what}",
            )
        return VenomError("unavailable.connection", what)

    def close(self) -> None:
        self._file.close()
        self._sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _open_socket(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as exc:
        sock.close()
        if exc.errno in _NOT_RUNNING:
            return None
        raise VenomError(
            "unavailable.not_running", f"cannot reach the daemon at {path}: {exc.strerror}"
        ) from None
    return sock


def _hello(sock: socket.socket, token: str, client: str, *, started: bool) -> Connection:
    params: dict[str, Any] = {"client": client}
    if token:
        params["auth"] = {"token": token}
    conn = Connection(sock, {})
    try:
        sock.sendall(encode_frame({"id": 1, "verb": "hello", "params": params}))
        reply = conn.receive()
    except OSError as exc:
        conn.close()
        raise VenomError("unavailable.connection", f"hello failed: {exc}") from None
    except VenomError:
        conn.close()
        raise
    if "error" in reply:
        conn.close()
        raise VenomError.from_json(reply["error"])
    conn.hello = reply.get("ok") or {}
    conn.started = started  # set after hello's reply, which would have cleared it
    return conn


def startup_settings(environ: Mapping[str, str]) -> tuple[str, float]:
    """``daemon.startup`` and ``daemon.startup_timeout_ms`` (in seconds) from the config."""
    from .config_file import default_config_path, load_config

    config = load_config(default_config_path(environ))
    return config.daemon.startup, config.daemon.startup_timeout_ms / 1000


def check_startup_context(environ: Mapping[str, str], token: str) -> None:
    """``@owner`` below a process manager is refused before anything connects or launches."""
    # "Set" as the shell means it: an empty VENOM_MANAGER= is still the marker.
    if token == OWNER_TOKEN and ("VENOM_MANAGER" in environ or "VENOM_MEM_PRINCIPAL" in environ):
        raise VenomError(
            "denied.startup_context",
            "@owner is refused below a process manager",
            {"fix": "set VENOM_MEM_TOKEN to a client token; venom-mem client add creates one"},
        )


def connect(
    environ: Mapping[str, str] | None = None,
    *,
    may_start: bool = True,
    client: str = "venom-mem-cli",
    token: str | None = None,
) -> Connection:
    """Connect and say hello with ``VENOM_MEM_TOKEN`` (or ``token``), launching the daemon
    first when it isn't running and ``may_start`` allows."""
    env = os.environ if environ is None else environ
    token = env.get("VENOM_MEM_TOKEN", "") if token is None else token
    check_startup_context(env, token)
    path = socket_path(env)
    attempt = 1
    while True:
        sock = _open_socket(path)
        started = sock is None
        if sock is None:
            if not may_start:
                raise VenomError(
                    "unavailable.not_running",
                    f"no daemon is running at {path}",
                    {"fix": "venom-mem serve"},
                )
            sock = _start_and_connect(env, path)
        try:
            return _hello(sock, token, client, started=started)
        except VenomError as error:
            if error.code != "unavailable.connection" or attempt == HELLO_ATTEMPTS:
                raise
        time.sleep(0.05 * attempt)  # the stopping daemon removes its socket first
        attempt += 1


def _start_and_connect(environ: Mapping[str, str], path: str) -> socket.socket:
    from .launcher import launch

    startup, timeout_s = startup_settings(environ)
    if startup == "explicit":
        raise VenomError(
            "unavailable.not_running",
            f"no daemon is running at {path}, and daemon.startup is explicit",
            {"fix": "venom-mem serve"},
        )
    deadline = time.monotonic() + timeout_s
    while True:
        word = launch(environ, max(deadline - time.monotonic(), 0.05))
        # "ready", or "lost": another candidate holds the lock and may still be binding, or an
        # old daemon is on its way out. Wait a little, then try again, until the deadline.
        patience = deadline if word == "ready" else min(deadline, time.monotonic() + 0.5)
        while True:
            sock = _open_socket(path)
            if sock is not None:
                return sock
            if time.monotonic() >= patience:
                break
            time.sleep(0.005)
        if time.monotonic() >= deadline:
            raise VenomError(
                "unavailable.startup_timeout",
                f"the daemon did not answer at {path} within {timeout_s * 1000:.0f} ms",
                {"fix": "venom-mem serve  # run it in the foreground to see why"},
            )
