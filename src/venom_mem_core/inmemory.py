"""A complete :class:`~venom_mem_core.ports.Store` in pure Python: no files, no SQLite, no I/O.

``InMemoryStore`` is the reference fake for the store port. Other tools may use it as a fake
in their own tests (``App(store=InMemoryStore(), clock=FixedClock())``), and it passes the same
contract suite as the SQLite store (:mod:`venom_mem_core.testing`). Nothing survives
:meth:`InMemoryStore.close` or the process.

Transactions. The published state is never mutated. ``write()`` takes the writer lock (so
writes are serialized), works on a copy of the published state, and publishes the copy only
when the block exits cleanly; an exception discards the copy, which is the rollback.
``read()`` takes a reference to the published state, so it sees one consistent snapshot for
as long as it runs, whatever commits meanwhile. A transaction object is dead once its block
exits. IDs come from counters that only go up, so an ID is never reused after a purge. As a
backstop to the use cases' own dedup, a second live memory with the same
``(space, content_sha256)`` raises ``conflict.memory_duplicate``; rows that break what SQLite's
keys and foreign keys enforce raise ``failed.store``.

Full-text search is SQLite FTS5's, computed by :mod:`venom_mem_core.fts` (its tokenizer,
Porter stemmer, BM25 with the RFC's weights, and snippets). The BM25 statistics are measured
over the live rows the caller may read (``where.access``), as the SQLite store does
(docs/adr/0003): a caller who reads everything gets FTS5's own numbers, a hidden row never
moves a visible one (MEM-06), and the other filters (spaces, kinds, tags, sessions) narrow the
hits without reordering them, as a ``WHERE`` around ``bm25()`` would. Best first, ties by
highest ID. The store declares :class:`~venom_mem_core.ports.RanksLikeFts5`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import attrs

from . import fts
from .errors import VenomError
from .grants import Access
from .ports import ERASE_PENDING, MemoryFilter, SessionFilter, SpaceSummary, StoreCounts
from .records import (
    IMPORTANCES,
    Client,
    ContextEntry,
    Memory,
    Session,
    SpaceDescription,
    Version,
)
from .search_options import RFC_WEIGHTS, Weights

if TYPE_CHECKING:
    from .ports import RanksLikeFts5, ReadTx, Store, WriteTx

__all__ = ["InMemoryStore"]

# --------------------------------------------------------------------------------------------
# State and transactions.


@attrs.define
class _State:
    """Every row. Published states are never mutated: a write works on :meth:`copy`."""

    memories: dict[int, Memory] = attrs.field(factory=dict)
    live_content: dict[tuple[str, bytes], int] = attrs.field(factory=dict)
    versions: dict[int, dict[int, Version]] = attrs.field(factory=dict)
    sessions: dict[int, Session] = attrs.field(factory=dict)
    clients: dict[str, Client] = attrs.field(factory=dict)
    spaces: dict[str, SpaceDescription] = attrs.field(factory=dict)
    meta: dict[str, str] = attrs.field(factory=lambda: {"next_principal": "1"})
    last_memory: int = 0
    last_session: int = 0

    def copy(self) -> _State:
        return _State(
            memories=dict(self.memories),
            live_content=dict(self.live_content),
            versions={memory: dict(kept) for memory, kept in self.versions.items()},
            sessions=dict(self.sessions),
            clients=dict(self.clients),
            spaces=dict(self.spaces),
            meta=dict(self.meta),
            last_memory=self.last_memory,
            last_session=self.last_session,
        )


def _store_error(message: str) -> VenomError:
    """What SQLite's keys and foreign keys would refuse, as the adapter reports it."""
    return VenomError("failed.store", message)


