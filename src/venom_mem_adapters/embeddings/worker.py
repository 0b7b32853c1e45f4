"""The background embedding worker (RFC-0020 section 5, "Writes never wait").

``memory.add`` commits without a vector. This worker finds pending memories (live, no vector,
provider on), embeds ``embedding_input(title, content)`` in batches of up to 32, and hands
each batch's vectors to a ``store`` callback that writes them in the store's writer and puts
them in the vector index. It is woken by :meth:`EmbeddingWorker.notify` after a commit that
adds or changes text, so a new memory is embedded within one round trip to the provider.

Failures. A failed batch leaves its memories pending and the worker waits 5 s, then 10, 20 ...
up to an hour between attempts; a success starts the sequence again, and so does a restart,
since the state lives only in this object. A notify while waiting doesn't cut the wait short:
a provider that is down would otherwise be called again on every write. A vector of the wrong
length fails the whole batch (the provider's :class:`EmbeddingError` says ``dimensions``), so
it is never stored; doctor reports it from :attr:`EmbeddingWorker.state`.

It runs as one anyio task (:meth:`run`); the provider call, the reads and the writes run in
worker threads, so the event loop never blocks on them. :meth:`stop` ends it at the next
check, and cancelling the task ends it at once.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import attrs

from venom_mem_core.embedding_text import embedding_input
from venom_mem_core.errors import VenomError
from venom_mem_core.ports import Embedder

from .http_embedder import EmbeddingError
from .vector_rows import PendingText

__all__ = ["BATCH_SIZE", "Backoff", "EmbeddingWorker", "WorkerState", "in_daemon_thread"]

log = logging.getLogger("venom_mem.embeddings")

BATCH_SIZE = 32
BACKOFF_START_S = 5.0
BACKOFF_MAX_S = 3600.0

T = TypeVar("T")
FetchPending = Callable[[int], list[PendingText]]
StoreVectors = Callable[[Sequence[tuple[PendingText, Sequence[float]]]], int]


async def in_daemon_thread(call: Callable[[], T], *, name: str = "venom-mem embed") -> T:
    """Run a blocking provider call in a thread of its own, and wait for it cancellably.

    The thread is a daemon thread, unlike anyio's worker threads, which the interpreter
    joins at exit: a provider that hangs must not hold the daemon's shutdown past its
    deadline. Cancelling the wait abandons the call, which ends at its own timeout.
    """
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    outcome: list[tuple[bool, Any]] = []

    def target() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the waiting task below
            outcome.append((False, exc))
        try:
            anyio.from_thread.run_sync(done.set, token=token)
        except Exception:  # the event loop is gone: nobody is waiting
            return

    threading.Thread(target=target, name=name, daemon=True).start()
    await done.wait()
    ok, value = outcome[0]
    if not ok:
        raise value
    result: T = value
    return result


class Backoff:
    """Delays after consecutive failures: ``start``, doubling, at most ``cap``."""

    def __init__(self, start: float = BACKOFF_START_S, cap: float = BACKOFF_MAX_S) -> None:
        self.start = start
        self.cap = cap
        self.delay: float | None = None

    def failed(self) -> float:
        """The wait before the next attempt, after one more failure."""
        self.delay = self.start if self.delay is None else min(self.delay * 2, self.cap)
        return self.delay

    def succeeded(self) -> None:
        self.delay = None


@attrs.frozen(kw_only=True)
class WorkerState:
    """What doctor and tests see of the worker."""

    running: bool
    embedded: int
    batches: int
    failures: int
    backoff_s: float | None
    retry_in_s: float | None
    last_error: str | None
    last_reason: str | None


class _Signal:
    """The worker's wake-up flag, its idle flag and its stop flag, under one condition."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._woken = True  # the first round runs at once: there may be a backlog
        self._idle = False
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def wake(self) -> None:
        with self._cond:
            self._woken, self._idle = True, False
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def take(self) -> bool:
        """Whether a wake-up came since the last take, clearing it."""
        with self._cond:
            woken, self._woken = self._woken, False
            return woken

    def settle(self) -> bool:
        """Mark idle unless a wake-up came meanwhile; True when idle."""
        with self._cond:
            if not self._woken:
                self._idle = True
                self._cond.notify_all()
            return self._idle

    def park(self, timeout: float | None, *, wakeable: bool) -> None:
        """Block until closed, the timeout, or (when ``wakeable``) a wake-up."""
        with self._cond:
            self._cond.wait_for(lambda: self._closed or (wakeable and self._woken), timeout)

    def wait_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._idle, timeout)


