"""The ports the use cases need, as Protocols: a store, a clock, an embedder and an event sink.

The store is a unit of work: ``with store.write() as tx`` is one IMMEDIATE transaction that
commits when the block exits cleanly and rolls back when it raises; ``with store.read() as
tx`` sees one committed snapshot. All domain rules (dedup, revisions, versions, provenance,
grants) live in the use cases, so a store only keeps rows and answers queries. The contract
suite in :mod:`venom_mem_core.testing` proves a store behaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from .fts import CorpusStats
from .grants import Access
from .records import (
    Client,
    ContextEntry,
    InactiveSpace,
    Link,
    Memory,
    Provenance,
    Session,
    SpaceDescription,
    Version,
)
from .search_options import RFC_WEIGHTS, Weights

__all__ = [
    "ERASE_PENDING",
    "Clock",
    "ConcurrentWrites",
    "Embedder",
    "EventSink",
    "MemoryFilter",
    "RanksAmong",
    "RanksLikeFts5",
    "ReadTx",
    "SessionFilter",
    "SharedPrincipals",
    "SpaceSummary",
    "Store",
    "StoreCounts",
    "StoredVectors",
    "VectorSearch",
    "WriteTx",
]

# meta key: purged text may still be in a file beside the database (the WAL). A purge sets it
# in its own transaction, so the obligation commits with the delete and outlives any crash;
# Store.erase_traces clears it once the text is gone from every file.
ERASE_PENDING = "erase_pending"


@attrs.frozen(kw_only=True)
class MemoryFilter:
    """Which memories a search or list considers, applied before any ranking.

    ``access`` is the caller's readable set; ``None`` members mean "no restriction".
    ``tags`` must all be present. ``include_deleted`` admits tombstones (lists only).
    ``branch``: a memory with branches passes only if they include it; one without passes.
    ``exclude_ids`` and ``exclude_spaces`` keep those memories and spaces out (superseded
    memories and inactive spaces, docs/adr/0042); empty, as by default, they exclude nothing.
    """

    access: Access
    spaces: frozenset[str] | None = None
    kinds: frozenset[str] | None = None
    tags: frozenset[str] = frozenset()
    sessions: frozenset[int] | None = None
    importances: frozenset[str] | None = None
    branch: str | None = None
    include_deleted: bool = False
    exclude_ids: frozenset[int] = frozenset()
    exclude_spaces: frozenset[str] = frozenset()

    def matches(self, memory: Memory) -> bool:
        """The same predicate in Python, for stores without SQL and for tests."""
        return (
            (self.include_deleted or memory.deleted is None)
            and self.access.allows(id=memory.id, owner=memory.author.principal, space=memory.space)
            and (self.spaces is None or memory.space in self.spaces)
            and (self.kinds is None or memory.kind in self.kinds)
            and self.tags.issubset(memory.tags)
            and (self.sessions is None or memory.session in self.sessions)
            and (self.importances is None or memory.importance in self.importances)
            and (self.branch is None or not memory.branches or self.branch in memory.branches)
            and memory.id not in self.exclude_ids
            and memory.space not in self.exclude_spaces
        )


@attrs.frozen(kw_only=True)
class SessionFilter:
    access: Access
    harness: str | None = None
    harness_session: str | None = None
    parent: int | None = None


@attrs.frozen(kw_only=True)
class SpaceSummary:
    """A space's live memories readable by the caller, and its description if it has one.
    ``updated`` is the latest of those memories' and the description's times."""

    space: str
    memories: int
    updated: str
    description: str | None = None


@attrs.frozen(kw_only=True)
class StoreCounts:
    memories: int
    deleted: int
    versions: int
    sessions: int
    vectors: int
    pending: int


class ReadTx(Protocol):
    """Queries over one committed snapshot."""

    def get_memory(self, id: int) -> Memory | None:
        """The memory with this ID, live or deleted; ``None`` if it never existed or was purged."""

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None: ...

    def get_version(self, memory: int, revision: int) -> Version | None: ...

    def list_versions(self, memory: int) -> list[Version]:
        """Kept versions, newest revision first."""

    def rank_text(self, tokens: Sequence[str], where: MemoryFilter, limit: int) -> list[int]:
        """IDs of live rows passing ``where`` that match any token, best first.

        A token matches a row whose title, content or tags hold its words in a row. The order
        is the store's relevance, ties by highest ID, measured from the rows readable through
        ``where.access`` only, so an unreadable row never moves a readable one; the other
        filters narrow the hits without reordering them. RFC-0020's order is FTS5's BM25 with
        weights title 5, content 1, tags 3 (:mod:`venom_mem_core.fts`); a store that gives
        exactly that declares :class:`RanksLikeFts5`.
        """

    def rank_text_scored(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights = RFC_WEIGHTS,
    ) -> list[tuple[int, float]]:
        """:meth:`rank_text` with each row's score, positive, higher is better, for fusions
        that weigh scores (docs/adr/0016): FTS5's ``bm25()`` negated on a
        :class:`RanksLikeFts5` store. ``weights`` are bm25's column weights, RFC-0020's unless
        the query mode says (docs/adr/0023); a store that ranks otherwise may ignore them."""

    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]:
        """For matching rows among ``ids``: a short piece of content around the match (FTS5
        ``snippet``, 64 tokens), or its start when only the title or tags matched."""

    def list_memories(self, where: MemoryFilter, after: int | None, limit: int) -> list[Memory]:
        """Newest (highest ID) first, IDs below ``after`` when it is given."""

    def space_summaries(self, access: Access) -> list[SpaceSummary]:
        """Spaces with at least one live memory readable through ``access``, or with a
        description and readable as a whole, by name."""

    def space_descriptions(self, spaces: Sequence[str]) -> dict[str, SpaceDescription]:
        """The descriptions of those of ``spaces`` that have one."""

    def context_entries(self, where: MemoryFilter, offset: int, limit: int) -> list[ContextEntry]:
        """Live rows passing ``where`` in memory.context's order: importance (critical,
        normal, low), then latest ``updated``, then highest ID; ``limit`` from ``offset``."""

    def count_memories(self, where: MemoryFilter) -> int:
        """How many live rows pass ``where``."""

    def links_of(self, memory: int, include_removed: bool = False) -> list[Link]:
        """Links with ``memory`` at either end, oldest first; unlinked ones only with
        ``include_removed``."""

    def find_link(self, source: int, target: int, relation: str) -> Link | None:
        """The live link ``source`` <relation> ``target``, if there is one."""

    def superseded_ids(self) -> frozenset[int]:
        """Memories a live memory supersedes through a live link (docs/adr/0042)."""

    def inactive_spaces(self) -> dict[str, InactiveSpace]:
        """The spaces marked inactive, by name; every other space is active."""

    def get_session(self, id: int) -> Session | None: ...

    def find_session(self, harness: str, harness_session: str) -> Session | None: ...

    def list_sessions(self, where: SessionFilter, after: int | None, limit: int) -> list[Session]:
        """Newest first, IDs below ``after`` when it is given."""

    def get_client(self, name: str) -> Client | None: ...

    def get_client_by_principal(self, principal: str) -> Client | None: ...

    def list_clients(self) -> list[Client]: ...

    def get_meta(self, key: str) -> str | None: ...

    def counts(self) -> StoreCounts: ...


class WriteTx(ReadTx, Protocol):
    """Everything a read can do, plus changes, all committed together or not at all."""

    def insert_memory(self, memory: Memory) -> int:
        """Insert with a fresh ID (``memory.id`` is ignored) and return the ID.

        IDs come from an ever-increasing counter, never reused even after a purge.
        """

    def replace_memory(self, memory: Memory) -> None:
        """Overwrite the row with ``memory.id``."""

    def delete_memory(self, id: int) -> None:
        """Remove a memory, its versions, its vector and its links at once (purge)."""

    def insert_version(self, version: Version) -> None: ...

    def prune_versions(self, memory: int, keep: int) -> None:
        """Keep only the newest ``keep`` revisions of a memory."""

    def expired_tombstones(self, deleted_before: str) -> list[Memory]:
        """Deleted memories whose ``deleted`` is earlier than the timestamp."""

    def insert_link(self, link: Link) -> int:
        """Insert with a fresh ID (``link.id`` is ignored) and return the ID. Both ends
        exist; a purge of either removes the link (:meth:`delete_memory`)."""

    def remove_link(self, id: int, removed: str, by: Provenance) -> None:
        """Unlink: stamp the live link ``id`` removed, keeping the row."""

    def set_space_inactive(self, inactive: InactiveSpace) -> None: ...

    def set_space_active(self, space: str) -> None: ...

    def insert_session(self, session: Session) -> int: ...

    def replace_session(self, session: Session) -> None: ...

    def delete_session(self, id: int) -> None:
        """Remove a session; children lose ``parent`` (keep ``relation``), memories lose it."""

    def insert_client(self, client: Client) -> None: ...

    def delete_client(self, name: str) -> None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def set_space_description(self, description: SpaceDescription) -> None:
        """Set a space's description, replacing any earlier one."""

    def delete_space_description(self, space: str) -> None: ...


