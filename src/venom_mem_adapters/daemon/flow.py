"""What keeps one local process from stalling or bloating the daemon (docs/adr/0013).

- :class:`ByteBudget` and :class:`FrameReader`: each connection may hold a small allowance of
  unread bytes on its own; beyond it, bytes of unfinished frames are charged to one budget
  for the whole daemon. A connection that can't get budget is simply not read (the kernel
  holds its bytes and its sender blocks), so a thousand half frames cost a bounded amount of
  memory, and a connection's buffer goes back when it ends.
- :class:`FairGate`: the readers and the writer serve the connection with the fewest
  requests waiting first, and connections of equal depth in turn, so a deep pipeline on one
  connection (or on three hundred) can't push anyone else's request behind it.
- :class:`HeapTrimmer`: give freed memory back to the kernel after connections close.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Literal

import anyio
import anyio.abc

from ..client import MAX_FRAME

__all__ = ["ByteBudget", "FairGate", "FrameReader", "FrameTooLong", "HeapTrimmer"]

# Read without asking the budget: most requests fit, and 2,048 connections that each hold
# this much are 64 MiB. A read is at most this much too, so a connection waiting for its next
# frame holds no budget at all.
ALLOWANCE = 32 * 1024
CHUNK = ALLOWANCE
# A read waiting for budget looks this often whether its peer is still there.
BUDGET_WAIT_S = 1.0


class FrameTooLong(Exception):
    """No newline within MAX_FRAME bytes."""


class ByteBudget:
    """Bytes the daemon may hold in unfinished frames beyond each connection's allowance."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._freed = anyio.Event()

    async def take(self, n: int) -> None:
        while self.used + n > self.limit:
            freed = self._freed
            await freed.wait()
        self.used += n

    def give(self, n: int) -> None:
        if n > 0:
            self.used -= n
            self._freed.set()
            self._freed = anyio.Event()


class FrameReader:
    """Newline-framed bytes from one stream: :meth:`pump` reads (as a task of its own, so a
    reset is seen even while every request slot is taken), :meth:`next_frame` takes."""

    def __init__(
        self,
        stream: anyio.abc.ByteReceiveStream,
        budget: ByteBudget,
        allowance: int = ALLOWANCE,
        peer_gone: Callable[[], bool] = lambda: False,
    ) -> None:
        self._stream = stream
        self._budget = budget
        self._peer_gone = peer_gone
        self._allowance = allowance
        self._buffer = bytearray()
        self._scanned = 0  # no newline before this offset
        self._charged = 0
        self._changed = anyio.Event()
        self.ended: Literal["eof", "reset"] | None = None

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def pump(self) -> None:
        """Read until the peer ends (``ended`` says how); never more than the budget allows."""
        try:
            while True:
                size = await self._room()
                if size == 0:  # the peer went away while this waited for budget
                    self.ended = "reset"
                    return
                data = await self._stream.receive(size)
                self._buffer.extend(data)  # after the await: _settle may have replaced it
                self._notify()
        except anyio.EndOfStream:
            self.ended = "eof"
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.ended = "reset"
        finally:
            self._notify()

    async def _room(self) -> int:
        """How much the next read may take, once it may: up to the allowance for free;
        beyond it, a chunk paid for from the budget, and never while a whole frame's worth
        waits to be taken. 0 when the peer hung up during the wait."""
        while True:
            changed = self._changed
            held = len(self._buffer)
            if held >= MAX_FRAME:
                await changed.wait()
                continue
            if held < self._allowance:
                return self._allowance - held
            need = held + CHUNK - self._allowance - self._charged
            if need <= 0:
                return CHUNK
            with anyio.move_on_after(BUDGET_WAIT_S):
                await self._budget.take(need)
                self._charged += need
                return CHUNK
            if self._peer_gone():  # nobody will ever finish this frame: stop waiting
                return 0

    async def next_frame(self) -> bytes | None:
        """The next frame without its newline; ``None`` once the peer ended and no whole
        frame is left (a half frame at the end is dropped). Raises :class:`FrameTooLong`."""
        while True:
            changed = self._changed
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                if end > MAX_FRAME - 1:
                    raise FrameTooLong
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                self._settle()
                return line
            self._scanned = len(self._buffer)
            if len(self._buffer) > MAX_FRAME - 1:
                raise FrameTooLong
            if self.ended is not None:
                return None
            await changed.wait()

    def _settle(self) -> None:
        if not self._buffer:
            self._buffer = bytearray()  # a bytearray keeps its allocation when emptied
        excess = self._charged - max(0, len(self._buffer) - self._allowance)
        if excess > 0:
            self._charged -= excess
            self._budget.give(excess)
        self._notify()

    def release(self) -> None:
        """The connection ended: its buffer and its share of the budget go back."""
        self._buffer = bytearray()
        self._budget.give(self._charged)
        self._charged = 0


