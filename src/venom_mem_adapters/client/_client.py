"""A client for the daemon: find it (starting it on demand), check it, hello, call verbs.

Standard library only, so ``venom-mem ... --json`` stays close to the cost of a bare socket
request. Other Python tools can use it directly::

    from venom_mem_adapters.client import connect
    with connect() as conn:
        conn.call("memory.search", {"query": "zig version"})

``call`` returns the ok object or raises :class:`VenomError` with the daemon's code.

Finding the daemon (CONTRACT section 1): the caller's own socket first; when nothing answers
there, the socket named in the store's daemon record (a harness that filtered this
process's environment may have started the daemon elsewhere); only then a launch, and if the
launch finds the store locked by a daemon that is still starting, its record once written.
Every socket is checked before a byte is written to it (:mod:`.socket_trust`).

Every wait has a deadline: connecting and ``hello`` within :data:`HELLO_TIMEOUT_S`, each
reply within its verb's budget from the manifest, so a daemon that stopped answering gives
``unavailable.daemon_timeout`` instead of a hang.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
import time
from collections.abc import Mapping

from venom_mem_core.errors import VenomError

from ..closing import ClosesOnExit
from . import _socket_trust as socket_trust
from ._locator import DaemonLocator, check_startup_context
from ._wire import MAX_FRAME, decode_frame, encode_frame, take_line

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from venom_mem_core.config import Config

__all__ = [
    "Connection",
    "DaemonLocator",
    "check_startup_context",
    "connect",
    "daemon_timeout",
    "reply_budget_s",
    "startup_settings",
]

_NOT_RUNNING = (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTDIR)
# A daemon that is stopping may have accepted a connection it will never answer: hello
# has no effect, so it is tried again (and a new daemon started) a few times.
HELLO_ATTEMPTS = 3
HELLO_TIMEOUT_S = 5.0  # connect and hello together, on a daemon that is already serving
_RECV_BYTES = 65536


def reply_budget_s(verb: str, params: Mapping[str, Any] | None = None) -> float:
    """How long a reply to ``verb`` may take: the manifest's budget for the verb, plus a
    long poll's own ``wait_ms`` when it asks for one."""
    from venom_mem_core.manifest import MANIFEST

    found = MANIFEST.verb(verb)
    budget_ms = found.reply_budget_ms if found is not None else 30_000
    # A caller's params may be any JSON (the daemon refuses a non-object with
    # invalid_params.type); only an object can ask for a long poll.
    wait = params.get("wait_ms") if isinstance(params, Mapping) else None
    if isinstance(wait, int) and not isinstance(wait, bool) and wait > 0:
        budget_ms += wait
    return budget_ms / 1000


