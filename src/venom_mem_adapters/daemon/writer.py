"""The one thread every write runs on, one after another (RFC-0020 section 8).

Writes queue here and run back to back: the thread takes the next job the moment the last
one commits, without a round trip through the event loop in between, which is what a
capacity-limited thread pool would add to every write. A waiting request is resumed on its
event loop when its write is done. A write that started always runs to its end: shutdown or a
client going away can't cut a transaction in half or lose its outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

__all__ = ["WriterThread"]

T = TypeVar("T")
_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class WriterThread:
    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="venom-mem-writer", daemon=True)
        self._thread.start()

    async def run(self, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((fn, loop, future))
        with anyio.CancelScope(shield=True):
            value = await future
        return value  # noqa: RET504  # mypy: a shielded scope always runs to here

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, loop, future = job
            value: Any = None
            error: BaseException | None = None
            try:
                value = fn()
            except BaseException as exc:  # handed to the waiting request, as raised
                error = exc
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting now
                loop.call_soon_threadsafe(_settle, future, value, error)

    def close(self) -> None:
        """Finish the queued writes, then stop the thread."""
        self._jobs.put(None)
        self._thread.join()