@runtime_checkable
class Store(Protocol):
    def read(self) -> AbstractContextManager[ReadTx]: ...

    def write(self) -> AbstractContextManager[WriteTx]: ...

    def erase_traces(self) -> None:
        """After a purge: make sure deleted text is gone from every file (WAL checkpoint),
        then clear :data:`ERASE_PENDING`.

        Raises ``unavailable.store_busy`` if that cannot be done now (the marker stays).
        """

    def erase_pending_traces(self) -> None:
        """Finish an :meth:`erase_traces` that a busy store or a crash left undone, even in an
        earlier process (:data:`ERASE_PENDING` is set); do nothing when none is pending.
        Called at serve, before the socket exists, and while serving until it is done."""

    def describe(self) -> dict[str, Any]:
        """Facts for store.status: ``path``, ``schema_version``, ``sqlite_version``, ``bytes``,
        and optionally ``engine``, the engine and its version (``sqlite 3.46.0``,
        ``postgresql 15.18``): ``sqlite_version`` is RFC-0020's and says ``none`` off SQLite."""

    def close(self) -> None: ...


@runtime_checkable
class RanksLikeFts5(Protocol):
    """A store whose full-text search is SQLite FTS5's exactly, not only a ranking of its own.

    Optional. Its ``rank_text``, ``rank_text_scored`` and ``text_snippets`` give the terms,
    BM25 scores and snippets of :mod:`venom_mem_core.fts` (``porter unicode61
    remove_diacritics 2``, ``bm25(memory_fts, 5.0, 1.0, 3.0)`` over the caller's readable
    rows, ``snippet(..., 64)``), so RFC-0020's search fixtures hold on it to the last digit. A
    store declares it with a class attribute, ``ranks_like_fts5: Final = True``. The contract
    suite's cases that pin FTS5's stemming, order and scores run only on a store that declares
    it and skip on one that doesn't; every other search case runs on every store.
    """

    @property
    def ranks_like_fts5(self) -> Literal[True]: ...


