"""``venom-mem mcp``: a relay of lines between a harness's stdio and an MCP session that the
daemon serves (docs/adr/0038, :mod:`venom_mem_adapters.daemon.mcp_session`).

Standard library only: neither the SDK, pydantic nor anyio is loaded in this process (a
test asserts the modules loaded), so an adapter costs a few MiB and starts in the time the
interpreter does. The relay reads each line with ``json`` and does only what a pipe can't:

- Until the first message that needs the daemon, the front door (:mod:`.front`) answers
  ``initialize`` (failing it for a bad token, ADR 0020), ``tools/list`` and ``ping`` from
  the manifest, and nothing starts a daemon.
- Then it connects, starting the daemon for a ``tools/call`` whose verb may (RFC-0020
  section 8's table) and for anything else the SDK must answer, says hello with its token
  and ``protocol: "mcp"``, replays the harness's ``initialize`` (under an id of its own,
  whose answer it drops) and ``notifications/initialized``, and from then on copies lines.
- Until that session has answered the replayed ``initialize``, tool calls go over plain
  venom-mem frames (the bridge: :class:`.link.DaemonLink` under
  :class:`.harness_session.SessionNaming`, as the in-process adapter makes them), answered
  as the SDK's server answers them (:func:`ok_result`; a test compares the wire), and the
  session opens beside them once the bridge has reached a daemon. So the first result
  waits for the daemon's start, never for its first import of the SDK (over a second of
  CPU). Every message is taken in the order it came: what needs the session (anything but
  a tool call) waits for it, and what comes after waits behind that.
- ``ping`` is always answered here: it asks whether this process is alive.
- A request the session hasn't answered within its budget (a tool call: its verb's reply
  budget from the manifest) gets its answer here, a tool error
  ``unavailable.daemon_timeout`` or a JSON-RPC error; the session is sent
  ``notifications/cancelled`` for it, and a late answer is dropped.
- The daemon's connection ending (a restart, a crash) fails the requests it had not
  answered (``unavailable.connection``, or ``unavailable.startup_result`` for the call that
  started it: RFC-0020 section 8, lost replies; never resent), and the next message opens a
  new session with the replay, so the harness's session goes on. A line refused by a
  connection that went away between messages was never read, and goes once more on a new
  one.
- A message over 1 MiB is refused here, as the daemon would refuse the frame.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping

from venom_mem_core.errors import VenomError

from ..client import MAX_FRAME, take_line
from .front import FrontDoor, Handover
from .link import CLIENT_NAME, lost_reply, starts_daemon
from .tools import no_such_tool

TYPE_CHECKING = False  # typing costs the relay's start milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from .tools import ToolSpec

    Connector = Callable[[bool], Any]  # may_start -> a hello'd client.Connection
    Bridge = Callable[[], Any]  # -> a new upstream.Upstream of plain venom-mem frames

__all__ = ["Relay", "refusal_text", "run_relay"]

# A request that isn't a tool call (tools/list, resources/list, ...): the SDK answers it
# without the store.
OTHER_BUDGET_S = 10.0
# Connecting (a launch included) has its own deadlines; this is the session's own start,
# the daemon's first import of the SDK among it (about a second, more on a loaded machine).
SESSION_START_S = 30.0
# A bridged call's own link times out at its budget and names the daemon's pid; the relay's
# watch answers only if that link hangs past it.
BRIDGE_GRACE_S = 2.0
_RECV_BYTES = 65536
_RELAY_FAILED = -32000  # as the front door's refused initialize
_RESTART_FIX = "VENOM_MEM_TOKEN=@owner venom-mem restart  # a daemon of this version serves MCP"


def ok_result(ok: Mapping[str, Any]) -> dict[str, Any]:
    """A successful call's result, as the SDK's server gives it (``mcp.server.ok_result``;
    a test compares the two on the wire)."""
    text = json.dumps(ok, ensure_ascii=False, separators=(",", ":"))
    return {"content": [{"type": "text", "text": text}], "isError": False,
            "structuredContent": ok}  # fmt: skip


def refusal_text(error: VenomError) -> str:
    """How a failure reads in a JSON-RPC error's message (and on stderr)."""
    fix = error.data.get("fix")
    return f"venom-mem: {error.code}: {error.message}" + (f" (fix: {fix})" if fix else "")


