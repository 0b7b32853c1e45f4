"""One client connection to the daemon: hello first, then pipelined requests.

A connection reads frames in a task of its own (flow.FrameReader), so it notices a peer that
reset or hung up even while all its request slots are taken, and then drops the requests
that haven't started. It starts at most MAX_IN_FLIGHT_PER_CONNECTION requests at once, none
while more than UNSENT_LIMIT bytes of its replies wait to be sent, and a second ``hello`` or
a frame that isn't a JSON object ends it (docs/adr/0013). A ``hello`` that asks for
``protocol: "mcp"`` turns the rest of the connection into an MCP session the daemon serves
(:mod:`.mcp_session`, docs/adr/0038).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import select
import socket
import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc

from venom_mem_core.errors import VenomError
from venom_mem_core.records import Principal
from venom_mem_core.usecases import principals

from ..client import MAX_FRAME, decode_frame, encode_frame
from .flow import ByteBudget, FrameReader, FrameTooLong

if TYPE_CHECKING:
    from venom_mem_core.usecases.app import App

__all__ = ["CALLER", "MAX_IN_FLIGHT_PER_CONNECTION", "Connection", "Dispatcher", "error_reply"]

log = logging.getLogger("venom_mem.daemon")

MAX_IN_FLIGHT_PER_CONNECTION = 2
# No new request starts on a connection while this many bytes of its replies wait to be
# sent: a peer that doesn't read gets a few answers' worth of work, not a pipeline's.
UNSENT_LIMIT = 256 * 1024
# A reply that can't be sent for this long: the peer doesn't read, and it is closed.
SEND_TIMEOUT_S = 60.0

# The connection a request came on (None for the daemon's own jobs): whose turn it is at the
# readers and the writer.
CALLER: contextvars.ContextVar[object | None] = contextvars.ContextVar("caller", default=None)


class Dispatcher(Protocol):
    """What a connection asks of the daemon that accepted it (server.py's ``Daemon``)."""

    @property
    def app(self) -> App: ...

    @property
    def frame_budget(self) -> ByteBudget: ...

    async def hello(
        self, params: Any, peer_uid: int | None
    ) -> tuple[Principal, dict[str, Any]]: ...

    async def sync_clients(self) -> None: ...

    async def dispatch(
        self, principal: Principal, verb_name: Any, params: Any
    ) -> dict[str, Any]: ...


def _peer_uid(stream: anyio.abc.SocketStream) -> int | None:
    raw = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
    if raw is None:
        return None
    creds = raw.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def error_reply(request_id: Any, error: VenomError) -> dict[str, Any]:
    return {"id": request_id, "error": error.to_json()}


def _asks_for_mcp(params: Any) -> bool:
    """:func:`.mcp_session.asked_for`, loading that module (the MCP catalog's, about 5 ms)
    only for a hello that names a protocol."""
    if not isinstance(params, Mapping) or "protocol" not in params:
        return False
    from . import mcp_session

    return mcp_session.asked_for(params)


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    # A string id is echoed in the reply, so it must be text that UTF-8 can carry (a JSON
    # "\ud800" escape decodes to a lone surrogate, which can't be sent back).
    return isinstance(value, str) and len(value) <= 256 and _encodable(value)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _hung_up(stream: anyio.abc.SocketStream) -> bool:
    """POLLHUP: the peer closed both directions (a half close sets only POLLRDHUP)."""
    raw = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
    if raw is None:
        return False
    poller = select.poll()
    try:
        poller.register(raw, select.POLLHUP)
        return any(events & select.POLLHUP for _fd, events in poller.poll(0))
    except (OSError, ValueError):
        return True


_FRAME_SHAPE = 'a request is {"id": ..., "verb": ..., "params": {...}}'


class Connection:
    """One client connection: hello first, then pipelined requests."""

    def __init__(self, daemon: Dispatcher, stream: anyio.abc.SocketStream) -> None:
        self.daemon = daemon
        self.stream = stream
        self.principal: Principal | None = None
        self.peer_uid: int | None = None
        self.speaks_mcp = False  # hello asked for an MCP session, and got it
        self.harness_session: dict[str, Any] | None = None  # what the MCP session names
        self._send_lock = anyio.Lock()
        self._slots = anyio.Semaphore(MAX_IN_FLIGHT_PER_CONNECTION)
        self._unsent = 0
        self._drained = anyio.Event()
        self._reading = anyio.CancelScope()
        self._requests: anyio.abc.TaskGroup | None = None

    def stop_reading(self) -> None:
        """Read no more requests; the ones in flight still finish and are answered."""
        self._reading.cancel()

    def _gone(self) -> None:
        """The peer is gone: requests not yet running are dropped (a running read finishes
        in its thread, a write that started commits), nothing more is read or sent."""
        if self._requests is not None:
            self._requests.cancel_scope.cancel()

    async def refuse(self, error: VenomError) -> None:
        """Say why this connection is not served, and close it."""
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            with anyio.move_on_after(1.0):
                await self.stream.send(encode_frame(error_reply(None, error)))
        await self.stream.aclose()

    async def send(self, reply: dict[str, Any]) -> None:
        request_id = reply.get("id")
        request_id = request_id if _valid_id(request_id) else None
        try:
            frame = encode_frame(reply)
        except (TypeError, ValueError) as exc:
            log.exception("unencodable reply")
            frame = encode_frame(error_reply(request_id, VenomError("failed.internal", str(exc))))
        del reply  # the encoded frame is all that waits to be sent
        if len(frame) > MAX_FRAME:
            # A client drops a frame over the limit and would see only a closed connection.
            log.error("a %d-byte reply is over the frame limit", len(frame))
            frame = encode_frame(
                error_reply(
                    request_id,
                    VenomError(
                        "failed.internal",
                        f"the reply ({len(frame)} bytes) is larger than a frame ({MAX_FRAME})",
                    ),
                )
            )
        await self.send_frame(frame)

    async def send_frame(self, frame: bytes) -> None:
        """Send encoded bytes in turn with the connection's other replies; a peer that takes
        none of them for SEND_TIMEOUT_S is gone."""
        self._unsent += len(frame)
        try:
            async with self._send_lock:
                sent = False
                with (
                    contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError),
                    anyio.move_on_after(SEND_TIMEOUT_S),
                ):
                    await self.stream.send(frame)
                    sent = True
                if not sent:  # went away, or stopped reading its replies
                    self._gone()
        finally:
            self._unsent -= len(frame)
            if self._unsent <= UNSENT_LIMIT:
                self._drained.set()

    async def _wait_drained(self) -> None:
        while self._unsent > UNSENT_LIMIT:
            self._drained = anyio.Event()
            await self._drained.wait()

    async def run(self) -> None:
        with contextlib.suppress(OSError):
            self.peer_uid = _peer_uid(self.stream)
        reader = FrameReader(
            self.stream, self.daemon.frame_budget, peer_gone=lambda: _hung_up(self.stream)
        )
        token = CALLER.set(self)
        try:
            async with anyio.create_task_group() as requests:
                self._requests = requests
                with self._reading:
                    async with anyio.create_task_group() as io:
                        io.start_soon(self._pump, reader)
                        while await self._next_request(reader, requests):
                            pass
                        io.cancel_scope.cancel()
        finally:
            CALLER.reset(token)
            reader.release()
            await self.stream.aclose()

    async def _pump(self, reader: FrameReader) -> None:
        await reader.pump()
        # An end of file may be a half close (the peer still reads its replies); a peer that
        # closed outright hangs up too, and its queued requests are for nobody.
        if reader.ended == "reset" or _hung_up(self.stream):
            self._gone()

    async def _next_request(self, reader: FrameReader, requests: anyio.abc.TaskGroup) -> bool:
        """Take one frame and start answering it; ``False`` when the connection is done."""
        await self._slots.acquire()
        started = False
        try:
            await self._wait_drained()
            try:
                line = await reader.next_frame()
            except FrameTooLong:
                await self._close_with("a frame is at most 1 MiB")
                return False
            if line is None:
                return False
            try:
                frame = decode_frame(line)
            except (ValueError, RecursionError):
                frame = None
            if not isinstance(frame, dict):
                await self._close_with("a frame is one JSON object")
                return False
            hello = frame.get("verb") == "hello"
            if hello and self.principal is not None:
                await self._refuse_second_hello(frame.get("id"))
                return False
            started = True  # _request releases the slot
            if hello:
                await self._request(frame)  # later requests need its principal
                if self.speaks_mcp:
                    from . import mcp_session  # loaded by the hello that asked for it

                    await mcp_session.serve(self, reader)
                    return False
            else:
                requests.start_soon(self._request, frame)
            return True
        finally:
            if not started:
                self._slots.release()

    async def _refuse_second_hello(self, request_id: Any) -> None:
        assert self.principal is not None
        error = VenomError(
            "denied.hello",
            f"hello was already said on this connection (as {self.principal.id});"
            " the connection closes",
            {"fix": "open a new connection to speak as another principal"},
        )
        await self.send(error_reply(request_id if _valid_id(request_id) else None, error))

    async def _close_with(self, message: str) -> None:
        await self.send(error_reply(None, VenomError.param("frame", "frame", message)))

    async def _request(self, frame: Any) -> None:
        # The slot is held until the reply is sent: a client that pipelines faster than it
        # reads then meets backpressure instead of the daemon queueing its replies in memory.
        try:
            # No name holds the reply here: send() lets go of it once it is encoded, so a
            # reply waiting for a slow reader costs its bytes only, not its objects too.
            await self.send(await self._answer(frame))
        finally:
            self._slots.release()

    async def call(self, verb: Any, params: Any) -> dict[str, Any]:
        """Run one verb as this connection's principal: the ok object, or VenomError."""
        if self.principal is None:
            raise VenomError(
                "denied.hello", "say hello first", {"fix": "send hello before any verb"}
            )
        if self.principal.id.startswith("g"):  # only a token can have been revoked
            await self.daemon.sync_clients()
        principals.recheck(self.daemon.app, self.principal)
        return await self.daemon.dispatch(self.principal, verb, params)

    async def _answer(self, frame: dict[str, Any]) -> dict[str, Any]:
        if not _valid_id(frame.get("id")):
            return error_reply(None, VenomError.param("frame", "frame", _FRAME_SHAPE))
        request_id, verb = frame["id"], frame.get("verb")
        try:
            if not isinstance(verb, str) or set(frame) - {"id", "verb", "params"}:
                raise VenomError.param("frame", "frame", _FRAME_SHAPE)
            if verb == "hello":
                mcp = _asks_for_mcp(frame.get("params"))
                self.principal, ok = await self.daemon.hello(frame.get("params"), self.peer_uid)
                if mcp:
                    ok["protocol"] = "mcp"
                    self.speaks_mcp = True
                    named = (frame.get("params") or {}).get("harness_session")
                    self.harness_session = dict(named) if isinstance(named, Mapping) else None
                return {"id": request_id, "ok": ok}
            return {"id": request_id, "ok": await self.call(verb, frame.get("params"))}
        except VenomError as error:
            return error_reply(request_id, error)
        except Exception as exc:  # a bug must cost one request, never the daemon
            log.exception("request %r failed", verb)
            return error_reply(request_id, VenomError("failed.internal", f"internal error: {exc}"))