class Connection(ClosesOnExit):
    """One authenticated connection. Not thread-safe: one call at a time."""

    def __init__(
        self, sock: socket.socket, hello: dict[str, Any], *, path: str = "", pid: int = 0
    ) -> None:
        self._sock = sock
        self._buffer = bytearray()
        self._next_id = 2
        self.hello = hello
        self.path = path
        self.pid = pid  # the daemon's, from SO_PEERCRED
        self.started = False  # launched the daemon, and no reply has come back yet
        self._since = time.monotonic()  # when the wait being timed began

    @property
    def principal(self) -> str:
        return str(self.hello.get("principal", ""))

    def send(
        self, verb: str, params: Mapping[str, Any] | None = None, *, deadline: float | None = None
    ) -> int:
        request_id = self._next_id
        self._next_id += 1
        # Anything but an object goes as it is, for the daemon to refuse: dict() would turn
        # ["m1"] into {"m": "1"} and send a request nobody wrote.
        sent = {} if params is None else dict(params) if isinstance(params, Mapping) else params
        frame = encode_frame({"id": request_id, "verb": verb, "params": sent})
        if len(frame) > MAX_FRAME:
            raise VenomError.param("range", "params", "the request is larger than 1 MiB")
        self._since = time.monotonic()
        self._settimeout(deadline, verb)
        try:
            self._sock.sendall(frame)
        except TimeoutError:
            raise self._timed_out(verb, deadline) from None
        return request_id

    def receive(self, *, deadline: float | None = None, verb: str = "") -> dict[str, Any]:
        """The next frame, by ``deadline`` (a ``time.monotonic()`` value) when one is given."""
        line = self._read_line(deadline, verb)
        reply = decode_frame(line[:-1])
        if not isinstance(reply, dict):
            raise VenomError("failed.protocol", "the daemon sent something that isn't an object")
        self.started = False  # answered: a reply lost later is not the starting call's
        return reply

    def _read_line(self, deadline: float | None, verb: str) -> bytes:
        while True:
            line = take_line(self._buffer)
            if line is not None:
                return line
            if len(self._buffer) >= MAX_FRAME:
                raise VenomError("failed.protocol", "the daemon sent a frame over 1 MiB")
            self._settimeout(deadline, verb)
            try:
                chunk = self._sock.recv(_RECV_BYTES)
            except TimeoutError:
                raise self._timed_out(verb, deadline) from None
            if not chunk:
                raise VenomError("unavailable.connection", "the daemon closed the connection")
            self._buffer += chunk

    def _settimeout(self, deadline: float | None, verb: str) -> None:
        if deadline is None:
            self._sock.settimeout(None)
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._timed_out(verb, deadline)
        self._sock.settimeout(remaining)

    def _timed_out(self, verb: str, deadline: float | None) -> VenomError:
        return daemon_timeout(self.path, self.pid, verb, time.monotonic() - self._since)

    def call(
        self,
        verb: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """Send one request and wait for its reply, at most ``timeout_s`` (by default the
        verb's budget, :func:`reply_budget_s`). Never resends (RFC-0020 section 8): a lost
        reply is ``unavailable.startup_result`` when this caller started the daemon, else
        ``unavailable.connection``; either way the request may or may not have run. After
        ``unavailable.daemon_timeout`` the connection is closed."""
        budget = reply_budget_s(verb, params) if timeout_s is None else timeout_s
        deadline = time.monotonic() + budget
        try:
            request_id = self.send(verb, params, deadline=deadline)
            while True:
                reply = self.receive(deadline=deadline, verb=verb)
                if reply.get("id") in (request_id, None):
                    break
        except OSError as exc:
            raise self._lost(str(exc)) from None
        except VenomError as error:
            if error.code == "unavailable.daemon_timeout":
                self.close()
                raise
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
        self._sock.close()

    def detach(self) -> tuple[socket.socket, bytes]:
        """The socket, blocking, and the bytes already read past the last frame taken: the
        connection is the caller's from here (an MCP session speaks its own framing)."""
        self._sock.settimeout(None)
        rest = bytes(self._buffer)
        self._buffer.clear()
        return self._sock, rest


def daemon_timeout(path: str, pid: int, verb: str, waited_s: float) -> VenomError:
    """``unavailable.daemon_timeout``: a daemon is there but did not answer in time."""
    what = f" {verb}" if verb else ""
    who = f"the daemon at {path}" + (f" (pid {pid})" if pid else "")
    if pid:
        fix = (
            f"ps -o pid,stat,etime,cmd -p {pid}  # T means stopped: kill -CONT {pid}; "
            f"if it is stuck, kill {pid} and the next call starts a new daemon"
        )
    else:
        fix = "venom-mem doctor  # then stop the stuck daemon; the next call starts a new one"
    data: dict[str, Any] = {"socket": path, "waited_ms": max(0, round(waited_s * 1000)), "fix": fix}
    return VenomError(
        "unavailable.daemon_timeout",
        f"{who} did not answer{what} in time; the request may or may not have been applied",
        data,
    )


def open_trusted(path: str, deadline: float) -> tuple[socket.socket, int] | None:
    """A connected socket and the daemon's pid, ``None`` when nothing serves ``path``, or
    ``failed.socket`` when what serves it isn't ours (nothing is written to it)."""
    socket_trust.check_socket_dir(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    began = time.monotonic()
    try:
        sock.settimeout(max(deadline - began, 0.001))
        sock.connect(path)
    except TimeoutError:
        sock.close()
        raise daemon_timeout(path, 0, "connect", time.monotonic() - began) from None
    except OSError as exc:
        sock.close()
        if exc.errno in _NOT_RUNNING:
            return None
        raise VenomError(
            "unavailable.not_running", f"cannot reach the daemon at {path}: {exc.strerror}"
        ) from None
    try:
        pid = socket_trust.check_peer(sock, path)
    except BaseException:
        sock.close()
        raise
    return sock, pid


def _hello(
    found: tuple[socket.socket, int],
    path: str,
    token: str,
    client: str,
    *,
    started: bool,
    deadline: float,
    protocol: str | None = None,
    harness_session: Mapping[str, Any] | None = None,
) -> Connection:
    sock, pid = found
    params: dict[str, Any] = {"client": client}
    if token:
        params["auth"] = {"token": token}
    if protocol is not None:
        params["protocol"] = protocol
    if harness_session is not None:
        params["harness_session"] = dict(harness_session)
    conn = Connection(sock, {}, path=path, pid=pid)
    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(encode_frame({"id": 1, "verb": "hello", "params": params}))
        reply = conn.receive(deadline=deadline, verb="hello")
    except TimeoutError:
        conn.close()
        raise conn._timed_out("hello", deadline) from None
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


def startup_settings(config: Config) -> tuple[str, float]:
    """``daemon.startup`` and ``daemon.startup_timeout_ms`` (in seconds)."""
    return config.daemon.startup, config.daemon.startup_timeout_ms / 1000


def _let_standby_go() -> None:
    """A standby this process spawned (``_launcher``) is let go at its first connection to
    a daemon: a launch has taken it by then, or none will need it. Only a process that
    loaded the launcher can hold one, so any other loads nothing for this."""
    launcher = sys.modules.get(f"{__package__}._launcher")
    if launcher is not None:
        launcher.dismiss_standby()


def connect(
    environ: Mapping[str, str] | None = None,
    *,
    may_start: bool = True,
    client: str = "venom-mem-cli",
    token: str | None = None,
    hello_timeout_s: float = HELLO_TIMEOUT_S,
    protocol: str | None = None,
    harness_session: Mapping[str, Any] | None = None,
) -> Connection:
    """Connect and say hello with ``VENOM_MEM_TOKEN`` (or ``token``), launching the daemon
    first when none serves this store and ``may_start`` allows. ``protocol="mcp"`` asks
    for the connection to become an MCP session (:meth:`Connection.detach` hands it over),
    naming ``harness_session`` (session.start's params) on its memory.add calls."""
    env = os.environ if environ is None else environ
    token = env.get("VENOM_MEM_TOKEN", "") if token is None else token
    check_startup_context(env, token)
    locator = DaemonLocator(env)
    attempt = 1
    while True:
        deadline = time.monotonic() + hello_timeout_s
        path, found, started = _find(locator, may_start, deadline)
        _let_standby_go()  # a daemon answers: a launch took the standby, or none will need it
        if started:  # the launch had its own deadline; hello gets a fresh one
            deadline = time.monotonic() + hello_timeout_s
        try:
            return _hello(
                found,
                path,
                token,
                client,
                started=started,
                deadline=deadline,
                protocol=protocol,
                harness_session=harness_session,
            )
        except VenomError as error:
            if error.code != "unavailable.connection" or attempt == HELLO_ATTEMPTS:
                raise
        time.sleep(0.05 * attempt)  # the stopping daemon removes its socket first
        attempt += 1


def _serving(
    locator: DaemonLocator, deadline: float
) -> tuple[str, tuple[socket.socket, int]] | None:
    """A daemon that answers at our own socket, else at the one the store's record names."""
    path = locator.socket()
    found = open_trusted(path, deadline)
    if found is not None:
        return path, found
    recorded = locator.recorded_socket()
    if recorded is not None:
        found = open_trusted(recorded, deadline)
        if found is not None:
            return recorded, found
    return None


def _find(
    locator: DaemonLocator, may_start: bool, deadline: float
) -> tuple[str, tuple[socket.socket, int], bool]:
    """The socket to say hello on: ours, the store's recorded one, or a new daemon's."""
    serving = _serving(locator, deadline)
    if serving is not None:
        return (*serving, False)
    path = locator.socket()
    if not may_start:
        raise VenomError(
            "unavailable.not_running",
            f"no daemon is running at {path}",
            {"fix": "venom-mem serve"},
        )
    return (*_start_and_connect(locator, path), True)


def _start_and_connect(locator: DaemonLocator, path: str) -> tuple[str, tuple[socket.socket, int]]:
    from ._launcher import launch, standby_go

    # A standby goes before this process reads the config: it reads it itself, and leaves
    # without a word when the config makes starts explicit (_launcher).
    going = standby_go()
    startup, timeout_s = startup_settings(locator.config())
    if startup == "explicit":
        if going is not None:
            going.abandon()
        raise VenomError(
            "unavailable.not_running",
            f"no daemon is running at {path}, and daemon.startup is explicit",
            {"fix": "venom-mem serve"},
        )
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            word = launch(locator.environ, max(deadline - time.monotonic(), 0.05), going)
            going = None  # a standby serves the first launch only
        except VenomError as error:
            if error.code != "conflict.store_locked":
                raise
            # A daemon on another socket holds the store (a harness launched it with another
            # environment): it writes its record once it listens. Wait for that.
            word = "elsewhere"
        # "ready", or "lost": another candidate holds the lock and may still be binding, or an
        # old daemon is on its way out. Wait a little, then try again, until the deadline.
        patience = deadline if word in ("ready", "elsewhere") else time.monotonic() + 0.5
        patience = min(patience, deadline)
        while True:
            serving = _serving(locator, deadline)
            if serving is not None:
                return serving
            if time.monotonic() >= patience:
                break
            time.sleep(0.005)
        if time.monotonic() >= deadline:
            raise VenomError(
                "unavailable.startup_timeout",
                f"the daemon did not answer at {path} within {timeout_s * 1000:.0f} ms",
                {"fix": "venom-mem serve  # run it in the foreground to see why"},
            )