@runtime_checkable
class RanksAmong(Protocol):
    """A read transaction that can rank a few of a query's hits without scoring them all.

    Optional. ``text_stats`` is the BM25 statistics :meth:`ReadTx.rank_text_scored` would
    measure for ``tokens`` over the live rows readable through ``access`` (None when it
    measures them otherwise, such as for a token of several terms); ``rank_text_among`` is
    ``rank_text_scored``'s answer, the same scores, over those of its hits that hold at least
    one of the ``among`` tokens (or over more of them), ``stats`` being ``text_stats``'s. A
    near-duplicate ranking (:mod:`venom_mem_core.similarity`) knows which rows can't reach
    its threshold and so asks only for the others (ADR 0031, third round)."""

    def text_stats(self, tokens: Sequence[str], access: Access) -> CorpusStats | None: ...

    def rank_text_among(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights,
        *,
        stats: CorpusStats,
        among: Sequence[str],
    ) -> list[tuple[int, float]]: ...


@runtime_checkable
class SharedPrincipals(Protocol):
    """A store several daemons share (PostgreSQL), whose clients any of them may add or remove.

    Optional. ``clients_version`` is a counter every client.add and removal moves in its own
    transaction: a daemon checks it before it trusts a token and reloads its registry when it
    moved, so a client added or removed through another daemon counts at once (docs/adr/0028).
    A store only one daemon opens (SQLite) doesn't declare it, and the daemon asks nothing.
    """

    def clients_version(self) -> str: ...


@runtime_checkable
class StoredVectors(Protocol):
    """A read transaction of a store that keeps the memories' vectors itself (both SQL stores).

    Optional. ``has_vector`` answers memory.get's ``embedding`` when the app has no vector
    index in memory; a transaction without it has no vectors to report (``pending``).
    """

    def has_vector(self, id: int) -> bool: ...


@runtime_checkable
class ConcurrentWrites(Protocol):
    """A store that serializes concurrent write transactions itself (PostgreSQL: its row and
    advisory locks give one winner per race), so a host may run several writes at once.

    Optional. ``writers`` is how many write transactions the store runs at once (its write
    connections); a host runs its write jobs on that many threads, each job inside
    ``write_job()``, so that what a use case does after its commit (its events, the registry)
    happens in the order of the commits, as behind one writer (docs/adr/0031). A store that
    doesn't declare it (SQLite, whose single writer is a rule) gets one writer thread.
    """

    @property
    def writers(self) -> int: ...

    def write_job(self) -> AbstractContextManager[None]: ...


class Clock(Protocol):
    def now(self) -> str:
        """The current time, RFC 3339 UTC with milliseconds."""


class EventSink(Protocol):
    def emit(self, type: str, resource: str, data: dict[str, Any]) -> None:
        """Record an event; called after the commit it describes."""


@runtime_checkable
class VectorSearch(Protocol):
    """Ranked memory IDs by similarity to a query vector, among rows passing the filter,
    at or above ``min_similarity``, best first, ties by highest ID. ``id in vectors`` says
    whether memory ``id`` has a vector (memory.get's ``embedding``)."""

    def __contains__(self, id: object) -> bool: ...

    def nearest(
        self, query: Sequence[float], where: MemoryFilter, limit: int, min_similarity: float
    ) -> list[tuple[int, float]]: ...


class Embedder(Protocol):
    """An embeddings provider. Optional: with none configured, search is full-text only."""

    @property
    def model(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str], *, timeout_s: float) -> list[list[float]]:
        """One vector per text, in order; raises ``unavailable.embeddings`` on any failure."""
