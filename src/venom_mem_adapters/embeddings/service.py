"""EmbeddingService: embeddings in the daemon, wired once by the composition root.

It owns the :class:`VectorIndex` and the :class:`EmbeddingWorker`, and keeps the index in step
with the store (docs/adr/0007):

* At :meth:`~EmbeddingService.start`, every live vector of the configured model is loaded
  into the matrix in one read; vectors of another model (or of the wrong length) met on the
  way are then deleted, so their memories become pending.
* The worker stores a batch in one write transaction and puts the rows in the index *inside*
  that transaction, so no other write can commit between the two.
* Every other change reaches the index through the daemon's event log, whose listeners run
  right after the commit, in the writing thread, before the writer answers:
  ``memory.deleted`` and ``memory.purged`` drop the row (the ``memories_vector_stale``
  trigger or the cascade has dropped the vector); ``memory.updated`` re-reads the memory and
  its vector and updates or drops the row (a kind or tags change keeps the vector, a title or
  content change loses it); ``session.purged`` clears that session from the rows;
  ``memory.added``, ``memory.updated`` and ``memory.restored`` wake the worker.
* Both paths take one upkeep lock, so a re-read never interleaves with the worker's
  transaction.

The index is the app's vector search (``app.vectors``), so the core's memory.search is hybrid
and memory.get's ``embedding`` says whether the memory has a row; the use case embeds the
query itself, through ``app.embedder`` (docs/adr/0026).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

import apsw
import attrs

from venom_mem_core.config import EmbeddingsConfig, is_loopback_url
from venom_mem_core.ports import Embedder
from venom_mem_core.usecases.app import App

from ..sqlite import vectors
from ..sqlite.store import SqliteStore
from ..sqlite.tx import SqliteReadTx
from .http_embedder import HttpEmbedder
from .vector_index import RowMeta, VectorIndex
from .worker import Backoff, EmbeddingWorker

if TYPE_CHECKING:
    from ..daemon.ops.doctor import EmbeddingFacts

__all__ = ["EmbeddingService", "EventFeed", "embedder_from_config"]

log = logging.getLogger("venom_mem.embeddings")

PENDING_WARN_AFTER = timedelta(hours=1)
# Spare rows allocated at load beyond the live memories (untouched, so not resident).
_SPARE_FRACTION = 0.125
_MIN_SPARE = 1024


class EventFeed(Protocol):
    """What the service reads of the daemon's EventLog."""

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]: ...

    def after(self, seq: int) -> list[dict[str, Any]]: ...

    @property
    def last_seq(self) -> int: ...


def embedder_from_config(config: EmbeddingsConfig) -> HttpEmbedder | None:
    """The provider the config names, or None when ``provider = "off"``."""
    if config.provider != "http":
        return None
    return HttpEmbedder(
        base_url=config.base_url,
        model=config.model,
        dimensions=config.dimensions,
        api_key=config.api_key,
    )


def _connection(tx: SqliteReadTx) -> apsw.Connection:
    """The apsw connection under a store transaction."""
    return tx.connection


def _meta(facets: vectors.MemoryFacets) -> RowMeta:
    return RowMeta(
        space=facets.space,
        author=facets.author,
        kind=facets.kind,
        tags=facets.tags,
        session=facets.session,
    )


def _memory_number(value: Any) -> int | None:
    if isinstance(value, str) and value.startswith("m") and value[1:].isdigit():
        return int(value[1:])
    return None