class _ReadTx:
    """Queries over one state. Dead once its ``with`` block has exited."""

    def __init__(self, state: _State, docs: dict[int, tuple[Memory, fts.Document]]) -> None:
        self._state: _State | None = state
        self._docs = docs

    def close(self) -> None:
        self._state = None

    @property
    def _s(self) -> _State:
        if self._state is None:
            raise VenomError("failed.internal", "this transaction has ended")
        return self._state

    def _doc(self, memory: Memory) -> fts.Document:
        cached = self._docs.get(memory.id)
        if cached is not None and cached[0] is memory:
            return cached[1]
        doc = fts.Document.of(memory.title, memory.content, memory.tags)
        self._docs[memory.id] = (memory, doc)
        return doc

    def get_memory(self, id: int) -> Memory | None:
        return self._s.memories.get(id)

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        id_ = self._s.live_content.get((space, content_sha256))
        return None if id_ is None else self._s.memories[id_]

    def get_version(self, memory: int, revision: int) -> Version | None:
        return self._s.versions.get(memory, {}).get(revision)

    def list_versions(self, memory: int) -> list[Version]:
        kept = self._s.versions.get(memory, {})
        return [kept[revision] for revision in sorted(kept, reverse=True)]

    def rank_text(self, tokens: Sequence[str], where: MemoryFilter, limit: int) -> list[int]:
        return [id_ for id_, _ in self.rank_text_scored(tokens, where, limit)]

    def rank_text_scored(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights = RFC_WEIGHTS,
    ) -> list[tuple[int, float]]:
        phrases = fts.query_phrases(tokens)
        memories = self._s.memories
        if not any(phrases) or limit <= 0:
            return []
        corpus = {
            m.id: self._doc(m)
            for m in memories.values()
            if m.deleted is None
            and where.access.allows(id=m.id, owner=m.author.principal, space=m.space)
        }
        scores = fts.bm25_scores(corpus, phrases, weights)
        ranked = [id_ for id_ in scores if where.matches(memories[id_])]
        ranked.sort(key=lambda id_: (-scores[id_], -id_))
        return [(id_, scores[id_]) for id_ in ranked[:limit]]

    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]:
        phrases = fts.query_phrases(tokens)
        snippets: dict[int, str] = {}
        for id_ in ids:
            memory = self._s.memories.get(id_)
            if memory is None or memory.deleted is not None:
                continue
            doc = self._doc(memory)
            if doc.matches(phrases):
                snippets[id_] = fts.snippet(memory.content, doc, phrases)
        return snippets

    def list_memories(self, where: MemoryFilter, after: int | None, limit: int) -> list[Memory]:
        ids = sorted(
            (
                id_
                for id_, memory in self._s.memories.items()
                if (after is None or id_ < after) and where.matches(memory)
            ),
            reverse=True,
        )
        return [self._s.memories[id_] for id_ in ids[:limit]]

    def space_summaries(self, access: Access) -> list[SpaceSummary]:
        counts: dict[str, int] = {}
        updated: dict[str, str] = {}
        for memory in self._s.memories.values():
            if memory.deleted is not None or not access.allows(
                id=memory.id, owner=memory.author.principal, space=memory.space
            ):
                continue
            counts[memory.space] = counts.get(memory.space, 0) + 1
            updated[memory.space] = max(updated.get(memory.space, ""), memory.updated)
        described = {
            space: d
            for space, d in self._s.spaces.items()
            if access.everything or space in access.spaces
        }
        for space, d in described.items():
            updated[space] = max(updated.get(space, ""), d.updated)
        return [
            SpaceSummary(
                space=space,
                memories=counts.get(space, 0),
                updated=updated[space],
                description=described[space].description if space in described else None,
            )
            for space in sorted(counts.keys() | described.keys())
        ]

    def space_descriptions(self, spaces: Sequence[str]) -> dict[str, SpaceDescription]:
        return {space: self._s.spaces[space] for space in spaces if space in self._s.spaces}

    def _live_matching(self, where: MemoryFilter) -> list[Memory]:
        live = attrs.evolve(where, include_deleted=False)
        return [m for m in self._s.memories.values() if live.matches(m)]

    def context_entries(self, where: MemoryFilter, offset: int, limit: int) -> list[ContextEntry]:
        # Stable sorts, last key first: highest ID, then latest update, then importance.
        rows = sorted(self._live_matching(where), key=lambda m: m.id, reverse=True)
        rows.sort(key=lambda m: m.updated, reverse=True)
        rows.sort(key=lambda m: IMPORTANCES.index(m.importance))
        return [ContextEntry.of(m) for m in rows[offset : offset + limit]]

    def count_memories(self, where: MemoryFilter) -> int:
        return len(self._live_matching(where))

    def get_session(self, id: int) -> Session | None:
        return self._s.sessions.get(id)

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        for session in self._s.sessions.values():
            if session.harness == harness and session.harness_session == harness_session:
                return session
        return None

    def list_sessions(self, where: SessionFilter, after: int | None, limit: int) -> list[Session]:
        def keep(session: Session) -> bool:
            return (
                (after is None or session.id < after)
                and where.access.allows(id=session.id, owner=session.reported_by.principal)
                and (where.harness is None or session.harness == where.harness)
                and (
                    where.harness_session is None
                    or session.harness_session == where.harness_session
                )
                and (where.parent is None or session.parent == where.parent)
            )

        rows = sorted(
            (s for s in self._s.sessions.values() if keep(s)), key=lambda s: s.id, reverse=True
        )
        return rows[:limit]

    def get_client(self, name: str) -> Client | None:
        return self._s.clients.get(name)

    def get_client_by_principal(self, principal: str) -> Client | None:
        for client in self._s.clients.values():
            if client.principal == principal:
                return client
        return None

    def list_clients(self) -> list[Client]:
        return [self._s.clients[name] for name in sorted(self._s.clients)]

    def get_meta(self, key: str) -> str | None:
        return self._s.meta.get(key)

    def counts(self) -> StoreCounts:
        live = sum(1 for m in self._s.memories.values() if m.deleted is None)
        return StoreCounts(
            memories=live,
            deleted=len(self._s.memories) - live,
            versions=sum(len(kept) for kept in self._s.versions.values()),
            sessions=len(self._s.sessions),
            vectors=0,
            pending=live,  # live with no vector: this store keeps none
        )