class FairGate:
    """At most ``capacity`` jobs at once. A freed slot goes to the owner (connection) whose
    demand is smallest, its demand being the jobs it has waiting plus those it was given
    since it began to wait; among equals, to the one that has waited longest, and then the
    owner goes to the back of the line. So a connection with one request is never queued
    behind others' pipelines, however many, and pipelines of equal depth take turns."""

    def __init__(self, capacity: int) -> None:
        self._free = capacity
        self._waiting: dict[object, deque[anyio.Event]] = {}  # insertion order is the turn
        self._given: dict[object, int] = {}

    def _demand(self, owner: object) -> int:
        return len(self._waiting[owner]) + self._given.get(owner, 0)

    @contextlib.asynccontextmanager
    async def slot(self, owner: object) -> AsyncIterator[None]:
        if self._free > 0 and not self._waiting:
            self._free -= 1
        else:
            turn = anyio.Event()
            self._waiting.setdefault(owner, deque()).append(turn)
            try:
                await turn.wait()
            except BaseException:
                if turn.is_set():
                    self._release()  # handed the slot as it was cancelled: pass it on
                else:
                    queue = self._waiting[owner]
                    queue.remove(turn)
                    if not queue:
                        del self._waiting[owner]
                        self._given.pop(owner, None)
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        if not self._waiting:
            self._free += 1
            return
        owner = min(self._waiting, key=self._demand)  # the first of the least
        queue = self._waiting.pop(owner)
        turn = queue.popleft()
        if queue:
            self._waiting[owner] = queue  # back of the line
            self._given[owner] = self._given.get(owner, 0) + 1
        else:
            self._given.pop(owner, None)
        turn.set()


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters (malloc.h)
_M_ARENA_MAX = -8


class HeapTrimmer:
    """Gives free heap pages back to the kernel (glibc's ``malloc_trim``) a moment after
    connections closed: without it the memory of a thousand closed connections' buffers
    stays resident, free for reuse but counted against the daemon."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self._interval_s = interval_s
        self._due = False
        # The process's own symbols, libc's among them: ctypes.util.find_library runs
        # ldconfig in a child, about 0.1 s of a loaded machine on the daemon's start.
        libc = ctypes.CDLL(None)
        self._trim = getattr(libc, "malloc_trim", None)
        mallopt = getattr(libc, "mallopt", None)
        if mallopt is not None:
            # Big blocks (frames, replies, large memories) get mappings of their own, handed
            # back the moment they are freed (a fixed threshold also stops glibc raising it
            # after the first free); two arenas keep the readers' threads from scattering
            # what they free over one heap each. 128 KiB, not lower: at 32 KiB SQLite's own
            # per-transaction buffers were mapped and unmapped on every write, which cost
            # 8 clients' memory.add 40 % (914/s against 1,484/s, bench/bench_daemon.py).
            mallopt(_M_MMAP_THRESHOLD, 128 * 1024)
            mallopt(_M_ARENA_MAX, 2)

    def due(self) -> None:
        self._due = True

    async def run(self) -> None:
        while True:
            await anyio.sleep(self._interval_s)
            if self._due:
                self._due = False
                # Cancelled requests leave cycles (exception, traceback, frame) that only the
                # collector frees, and only freed memory can be handed back.
                gc.collect()
                if self._trim is not None:
                    self._trim(0)
