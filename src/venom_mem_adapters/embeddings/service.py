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

On a store several daemons share (PostgreSQL, docs/adr/0028) the other daemons' events are
relayed into the log (postgres/notify.py), and their vectors are written by their own
workers, which no event announces. So an event the log marks relayed is handled as one whose
vector may have changed anywhere: ``memory.added``, ``memory.updated`` and
``memory.restored`` replace the row with what the store holds now (or drop it), wake the
worker, and put the memory on an *awaiting* list; the worker's next look for pending
memories settles every awaiting memory in the same snapshot (its vector stored by another
daemon: indexed; still pending: embedded here; gone: forgotten), so a vector another daemon
stores after the relay is never missed. This daemon's own new text awaits too (``shared``):
the relay wakes the other daemons' workers, and whichever embeds it first leaves it pending
nowhere, so without that its own daemon would never index it.
:meth:`EmbeddingService.reload` reloads the whole index, for when relayed events may have
been lost (the listener reconnected).

The service reads and writes ``memory_vectors`` only through the store's
:class:`~.vector_rows.VectorRowStore` (``store.vector_rows()``), one code path for every store.

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

import attrs

from venom_mem_core.config import EmbeddingsConfig, is_loopback_url
from venom_mem_core.ports import Embedder
from venom_mem_core.usecases.app import App

from .http_embedder import HttpEmbedder
from .vector_index import RowMeta, VectorIndex
from .vector_rows import HasVectorRows, MemoryFacets, PendingText
from .worker import Backoff, EmbeddingWorker

if TYPE_CHECKING:
    from .facts import EmbeddingFacts

__all__ = ["EmbeddingService", "EventFeed", "embedder_from_config"]

log = logging.getLogger("venom_mem.embeddings")

PENDING_WARN_AFTER = timedelta(hours=1)
# Another daemon's events that may mean its worker stores (or has stored) a vector.
_TEXT_EVENTS = frozenset({"memory.added", "memory.updated", "memory.restored"})
_SETTLE_PER_ROUND = 256  # awaiting memories the worker's look for pending work re-reads
# Spare rows allocated at load beyond the live memories (untouched, so not resident).
_SPARE_FRACTION = 0.125
_MIN_SPARE = 1024


class EventFeed(Protocol):
    """What the service reads of the daemon's EventLog."""

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]: ...

    def after(self, seq: int) -> list[dict[str, Any]]: ...

    def is_relayed(self, seq: int) -> bool: ...

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