class _WriteTx(_ReadTx):
    """A private copy of the state; the store publishes it if the block exits cleanly."""

    def _claim_content(self, memory: Memory) -> None:
        if memory.deleted is not None:
            return
        key = (memory.space, memory.content_sha256)
        holder = self._s.live_content.get(key)
        if holder is not None and holder != memory.id:
            raise VenomError.duplicate_memory(memory.space, holder)
        self._s.live_content[key] = memory.id

    def _release_content(self, memory: Memory) -> None:
        key = (memory.space, memory.content_sha256)
        if self._s.live_content.get(key) == memory.id:
            del self._s.live_content[key]

    def _check_session_ref(self, session: int | None) -> None:
        if session is not None and session not in self._s.sessions:
            raise _store_error(f"no session s{session} to refer to")

    def insert_memory(self, memory: Memory) -> int:
        self._check_session_ref(memory.session)
        id_ = self._s.last_memory + 1
        row = attrs.evolve(memory, id=id_)
        self._claim_content(row)
        self._s.last_memory = id_
        self._s.memories[id_] = row
        return id_

    def replace_memory(self, memory: Memory) -> None:
        old = self._s.memories.get(memory.id)
        if old is None:
            raise _store_error(f"no memory m{memory.id} to replace")
        self._check_session_ref(memory.session)
        self._release_content(old)
        try:
            self._claim_content(memory)
        except VenomError:
            self._claim_content(old)
            raise
        self._s.memories[memory.id] = memory

    def delete_memory(self, id: int) -> None:
        old = self._s.memories.pop(id, None)
        if old is not None:
            self._release_content(old)
        self._s.versions.pop(id, None)

    def insert_version(self, version: Version) -> None:
        if version.memory not in self._s.memories:
            raise _store_error(f"no memory m{version.memory} for a version")
        kept = self._s.versions.setdefault(version.memory, {})
        if version.revision in kept:
            raise _store_error(f"m{version.memory} already has revision {version.revision}")
        kept[version.revision] = version

    def prune_versions(self, memory: int, keep: int) -> None:
        kept = self._s.versions.get(memory)
        if not kept:
            return
        for revision in sorted(kept, reverse=True)[max(keep, 0) :]:
            del kept[revision]

    def expired_tombstones(self, deleted_before: str) -> list[Memory]:
        return sorted(
            (
                m
                for m in self._s.memories.values()
                if m.deleted is not None and m.deleted < deleted_before
            ),
            key=lambda m: m.id,
        )

    def insert_session(self, session: Session) -> int:
        if session.parent is not None and session.parent not in self._s.sessions:
            raise _store_error(f"no session s{session.parent} to be a parent")
        if session.harness_session is not None and (
            self.find_session(session.harness, session.harness_session) is not None
        ):
            raise _store_error("a session with this harness and harness_session exists")
        id_ = self._s.last_session + 1
        self._s.last_session = id_
        self._s.sessions[id_] = attrs.evolve(session, id=id_)
        return id_

    def replace_session(self, session: Session) -> None:
        if session.id not in self._s.sessions:
            raise _store_error(f"no session s{session.id} to replace")
        self._s.sessions[session.id] = session

    def delete_session(self, id: int) -> None:
        if self._s.sessions.pop(id, None) is None:
            return
        for child in [s for s in self._s.sessions.values() if s.parent == id]:
            self._s.sessions[child.id] = attrs.evolve(child, parent=None)
        for memory in [m for m in self._s.memories.values() if m.session == id]:
            self._s.memories[memory.id] = attrs.evolve(memory, session=None)

    def insert_client(self, client: Client) -> None:
        if client.name in self._s.clients:
            raise VenomError("conflict.client_exists", f"a client named {client.name} exists")
        if self.get_client_by_principal(client.principal) is not None:
            raise _store_error(f"principal {client.principal} already has a client")
        self._s.clients[client.name] = client

    def delete_client(self, name: str) -> None:
        self._s.clients.pop(name, None)

    def set_meta(self, key: str, value: str) -> None:
        self._s.meta[key] = value

    def forget_meta(self, key: str) -> None:
        self._s.meta.pop(key, None)

    def set_space_description(self, description: SpaceDescription) -> None:
        self._s.spaces[description.space] = description

    def delete_space_description(self, space: str) -> None:
        self._s.spaces.pop(space, None)