class EmbeddingService:
    """Embeddings for one daemon: the index (made the app's ``vectors``), the worker and
    doctor's facts."""

    def __init__(
        self,
        *,
        app: App,
        store: SqliteStore,
        config: EmbeddingsConfig,
        events: EventFeed | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        embedder = app.embedder
        if config.provider != "http" or embedder is None:
            raise ValueError("EmbeddingService needs provider http and app.embedder set")
        if embedder.model != config.model or embedder.dimensions != config.dimensions:
            raise ValueError("app.embedder does not match the embeddings config")
        self._app = app
        self._store = store
        self._config = config
        self._events = events
        self._embedder = embedder
        self.index = VectorIndex(model=config.model, dimensions=config.dimensions)
        app.vectors = self.index
        self.worker = EmbeddingWorker(
            embedder=embedder,
            fetch_pending=self._fetch_pending,
            store=self._store_vectors,
            max_input_bytes=config.max_input_bytes,
            batch_timeout_s=config.batch_timeout_ms / 1000,
            backoff=backoff,
            before_round=self._resync,
        )
        self._upkeep = threading.Lock()
        self._seen = 0
        self._unsubscribe: Callable[[], None] | None = None
        self._stale: set[int] = set()  # rows whose refresh failed; the worker retries them
        self._started: float | None = None
        self.dropped_at_start = 0
        self.bad_vectors = 0

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Blocking: load the matrix, drop other models' vectors, follow the event log.

        Call it before serving (it takes about half a second per 100k vectors). The load
        reads every vector once; only if it met vectors of another model (or of the wrong
        length) does a write transaction delete them, and their memories become pending.
        """
        model, dimensions = self._config.model, self._config.dimensions
        with self._upkeep:
            if self._events is not None:
                self._seen = self._events.last_seq
                self._unsubscribe = self._events.subscribe(self._on_events)
            with self._store.read() as tx:
                rows = vectors.load_vectors(
                    _connection(tx),
                    model,
                    dimensions,
                    spare_fraction=_SPARE_FRACTION,
                    min_spare=_MIN_SPARE,
                )
            self.index.load(
                rows.ids,
                rows.matrix,
                spaces=rows.spaces,
                authors=rows.authors,
                kinds=rows.kinds,
                tags=rows.tags,
                sessions=rows.sessions,
            )
            if rows.stale:
                with self._store.write() as tx:
                    self.dropped_at_start = vectors.delete_stale_vectors(
                        _connection(tx), model, dimensions
                    )
                log.info("deleted %d vectors of another model", self.dropped_at_start)
        self._started = time.time()

    async def run(self) -> None:
        """The background worker, until cancelled or :meth:`close`."""
        await self.worker.run()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.worker.stop()
        close = getattr(self._embedder, "close", None)
        if callable(close):
            close()

    def reconfigure(self, config: EmbeddingsConfig) -> None:
        """Config reload: take the keys that apply without a restart (section 11).

        ``provider``, ``base_url``, ``model``, ``dimensions`` and ``api_key`` keep their values
        until the daemon restarts.
        """
        self._config = attrs.evolve(
            config,
            provider=self._config.provider,
            base_url=self._config.base_url,
            model=self._config.model,
            dimensions=self._config.dimensions,
            api_key=self._config.api_key,
        )
        self.worker.reconfigure(
            max_input_bytes=self._config.max_input_bytes,
            batch_timeout_s=self._config.batch_timeout_ms / 1000,
        )

    def notify(self) -> None:
        """Text was added or changed outside the event log: wake the worker."""
        self.worker.notify()

    # -- keeping the index in step -------------------------------------------------------

    def _on_events(self) -> None:
        """EventLog listener: runs after each commit, in the thread that committed."""
        wake = False
        try:
            with self._upkeep:
                assert self._events is not None
                batch = self._events.after(self._seen)
                if batch:
                    self._seen = int(batch[-1]["seq"])
                refresh: set[int] = set()
                for event in batch:
                    kind, data = event.get("type"), event.get("data") or {}
                    number = _memory_number(data.get("memory"))
                    if kind in ("memory.deleted", "memory.purged") and number is not None:
                        self.index.remove(number)
                        refresh.discard(number)
                    elif kind == "memory.updated" and number is not None:
                        refresh.add(number)
                        wake = True
                    elif kind in ("memory.added", "memory.restored"):
                        wake = True
                    elif kind == "session.purged":
                        session = data.get("session")
                        if isinstance(session, str) and session[1:].isdigit():
                            self.index.clear_session(int(session[1:]))
                if refresh:
                    self._refresh(refresh)
        except Exception:  # the write has committed; its answer must not fail because of us
            log.exception("keeping the vector index in step failed")
        if wake:
            self.worker.notify()

    def _refresh(self, numbers: set[int]) -> None:
        """Make the index rows of these memories match the store. Holds the upkeep lock."""
        try:
            with self._store.read() as tx:
                connection = _connection(tx)
                found = {
                    n: vectors.stored_vector(
                        connection, n, self._config.model, self._config.dimensions
                    )
                    for n in numbers
                }
        except Exception:
            # Safe side: no row rather than a stale one; the worker's next round retries.
            log.exception("re-reading memories for the vector index failed")
            for number in numbers:
                self.index.remove(number)
            self._stale |= numbers
            self.worker.notify()
            return
        for number, stored in found.items():
            if stored is None:
                self.index.remove(number)
            elif not self.index.update_meta(number, _meta(stored.facets)):
                self.index.upsert(number, stored.vector, _meta(stored.facets))

    def _resync(self) -> None:
        """Before each worker round: retry refreshes that failed."""
        with self._upkeep:
            if self._stale:
                numbers, self._stale = self._stale, set()
                self._refresh(numbers)

    def _fetch_pending(self, limit: int) -> list[vectors.PendingText]:
        with self._store.read() as tx:
            return vectors.pending_memories(_connection(tx), limit=limit)

    def _store_vectors(self, items: Sequence[tuple[vectors.PendingText, Sequence[float]]]) -> int:
        """Write a batch's vectors and index them, in one write transaction."""
        added: list[int] = []
        with self._upkeep:
            try:
                with self._store.write() as tx:
                    connection = _connection(tx)
                    for pending, vector in items:
                        try:
                            stored = vectors.upsert_vector(
                                connection, pending, self._config.model, vector
                            )
                        except ValueError:
                            self.bad_vectors += 1
                            log.warning("m%d: the provider returned a zero vector", pending.id)
                            continue
                        if stored is not None:
                            self.index.upsert(pending.id, stored.vector, _meta(stored.facets))
                            added.append(pending.id)
            except BaseException:
                for number in added:  # rolled back: the rows must go too
                    self.index.remove(number)
                raise
        return len(added)

    # -- doctor --------------------------------------------------------------------------

    def embedding_facts(self) -> EmbeddingFacts:
        """What doctor's embeddings checks need from the worker. Cheap and non-blocking, so
        doctor can call it on the reactor.

        ``last_error``/``last_ok`` are the provider's latest outcome (a wrong vector length
        included). ``pending_over_hour`` is given as 0 while the daemon is younger than an
        hour and the provider answers: a backlog from before the start is still draining.
        Otherwise doctor counts it in the store, by when each memory's text last changed, so
        a memory stuck since yesterday warns under an on-demand daemon minutes old.
        ``vectors`` is the number of rows in the index, the stored vectors of the configured
        model.
        """
        facts: EmbeddingFacts = {"vectors": len(self.index)}
        health = getattr(self._embedder, "last_health", None)
        last_ok = getattr(self._embedder, "last_ok", None)
        if health is not None:
            facts["last_error"] = None if health.ok else str(health.message)
        if isinstance(last_ok, str):
            facts["last_ok"] = last_ok
        up_s = 0.0 if self._started is None else time.time() - self._started
        failing = health is not None and not health.ok
        if up_s < PENDING_WARN_AFTER.total_seconds() and not failing:
            facts["pending_over_hour"] = 0
        return facts

    def status(self) -> dict[str, Any]:
        """Blocking: counts from the store and the worker's state, for diagnostics."""
        with self._store.read() as tx:
            connection = _connection(tx)
            pending = vectors.count_pending(connection)
            stored = vectors.count_vectors(connection)
        state = self.worker.state
        return {
            "model": self._config.model,
            "dimensions": self._config.dimensions,
            "remote": not is_loopback_url(self._config.base_url),
            "pending": pending,
            "vectors": stored,
            "indexed": len(self.index),
            "bad_vectors": self.bad_vectors,
            "dropped_at_start": self.dropped_at_start,
            "worker": attrs.asdict(state),
        }
