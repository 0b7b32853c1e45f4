"""The threads writes run on: one for SQLite, one after another (RFC-0020 section 8), or
several for a store that serializes concurrent writes itself (``ports.ConcurrentWrites``,
PostgreSQL; docs/adr/0031).

Writes queue here and run back to back: a thread takes the next job the moment its last
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
from contextlib import AbstractContextManager, nullcontext
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
    """``threads`` writers taking jobs from one queue in order, each job run inside
    ``job()`` (a store's ``write_job``: what follows its commits keeps their order)."""

    def __init__(
        self, threads: int = 1, job: Callable[[], AbstractContextManager[None]] = nullcontext
    ) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._job = job
        self._threads = [
            threading.Thread(
                target=self._work,
                name="venom-mem-writer" if threads == 1 else f"venom-mem-writer-{n}",
                daemon=True,
            )
            for n in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def threads(self) -> int:
        return len(self._threads)

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
                with self._job():
                    value = fn()
            except BaseException as exc:  # handed to the waiting request, as raised
                error = exc
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting now
                loop.call_soon_threadsafe(_settle, future, value, error)

    def close(self) -> None:
        """Finish the queued writes, then stop the threads."""
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()