class InMemoryStore:
    """The store port over Python dicts: for tests, fakes and library use with no files."""

    ranks_like_fts5: Final = True  # venom_mem_core.fts: FTS5's terms, scores and snippets

    def __init__(self) -> None:
        self._writer = threading.RLock()  # held for a whole write: writes run one at a time
        self._publish = threading.Lock()  # held only to swap or take the published state
        self._state = _State()
        self._writing = False
        self._closed = False
        # Index cache shared by every snapshot, keyed by memory ID and checked by identity:
        # a record is immutable, so the same object always has the same terms.
        self._docs: dict[int, tuple[Memory, fts.Document]] = {}

    def _check_open(self) -> None:
        if self._closed:
            raise VenomError("failed.internal", "the in-memory store is closed")

    @contextmanager
    def read(self) -> Iterator[ReadTx]:
        with self._publish:
            self._check_open()
            state = self._state
        tx = _ReadTx(state, self._docs)
        try:
            yield tx
        finally:
            tx.close()

    @contextmanager
    def write(self) -> Iterator[WriteTx]:
        with self._writer:
            self._check_open()
            if self._writing:
                raise VenomError("failed.internal", "store.write() is not reentrant")
            self._writing = True
            try:
                tx = _WriteTx(self._state.copy(), self._docs)
                try:
                    yield tx
                    state = tx._s
                finally:
                    tx.close()
                with self._publish:
                    self._state = state
                self._forget_purged()
            finally:
                self._writing = False

    def _forget_purged(self) -> None:
        if len(self._docs) > len(self._state.memories):
            for id_ in list(self._docs):
                if id_ not in self._state.memories:
                    self._docs.pop(id_, None)

    def erase_traces(self) -> None:
        """A purged row is gone once no snapshot refers to it: only the marker goes."""
        with self.write() as tx:
            assert isinstance(tx, _WriteTx)
            tx.forget_meta(ERASE_PENDING)

    def erase_pending_traces(self) -> None:
        with self.read() as tx:
            pending = tx.get_meta(ERASE_PENDING) is not None
        if pending:
            self.erase_traces()

    def describe(self) -> dict[str, Any]:
        return {
            "path": ":memory:",
            "schema_version": 3,
            "sqlite_version": "none",
            "engine": "in-memory",
            "bytes": 0,
        }

    def close(self) -> None:
        with self._writer, self._publish:
            self._closed = True
            self._state = _State()
            self._docs.clear()

    def __enter__(self) -> InMemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


if TYPE_CHECKING:
    _check: Store = InMemoryStore()
    _ranks: RanksLikeFts5 = InMemoryStore()