def _meta(facets: MemoryFacets) -> RowMeta:
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
        store: HasVectorRows,
        config: EmbeddingsConfig,
        events: EventFeed | None = None,
        backoff: Backoff | None = None,
        shared: bool = False,
    ) -> None:
        embedder = app.embedder
        if config.provider != "http" or embedder is None:
            raise ValueError("EmbeddingService needs provider http and app.embedder set")
        if embedder.model != config.model or embedder.dimensions != config.dimensions:
            raise ValueError("app.embedder does not match the embeddings config")
        self._app = app
        self._rows = store.vector_rows()
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
        # Memories another daemon wrote whose vector may yet be stored by any daemon: the
        # worker's next look for pending memories settles them (the module docstring).
        self._awaiting: set[int] = set()
        # On a shared store this daemon's own new text may be embedded first by another
        # daemon, whose worker woke on the relay: then it is never pending here again, so it
        # awaits like the relayed ones until some daemon's vector is indexed.
        self._shared = shared
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
            stale = self._load()
            if stale:
                with self._rows.write() as writes:
                    self.dropped_at_start = writes.delete_stale_vectors(model, dimensions)
                log.info("deleted %d vectors of another model", self.dropped_at_start)
        self._started = time.time()

    def reload(self) -> None:
        """Blocking: replace the whole index with the store's vectors, in one snapshot.

        For a store several daemons share, when relayed events may have been lost (the
        event listener lost the database and is back): whatever they said, the store has.
        """
        with self._upkeep:
            self._load()
            self._awaiting.clear()
            self._stale.clear()
        self.worker.notify()  # a memory whose event was lost may be pending

    def _load(self) -> int:
        """Load the index from one snapshot; returns how many vectors are of another model.
        Holds the upkeep lock."""
        with self._rows.read() as reads:
            rows = reads.load_vectors(
                self._config.model,
                self._config.dimensions,
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
        return len(rows.stale)

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
                replace: set[int] = set()  # another daemon's: its vector may be anything now
                own: set[int] = set()  # this daemon's new text, on a shared store
                for event in batch:
                    kind, data = event.get("type"), event.get("data") or {}
                    number = _memory_number(data.get("memory"))
                    relayed = self._events.is_relayed(int(event["seq"]))
                    if kind in ("memory.deleted", "memory.purged") and number is not None:
                        self.index.remove(number)
                        refresh.discard(number)
                        replace.discard(number)
                        self._awaiting.discard(number)
                    elif relayed and number is not None and kind in _TEXT_EVENTS:
                        replace.add(number)
                        wake = True
                    elif kind == "memory.updated" and number is not None:
                        refresh.add(number)
                        wake = True
                    elif kind in ("memory.added", "memory.restored"):
                        wake = True
                    elif kind == "session.purged":
                        session = data.get("session")
                        if isinstance(session, str) and session[1:].isdigit():
                            self.index.clear_session(int(session[1:]))
                    if self._shared and not relayed and number is not None and kind in _TEXT_EVENTS:
                        own.add(number)
                if refresh:
                    self._refresh(refresh - replace)
                if replace:
                    self._refresh(replace, replace=True)
                    # Those with no vector yet: whichever daemon embeds them, we index it.
                    self._awaiting |= {n for n in replace if n not in self.index}
                self._awaiting |= {n for n in own if n not in self.index}
        except Exception:  # the write has committed; its answer must not fail because of us
            log.exception("keeping the vector index in step failed")
        if wake:
            self.worker.notify()

    def _refresh(self, numbers: set[int], *, replace: bool = False) -> None:
        """Make the index rows of these memories match the store. Holds the upkeep lock.

        A memory's own change (its text changed, so its vector was deleted, or only its
        facets did) needs no copy of the vector; ``replace`` copies it too, for a memory
        another daemon wrote, whose stored vector may be newer than the row."""
        if not numbers:
            return
        model, dimensions = self._config.model, self._config.dimensions
        try:
            with self._rows.read() as reads:
                found = {n: reads.stored_vector(n, model, dimensions) for n in numbers}
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
            elif replace or not self.index.update_meta(number, _meta(stored.facets)):
                self.index.upsert(number, stored.vector, _meta(stored.facets))

    def _resync(self) -> None:
        """Before each worker round: retry refreshes that failed."""
        with self._upkeep:
            if self._stale:
                numbers, self._stale = self._stale, set()
                self._refresh(numbers)

    def _fetch_pending(self, limit: int) -> list[PendingText]:
        """The worker's next batch; settles the awaiting memories in the same snapshot."""
        if not self._awaiting:  # without the lock: a stale look only delays to the next round
            with self._rows.read() as reads:
                return reads.pending_memories(limit=limit)
        model, dimensions = self._config.model, self._config.dimensions
        with self._upkeep:
            with self._rows.read() as reads:
                pending = reads.pending_memories(limit=limit)
                # Oldest first, a bounded number a round: a burst of adds settles over rounds.
                settling = sorted(self._awaiting)[:_SETTLE_PER_ROUND]
                awaiting = {n: reads.stored_vector(n, model, dimensions) for n in settling}
            batch = {p.id for p in pending}
            for number, stored in awaiting.items():
                if stored is not None:  # stored by another daemon (or by us): index it
                    self.index.upsert(number, stored.vector, _meta(stored.facets))
                    self._awaiting.discard(number)
                elif number not in batch and len(pending) < limit:
                    # Every pending memory is in this batch: this one is gone or deleted.
                    self._awaiting.discard(number)
            return pending

    def _store_vectors(self, items: Sequence[tuple[PendingText, Sequence[float]]]) -> int:
        """Write a batch's vectors and index them, in one write transaction."""
        added: list[int] = []
        with self._upkeep:
            try:
                with self._rows.write() as writes:
                    for pending, vector in items:
                        try:
                            stored = writes.upsert_vector(pending, self._config.model, vector)
                        except ValueError:
                            self.bad_vectors += 1
                            log.warning("m%d: the provider returned a zero vector", pending.id)
                            continue
                        if stored is not None:
                            self.index.upsert(pending.id, stored.vector, _meta(stored.facets))
                            added.append(pending.id)
                self._awaiting.difference_update(added)
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
        with self._rows.read() as reads:
            pending = reads.count_pending()
            stored = reads.count_vectors()
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