class EmbeddingWorker:
    """Embeds pending memories in the background; see the module docstring."""

    def __init__(
        self,
        *,
        embedder: Embedder,
        fetch_pending: FetchPending,
        store: StoreVectors,
        max_input_bytes: int,
        batch_timeout_s: float,
        batch_size: int = BATCH_SIZE,
        backoff: Backoff | None = None,
        before_round: Callable[[], None] | None = None,
    ) -> None:
        if not 1 <= batch_size <= BATCH_SIZE:
            raise ValueError(f"batch_size must be 1 to {BATCH_SIZE}")
        self._embedder = embedder
        self._fetch_pending = fetch_pending
        self._store = store
        self._max_input_bytes = max_input_bytes
        self._batch_timeout_s = batch_timeout_s
        self._batch_size = batch_size
        self._backoff = backoff or Backoff()
        self._before_round = before_round
        self._signal = _Signal()
        self._running = False
        self._retry_at: float | None = None
        self._embedded = 0
        self._batches = 0
        self._failures = 0
        self._last_error: str | None = None
        self._last_reason: str | None = None

    # -- control -------------------------------------------------------------------------

    def notify(self) -> None:
        """Text was added or changed: look for pending memories soon. Any thread; never blocks
        on the worker."""
        self._signal.wake()

    def reconfigure(self, *, max_input_bytes: int, batch_timeout_s: float) -> None:
        """Config reload: applies from the next batch."""
        self._max_input_bytes = max_input_bytes
        self._batch_timeout_s = batch_timeout_s

    def stop(self) -> None:
        """End :meth:`run` at its next check. Any thread."""
        self._signal.close()

    @property
    def state(self) -> WorkerState:
        retry_at = self._retry_at
        return WorkerState(
            running=self._running,
            embedded=self._embedded,
            batches=self._batches,
            failures=self._failures,
            backoff_s=self._backoff.delay,
            retry_in_s=None if retry_at is None else max(0.0, retry_at - time.monotonic()),
            last_error=self._last_error,
            last_reason=self._last_reason,
        )

    def wait_idle(self, timeout: float) -> bool:
        """Block until the worker has looked and found nothing to do since the last notify
        (for tests and benchmarks). False on timeout, and while it is backing off."""
        return self._signal.wait_idle(timeout)

    # -- the loop ------------------------------------------------------------------------

    async def run(self) -> None:
        self._running = True
        try:
            while not self._signal.closed:
                await self._wait()
                if self._signal.closed:
                    break
                await self._round()
        finally:
            self._running = False
            self._signal.close()  # releases a thread still parked in _wait

    async def _wait(self) -> None:
        """Until woken; while backing off, until the retry time whatever wakes it."""
        while not self._signal.closed:
            retry_at = self._retry_at
            if retry_at is not None:
                remaining = retry_at - time.monotonic()
                if remaining <= 0:
                    self._retry_at = None
                    return
                await self._park(remaining, wakeable=False)
            elif self._signal.take():
                return
            elif self._signal.settle():
                await self._park(None, wakeable=True)

    async def _park(self, timeout: float | None, *, wakeable: bool) -> None:
        park = functools.partial(self._signal.park, timeout, wakeable=wakeable)
        await anyio.to_thread.run_sync(park, abandon_on_cancel=True)

    async def _round(self) -> None:
        """Embed batches until nothing is pending, a batch fails, or nothing could be stored.

        A store error (busy, I/O) counts as a failure like the provider's: the memories stay
        pending and the worker backs off. Nothing here may end the task.
        """
        try:
            if self._before_round is not None:
                await anyio.to_thread.run_sync(self._before_round)
            while not self._signal.closed:
                self._signal.take()  # a wake-up from here on means another look afterwards
                batch = await anyio.to_thread.run_sync(self._fetch_pending, self._batch_size)
                if not batch:
                    return
                vectors = await self._embed(batch)
                if vectors is None:
                    return
                pairs = list(zip(batch, vectors, strict=True))
                stored = await anyio.to_thread.run_sync(self._store, pairs)
                self._embedded += stored
                if stored == 0:
                    # Every memory changed while it was embedded, or its vector was unusable;
                    # the change's own notify (or the next write) brings it round again.
                    return
        except VenomError as error:
            self._failed(error.message, error.code)
        except Exception as exc:
            log.exception("the embedding worker's round failed")
            self._failed(f"embedding worker: {exc}", "internal")

    async def _embed(self, batch: Sequence[PendingText]) -> list[list[float]] | None:
        texts = [embedding_input(p.title, p.content, self._max_input_bytes) for p in batch]
        call = functools.partial(self._embedder.embed, texts, timeout_s=self._batch_timeout_s)
        self._batches += 1
        try:
            vectors = await in_daemon_thread(call)
        except VenomError as error:
            reason = error.reason if isinstance(error, EmbeddingError) else error.code
            self._failed(error.message, reason)
            return None
        except Exception as exc:  # a provider bug must not end the worker
            log.exception("embedding a batch failed")
            self._failed(f"embedding failed: {exc}", "internal")
            return None
        if self._backoff.delay is not None:
            log.warning("embedding works again")
        self._backoff.succeeded()
        self._last_error = self._last_reason = None
        return vectors

    def _failed(self, message: str, reason: str) -> None:
        self._failures += 1
        self._last_error, self._last_reason = message, reason
        first = self._backoff.delay is None
        delay = self._backoff.failed()
        self._retry_at = time.monotonic() + delay
        # Once a run of failures (a provider or database away), not once an attempt.
        log.log(
            logging.WARNING if first else logging.DEBUG,
            "embedding failed (%s); retrying in %g s, with backoff",
            message,
            delay,
        )