def _dumps(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _is_request(message: Mapping[str, Any]) -> bool:
    return isinstance(message.get("method"), str) and message.get("id") is not None


def _tool_verb(message: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The verb and arguments of a ``tools/call``, when its name is a tool name."""
    from .tools import verb_name

    params = message.get("params")
    if message.get("method") != "tools/call" or not isinstance(params, Mapping):
        return None
    name = params.get("name")
    if not isinstance(name, str):
        return None
    try:
        return verb_name(name), params.get("arguments")
    except ValueError:
        return None


class _Pending:
    """A harness request not answered yet: sent on ``via``, or (``None``) waiting in the
    relay's queue or made over the bridge."""

    def __init__(self, tool: bool, verb: str, deadline: float, via: _Session | None) -> None:
        self.tool = tool
        self.verb = verb
        self.deadline = deadline
        self.via = via
        self.sent = time.monotonic()


class _Session:
    """One connection to the daemon's MCP session."""

    def __init__(self, sock: socket.socket, rest: bytes, *, path: str, pid: int, started: bool):
        self.sock = sock
        self.buffer = bytearray(rest)
        self.path = path
        self.pid = pid
        self.started = started  # launched the daemon, and no harness request is answered
        self.send_lock = threading.Lock()
        self.closed = False

    def send(self, data: bytes) -> None:
        with self.send_lock:
            self.sock.sendall(data)

    def gone(self) -> bool:
        """The daemon closed its end (seen before a line is written into the void)."""
        poller = select.poll()
        poller.register(self.sock, select.POLLIN | select.POLLHUP | select.POLLRDHUP)
        events = poller.poll(0)
        if not events:
            return False
        return bool(events[0][1] & (select.POLLHUP | select.POLLRDHUP | select.POLLERR))

    def read_line(self) -> bytes | None:
        """The next line with its newline, ``None`` at the end of the connection."""
        while True:
            line = take_line(self.buffer)
            if line is not None:
                return line
            try:
                chunk = self.sock.recv(_RECV_BYTES)
            except TimeoutError:
                raise
            except OSError:
                return None
            if not chunk:
                return None
            self.buffer += chunk

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()


class Relay:
    """Copies lines between the harness (``reader``/``writer``) and the daemon's session."""

    def __init__(
        self,
        reader: BinaryIO,
        writer: BinaryIO,
        *,
        write_lock: threading.Lock,
        connector: Connector,
        catalog: Mapping[str, ToolSpec],
        handover: Handover,
        held: Any = None,
        bridge: Bridge | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._write_lock = write_lock
        self._connector = connector
        self._catalog = catalog
        self._everything: Mapping[str, ToolSpec] | None = None
        self._held = held  # the connection opened at initialize, if any
        self._initialize: dict[str, Any] | None = None
        self._initialized: bytes | None = None
        self._first = list(handover.lines)
        if handover.initialize_id is not None:
            self._initialize = _parse(self._first.pop(0))
            if self._first and (_parse(self._first[0]) or {}).get("method") == (
                "notifications/initialized"
            ):
                self._initialized = self._first.pop(0)
        self._lock = threading.Condition()
        self._session: _Session | None = None
        self._pending: dict[Any, _Pending] = {}
        self._answered: set[Any] = set()  # ids answered here: the session's answer is dropped
        self._replays = itertools.count(1)
        # Until a session is open, tool calls go over plain frames (the bridge) in the
        # order they came, and the session opens beside them: the first result doesn't
        # wait for the daemon's first import of the SDK.
        self._bridge_factory = bridge
        self._upstream: Any = None  # the bridge's link, while a worker uses it
        self._queue: list[tuple[bytes, dict[str, Any] | None]] = []
        self._working = False  # a worker drains the queue
        self._opening: threading.Thread | None = None

    # The harness's side ---------------------------------------------------------------------

    def run(self) -> None:
        """Relay until the harness closes stdin."""
        threading.Thread(target=self._watch, name="venom-mem-relay-watch", daemon=True).start()
        for line in self._first:
            self._take(line)
        while True:
            line = self._reader.readline()
            if not line:
                break
            if line.strip():
                self._take(line if line.endswith(b"\n") else line + b"\n")
        with self._lock:
            while self._working:  # what the queue holds is still sent, or made, in order
                self._lock.wait()
            opening = self._opening
        if opening is not None:
            opening.join()
        with self._lock:
            session, upstream = self._session, self._upstream
        if upstream is not None:
            upstream.close()
        if session is not None:
            self._drain(session)

    def _drain(self, session: _Session) -> None:
        """The harness is done sending: the session hears the end of its input, and what it
        had not answered yet is still answered (or times out) before the relay leaves."""
        with contextlib.suppress(OSError):
            session.sock.shutdown(socket.SHUT_WR)
        with self._lock:
            while self._session is session and any(
                entry.via is session for entry in self._pending.values()
            ):
                self._lock.wait()
        session.close()

    def _take(self, line: bytes) -> None:
        message = _parse(line)
        if len(line) > MAX_FRAME:
            self._refuse_oversized(message)
            return
        method = message.get("method") if message is not None else None
        if message is not None:
            if method == "ping" and _is_request(message):
                self._reply(message["id"], {})
                return
            if method == "notifications/initialized":
                self._initialized = line
            elif method == "notifications/cancelled":
                self._cancelled(message)
        with self._lock:
            session = self._session
            queued = self._working or self._opening is not None
        if not queued and session is not None and session.gone():
            self._lost(session)
            session = None
        if not queued and session is None:
            if message is not None and not _is_request(message):
                return  # a notification, or an answer, for a session that is gone
            if message is not None and self._answer_offline(message):
                return
            queued = self._bridge_factory is not None and _tool_verb(message or {}) is not None
        if queued:
            self._enqueue(line, message)
            return
        if session is None:
            session = self._open_for(message)
            if session is None:
                return
        self._send(session, line, message)
        if method == "initialize" and message is not None:
            self._initialize = message  # replayed to the sessions after this one

    def _send(
        self, session: _Session, line: bytes, message: dict[str, Any] | None, track: bool = True
    ) -> None:
        if track:
            self._track(message, session)
        else:
            self._sent_on(message, session)
        try:
            session.send(line)
            return
        except OSError:
            pass
        # Refused before the daemon could read a whole line: it went away between messages.
        # Once more, on a new session.
        self._untrack(message)
        self._lost(session)
        retry = self._open_for(message)
        if retry is None:
            return
        self._track(message, retry)
        try:
            retry.send(line)
        except OSError as exc:
            self._untrack(message)
            self._lost(retry)
            if message is not None and _is_request(message):
                error = VenomError("unavailable.connection", f"could not send: {exc}")
                self._fail(message, error)

    def _answer_offline(self, message: dict[str, Any]) -> bool:
        """With no session, what needs no daemon: ``tools/list`` (the front door's listing),
        and a tool call the daemon would refuse for its arguments (as the SDK's server
        checks them, :class:`.server.ToolRunner`), so that bad input starts nothing."""
        method = message.get("method")
        params = message.get("params")
        if method == "tools/list":
            if isinstance(params, Mapping) and params.get("cursor") is not None:
                return False
            self._reply(message["id"], {"tools": [s.to_json() for s in self._catalog.values()]})
            return True
        if method != "tools/call" or not isinstance(params, Mapping):
            return False
        name = params.get("name")
        spec = self._spec(name) if isinstance(name, str) else None
        try:
            if spec is None:
                raise no_such_tool(name)
            arguments = params.get("arguments")
            spec.check(arguments if isinstance(arguments, Mapping) else None)
        except VenomError as error:
            self._fail(message, error)
            return True
        return False

    def _spec(self, name: str) -> ToolSpec | None:
        """A tool of any audience: one left out of the listing is still callable."""
        if name in self._catalog:
            return self._catalog[name]
        if self._everything is None:
            from venom_mem_core.manifest import MANIFEST

            from .tools import build_catalog

            self._everything = build_catalog(MANIFEST)
        return self._everything.get(name)

    def _cancelled(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if isinstance(params, Mapping):
            with self._lock:
                if self._pending.pop(params.get("requestId"), None) is not None:
                    self._answered.add(params.get("requestId"))  # never answered, if late
                    self._lock.notify_all()

    def _refuse_oversized(self, message: dict[str, Any] | None) -> None:
        if message is None or not _is_request(message):
            return
        self._fail(message, VenomError.param("range", "params", "the request is larger than 1 MiB"))

    def _track(self, message: dict[str, Any] | None, via: _Session | None) -> None:
        if message is None or not _is_request(message):
            return
        from ..client import reply_budget_s

        tool = _tool_verb(message)
        if tool is not None:
            verb, arguments = tool
            budget = reply_budget_s(verb, arguments if isinstance(arguments, Mapping) else None)
        else:
            verb, budget = str(message["method"]), OTHER_BUDGET_S
        entry = _Pending(tool is not None, verb, time.monotonic() + budget, via)
        with self._lock:
            self._answered.discard(message["id"])
            self._pending[message["id"]] = entry
            self._lock.notify_all()

    def _sent_on(self, message: dict[str, Any] | None, session: _Session) -> None:
        """A queued request, tracked since it came, is now the session's to answer."""
        if message is not None and _is_request(message):
            with self._lock:
                entry = self._pending.get(message["id"])
                if entry is not None:
                    entry.via = session

    def _untrack(self, message: dict[str, Any] | None) -> None:
        if message is not None and _is_request(message):
            with self._lock:
                self._pending.pop(message["id"], None)

    # The queue, and the bridge while no session is open --------------------------------------

    def _enqueue(self, line: bytes, message: dict[str, Any] | None) -> None:
        """Behind what is queued already; tracked from now (its budget runs from its coming,
        and a cancel finds it)."""
        self._track(message, None)
        with self._lock:
            self._queue.append((line, message))
            if self._working:
                return
            self._working = True
        threading.Thread(target=self._work, name="venom-mem-relay-queue", daemon=True).start()

    def _work(self) -> None:
        """Take the queue in order: to the session once it is open, a tool call over the
        bridge until then, anything else once the session opening beside it is done."""
        while True:
            with self._lock:
                if not self._queue:
                    self._working = False
                    upstream = None
                    if self._session is not None:  # it serves from here
                        upstream, self._upstream = self._upstream, None
                    self._lock.notify_all()
                    break
                line, message = self._queue.pop(0)
                request_id = message.get("id") if message is not None else None
                if request_id in self._answered and request_id not in self._pending:
                    self._answered.discard(request_id)  # cancelled, or timed out, queued
                    continue
                session = self._session
                opening = self._opening
            if session is not None and session.gone():
                self._lost(session)
                session = None
            if session is None and _tool_verb(message or {}) is not None:
                if self._bridged(message or {}):
                    self._open_beside()
                continue
            if session is None and opening is not None:
                opening.join()
                with self._lock:
                    session = self._session
            if session is None:
                if message is not None and not _is_request(message):
                    continue
                if message is not None and self._answer_offline(message):
                    self._untrack(message)
                    continue
                session = self._open_for(message)
                if session is None:
                    self._untrack(message)
                    continue
            self._send(session, line, message, track=False)
            if message is not None and message.get("method") == "initialize":
                self._initialize = message
        if upstream is not None:
            upstream.close()

    def _bridged(self, message: dict[str, Any]) -> bool:
        """A tool call made over plain frames, answered as the session's SDK server would;
        whether a daemon answered it (else no session is opened beside it)."""
        params = message.get("params") or {}
        name, arguments = params.get("name"), params.get("arguments")
        spec = self._spec(name) if isinstance(name, str) else None
        request_id = message["id"]
        with self._lock:
            entry = self._pending.get(request_id)
            if entry is not None:  # the link's own deadline answers, naming the daemon
                budget = entry.deadline - entry.sent
                entry.deadline = time.monotonic() + budget + BRIDGE_GRACE_S
        try:
            if spec is None:
                raise no_such_tool(name)
            checked = spec.check(arguments if isinstance(arguments, Mapping) else None)
            if self._upstream is None:
                assert self._bridge_factory is not None
                self._upstream = self._bridge_factory()
            ok: Any = self._upstream.call(spec.verb.name, checked)
            result: dict[str, Any] | VenomError = ok
        except VenomError as error:
            result = error
        except Exception as exc:  # as the SDK's server: a bug is the call's error, no crash
            result = VenomError("failed.internal", f"{type(exc).__name__}: {exc}")
        reached = not (isinstance(result, VenomError) and result.code.startswith("unavailable."))
        with self._lock:
            if request_id in self._answered and request_id not in self._pending:
                self._answered.discard(request_id)  # cancelled, or timed out here: dropped
                return reached
            self._pending.pop(request_id, None)
            self._lock.notify_all()
        if isinstance(result, VenomError):
            self._fail_id(request_id, True, result)
        else:
            self._reply(request_id, ok_result(result))
        return reached

    def _open_beside(self) -> None:
        """Open the session in the background once the bridge has reached a daemon."""
        with self._lock:
            if self._session is not None or self._opening is not None or self._upstream is None:
                return
            self._opening = threading.Thread(
                target=self._open_in_background, name="venom-mem-relay-open", daemon=True
            )
            self._opening.start()

    def _open_in_background(self) -> None:
        try:
            # A failure is for a later message to meet and report; the bridge goes on.
            self._open_for(None, may_start=False)
        finally:
            with self._lock:
                self._opening = None
                self._lock.notify_all()

    # Opening a session ----------------------------------------------------------------------

    def _open_for(
        self, message: dict[str, Any] | None, may_start: bool | None = None
    ) -> _Session | None:
        """A new session for ``message``, or ``None`` once its failure was answered."""
        if may_start is None:
            tool = _tool_verb(message) if message is not None else None
            may_start = starts_daemon(tool[0]) if tool is not None else True
        try:
            session = self._open(may_start)
        except VenomError as error:
            if message is not None and _is_request(message):
                self._fail(message, error)
            return None
        with self._lock:
            self._session = session
        threading.Thread(
            target=self._pump, args=(session,), name="venom-mem-relay-read", daemon=True
        ).start()
        return session

    def _open(self, may_start: bool) -> _Session:
        held, self._held = self._held, None
        if held is not None:
            try:
                return self._start(held)
            except VenomError as error:
                if error.code != "unavailable.connection":
                    raise
                # The daemon went away since initialize: a new connection, as for any call.
        try:
            conn = self._connector(may_start)
        except OSError as exc:
            raise VenomError(
                "unavailable.connection", f"could not reach the daemon: {exc}"
            ) from None
        return self._start(conn)

    def _start(self, conn: Any) -> _Session:
        if conn.hello.get("protocol") != "mcp":
            version = conn.hello.get("version", "?")
            conn.close()
            raise VenomError(
                "failed.protocol",
                f"the daemon at {conn.path} (version {version}) serves no MCP session",
                {"fix": _RESTART_FIX},
            )
        sock, rest = conn.detach()
        session = _Session(sock, rest, path=conn.path, pid=conn.pid, started=conn.started)
        try:
            self._replay(session)
        except BaseException:
            session.close()
            raise
        return session

    def _replay(self, session: _Session) -> None:
        """Bring the new session to where the harness believes it is: its ``initialize``
        (under an id of the relay's, so no answer of the harness's is taken for it) and
        ``initialized``; wait for the answer to the first."""
        if self._initialize is None:
            return
        replay_id = f"venom-mem-relay-{next(self._replays)}"
        replayed = {**self._initialize, "id": replay_id}
        lines = _dumps(replayed) + (self._initialized or b"")
        deadline = time.monotonic() + SESSION_START_S
        try:
            session.send(lines)
            while True:
                session.sock.settimeout(max(deadline - time.monotonic(), 0.001))
                line = session.read_line()
                if line is None:
                    raise VenomError(
                        "unavailable.connection",
                        "the daemon closed the MCP session before it answered initialize",
                    )
                answer = _parse(line)
                if answer is not None and answer.get("id") == replay_id:
                    if "error" in answer:
                        raise VenomError(
                            "failed.protocol",
                            f"the daemon's MCP session refused initialize: {answer['error']}",
                        )
                    return
                self._write(line)  # something the session says first goes to the harness
        except TimeoutError:
            raise VenomError(
                "unavailable.daemon_timeout",
                f"the daemon at {session.path} did not open an MCP session in time",
                {"socket": session.path, "fix": "venom-mem doctor"},
            ) from None
        except OSError as exc:
            raise VenomError("unavailable.connection", f"the MCP session failed: {exc}") from None
        finally:
            with contextlib.suppress(OSError):
                session.sock.settimeout(None)

    # The daemon's side ----------------------------------------------------------------------

    def _pump(self, session: _Session) -> None:
        """Copy the session's lines to the harness, but for answers already given here."""
        while True:
            line = session.read_line()
            if line is None:
                break
            answer = _parse(line)
            if answer is not None and "method" not in answer and "id" in answer:
                with self._lock:
                    request_id = answer["id"]
                    if request_id in self._answered:
                        self._answered.discard(request_id)
                        continue
                    self._pending.pop(request_id, None)
                    session.started = False
                    self._lock.notify_all()
            self._write(line)
        self._lost(session)

    def _lost(self, session: _Session) -> None:
        """The session ended: what it had not answered fails, and it is forgotten."""
        with self._lock:
            if self._session is session:
                self._session = None
            lost = []
            if not session.closed:
                lost = [(i, e) for i, e in self._pending.items() if e.via is session]
                for request_id, _entry in lost:
                    del self._pending[request_id]
            self._lock.notify_all()
        session.close()
        for request_id, entry in lost:
            self._fail_id(request_id, entry.tool, lost_reply(entry.verb, started=session.started))

    def _watch(self) -> None:
        """Answer the requests whose budget ran out."""
        while True:
            with self._lock:
                now = time.monotonic()
                late = [(i, e) for i, e in self._pending.items() if e.deadline <= now]
                for request_id, _entry in late:
                    del self._pending[request_id]
                    self._answered.add(request_id)
                if late:
                    self._lock.notify_all()
                if not late:
                    soonest = min((e.deadline for e in self._pending.values()), default=None)
                    self._lock.wait(None if soonest is None else max(soonest - now, 0.001))
                    continue
            for request_id, entry in late:
                waited = time.monotonic() - entry.sent
                via = entry.via
                self._fail_id(request_id, entry.tool, self._timeout(via, entry.verb, waited))
                if via is not None:
                    cancel = {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": request_id, "reason": "timed out in the relay"},
                    }
                    with contextlib.suppress(OSError):
                        via.send(_dumps(cancel))

    @staticmethod
    def _timeout(session: _Session | None, verb: str, waited_s: float) -> VenomError:
        from ..client import daemon_timeout

        path, pid = (session.path, session.pid) if session is not None else ("", 0)
        return daemon_timeout(path, pid, verb, waited_s)

    # Answers given here ---------------------------------------------------------------------

    def _fail(self, message: dict[str, Any], error: VenomError) -> None:
        self._fail_id(message["id"], _tool_verb(message) is not None, error)

    def _fail_id(self, request_id: Any, tool: bool, error: VenomError) -> None:
        if tool:  # as the SDK's server gives a failed call (mcp.server.error_result)
            text = json.dumps({"error": error.to_json()}, ensure_ascii=False, separators=(",", ":"))
            self._reply(request_id, {"content": [{"type": "text", "text": text}], "isError": True})
            return
        failure = {"code": _RELAY_FAILED, "message": refusal_text(error), "data": error.to_json()}
        self._write(_dumps({"jsonrpc": "2.0", "id": request_id, "error": failure}))

    def _reply(self, request_id: Any, result: dict[str, Any]) -> None:
        self._write(_dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))

    def _write(self, data: bytes) -> None:
        # The harness gone (its end of stdout closed) is seen as the end of stdin, on the
        # main thread; a write until then has nobody to tell.
        with self._write_lock, contextlib.suppress(OSError, ValueError):
            self._writer.write(data)
            self._writer.flush()


def run_relay(env: Mapping[str, str], wire_in: BinaryIO, wire_out: BinaryIO) -> int:
    """The relay's whole life: front door, then relay; the exit code."""
    import sys

    import venom_mem_core
    from venom_mem_core.manifest import MANIFEST

    from ..client import connect
    from ..start_gc import resume as resume_gc
    from .harness_session import SessionNaming, served_session
    from .link import DaemonLink, daemon_connector, early_token_check
    from .tools import INSTRUCTIONS, SERVER_NAME, audience_for_token, build_catalog

    catalog = build_catalog(MANIFEST, audience_for_token(env.get("VENOM_MEM_TOKEN", "")))
    tools = [spec.to_json() for spec in catalog.values()]
    held: list[Any] = []

    def check_initialize() -> str | None:
        error, wire = early_token_check(env, protocol="mcp")
        if wire is not None:
            held.append(wire)
        if error is None:
            return None
        message = refusal_text(error)
        print(message, file=sys.stderr)
        return message

    lock = threading.Lock()
    front = FrontDoor(
        wire_in,
        wire_out,
        tools=tools,
        server_name=SERVER_NAME,
        server_version=venom_mem_core.__version__,
        instructions=INSTRUCTIONS,
        check_initialize=check_initialize,
        write_lock=lock,
    )
    handover = front.run()
    resume_gc()  # paused by the entry point: the start's objects are made (start_gc.py)
    if front.failed or handover is None:
        for wire in held:
            wire.close()
        return 1 if front.failed else 0

    def connector(may_start: bool) -> Any:
        return connect(
            env,
            may_start=may_start,
            client=CLIENT_NAME,
            protocol="mcp",
            harness_session=served_session(env),
        )

    def bridge() -> Any:
        return SessionNaming(DaemonLink(daemon_connector(env)), env)

    relay = Relay(
        wire_in,
        wire_out,
        write_lock=lock,
        connector=connector,
        catalog=catalog,
        handover=handover,
        held=held[0] if held else None,
        bridge=bridge,
    )
    relay.run()
    return 0
