"""The ReadTx and WriteTx ports' queries, written once for every SQL store.

Each store (``sqlite/tx.py``, ``postgres/tx.py``) subclasses :class:`SqlReadTx` and
:class:`SqlWriteTx` and supplies only what its engine does its own way: the doors a
statement goes through (:meth:`SqlReadTx._rows`, :meth:`SqlReadTx._run`, and
:meth:`SqlReadTx._send` for a change nothing reads), its :class:`SqlFilters` (placeholder,
literals, set bindings), ranking and snippets, and the write steps the engine needs
(PostgreSQL's locks and postings, SQLite's triggers). Everything here is standard SQL both
engines read alike: upserts by ``ON CONFLICT``, ``LIMIT/OFFSET``; a new row's ID is read the
engine's way (:meth:`SqlWriteTx._insert`).
Values are always bound; the only SQL built at run time is a filter's shape and the
placeholder of the store's dialect.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, SessionFilter, SpaceSummary, StoreCounts
from venom_mem_core.records import (
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
from venom_mem_core.search_options import RFC_WEIGHTS, Weights

from ._filters import Predicate, SqlFilters
from ._rows import (
    CLIENT_COLUMNS,
    INACTIVE_COLUMNS,
    LINK_COLUMNS,
    MEMORY_COLUMNS,
    SESSION_COLUMNS,
    SPACE_COLUMNS,
    VERSION_COLUMNS,
    client_from_row,
    client_values,
    columns,
    inactive_from_row,
    inactive_values,
    link_from_row,
    link_values,
    memory_from_row,
    memory_values,
    session_from_row,
    session_values,
    space_from_row,
    space_values,
    version_from_row,
    version_values,
)

__all__ = [
    "MEMORY",
    "PENDING",
    "Row",
    "SqlReadTx",
    "SqlWriteTx",
    "assignments",
    "narrows",
    "only_live",
    "placeholders",
]

Row = tuple[Any, ...]

MEMORY = columns(MEMORY_COLUMNS, "m")
# A memory waiting for a vector (RFC-0020 section 5): live, with no row in memory_vectors.
PENDING = (
    "m.deleted IS NULL AND NOT EXISTS (SELECT 1 FROM memory_vectors AS v WHERE v.memory = m.id)"
)
_SESSION = columns(SESSION_COLUMNS, "s")
_VERSION = columns(VERSION_COLUMNS)
_CLIENT = columns(CLIENT_COLUMNS)
_SPACE = columns(SPACE_COLUMNS)
_LINK = columns(LINK_COLUMNS)
_INACTIVE = columns(INACTIVE_COLUMNS)
# memory.context's order: importance as IMPORTANCES lists it, then latest update, then ID.
_CONTEXT_ORDER = (
    "CASE m.importance WHEN 'critical' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END,"
    " m.updated DESC, m.id DESC"
)


def narrows(where: MemoryFilter) -> bool:
    """Whether the filter narrows the hits beyond the caller's readable live rows."""
    return not (
        where.spaces is None
        and where.kinds is None
        and not where.tags
        and where.sessions is None
        and where.importances is None
        and where.branch is None
        and not where.exclude_ids
        and not where.exclude_spaces
    )


def only_live(where: MemoryFilter) -> bool:
    """Whether the filter admits every live row (an all-seeing caller, no narrowing)."""
    return where.access.everything and not narrows(where)


@functools.cache
def placeholders(param: str, count: int) -> str:
    return ", ".join([param] * count)


@functools.cache
def assignments(param: str, names: tuple[str, ...]) -> str:
    """``a = ?, b = ?``: an UPDATE's SET list for ``names`` in the dialect's placeholder."""
    return ", ".join(f"{name} = {param}" for name in names)


class SqlReadTx(ABC):
    """Queries over the snapshot of the connection's current transaction."""

    filters: ClassVar[SqlFilters]
    # Appended to the reads a write transaction goes on to change (PostgreSQL: FOR UPDATE).
    _locking: ClassVar[str] = ""

    @property
    def _p(self) -> str:
        return self.filters.dialect.param

    # -- the doors every statement goes through (the store's own) --------------------------

    @abstractmethod
    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A statement that returns rows, and its rows, fetched eagerly."""

    @abstractmethod
    def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute a change and return how many rows it changed."""

    def _send(self, sql: str, params: Sequence[Any] = ()) -> None:
        """A change whose outcome nothing reads (a store may send it later, in a batch)."""
        self._run(sql, params)

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    # -- what each engine does its own way -------------------------------------------------

    @abstractmethod
    def rank_text_scored(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights = RFC_WEIGHTS,
    ) -> list[tuple[int, float]]: ...

    @abstractmethod
    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]: ...

    @abstractmethod
    def schema_version(self) -> int: ...

    # -- memories --------------------------------------------------------------------------

    def get_memory(self, id: int) -> Memory | None:
        row = self._one(
            f"SELECT {MEMORY} FROM memories AS m WHERE m.id = {self._p}{self._locking}", (id,)
        )
        return memory_from_row(row) if row else None

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        p = self._p
        row = self._one(
            f"SELECT {MEMORY} FROM memories AS m"
            f" WHERE m.space = {p} AND m.content_sha256 = {p} AND m.deleted IS NULL",
            (space, content_sha256),
        )
        return memory_from_row(row) if row else None

    def has_vector(self, id: int) -> bool:
        return bool(self._rows(f"SELECT 1 FROM memory_vectors WHERE memory = {self._p}", (id,)))

    def get_version(self, memory: int, revision: int) -> Version | None:
        p = self._p
        row = self._one(
            f"SELECT {_VERSION} FROM memory_versions WHERE memory = {p} AND revision = {p}",
            (memory, revision),
        )
        return version_from_row(row) if row else None

    def list_versions(self, memory: int) -> list[Version]:
        rows = self._rows(
            f"SELECT {_VERSION} FROM memory_versions WHERE memory = {self._p}"
            " ORDER BY revision DESC",
            (memory,),
        )
        return [version_from_row(row) for row in rows]

    def rank_text(self, tokens: Sequence[str], where: MemoryFilter, limit: int) -> list[int]:
        return [id_ for id_, _ in self.rank_text_scored(tokens, where, limit)]

    def _before(self, predicate: Predicate, column: str, after: int | None) -> Predicate:
        """A page's filter: ``predicate``, and below ``after`` in ``column`` when given."""
        if after is None:
            return predicate
        below = Predicate(f"{column} < {self._p}", (after,))
        return Predicate.all_of([predicate, below], empty=self.filters.dialect.true)

    def list_memories(self, where: MemoryFilter, after: int | None, limit: int) -> list[Memory]:
        predicate = self._before(self.filters.memory_predicate(where), "m.id", after)
        rows = self._rows(
            f"SELECT {MEMORY} FROM memories AS m WHERE {predicate.sql}"
            f" ORDER BY m.id DESC LIMIT {self._p}",
            (*predicate.params, limit),
        )
        return [memory_from_row(row) for row in rows]

    def space_summaries(self, access: Access) -> list[SpaceSummary]:
        readable = self.filters.access_predicate(access, alias="m")
        counted = {
            r[0]: (int(r[1]), str(r[2]))
            for r in self._rows(
                "SELECT m.space, count(*), max(m.updated) FROM memories AS m"
                f" WHERE m.deleted IS NULL AND ({readable.sql}) GROUP BY m.space",
                readable.params,
            )
        }
        described = {
            d.space: d
            for d in map(space_from_row, self._rows(f"SELECT {_SPACE} FROM spaces"))
            if access.everything or d.space in access.spaces
        }
        out = []
        for space in sorted(counted.keys() | described.keys()):
            memories, updated = counted.get(space, (0, ""))
            description = described.get(space)
            if description is not None:
                updated = max(updated, description.updated)
            out.append(
                SpaceSummary(
                    space=space,
                    memories=memories,
                    updated=updated,
                    description=description.description if description else None,
                )
            )
        return out

    def space_descriptions(self, spaces: Sequence[str]) -> dict[str, SpaceDescription]:
        if not spaces:
            return {}
        listed = self.filters.dialect.in_set("space", set(spaces))
        rows = self._rows(f"SELECT {_SPACE} FROM spaces WHERE {listed.sql}", listed.params)
        return {row[0]: space_from_row(row) for row in rows}

    def context_entries(self, where: MemoryFilter, offset: int, limit: int) -> list[ContextEntry]:
        p = self._p
        predicate = self.filters.memory_predicate(attrs.evolve(where, include_deleted=False))
        rows = self._rows(
            "SELECT m.id, m.importance, m.created, m.updated,"
            " coalesce(nullif(m.label, ''), m.principal), m.content"
            f" FROM memories AS m WHERE {predicate.sql}"
            f" ORDER BY {_CONTEXT_ORDER} LIMIT {p} OFFSET {p}",
            (*predicate.params, limit, offset),
        )
        return [
            ContextEntry(
                id=r[0], importance=r[1], created=r[2], updated=r[3], by=r[4], content=r[5]
            )
            for r in rows
        ]

    def count_memories(self, where: MemoryFilter) -> int:
        predicate = self.filters.memory_predicate(attrs.evolve(where, include_deleted=False))
        row = self._one(
            f"SELECT count(*) FROM memories AS m WHERE {predicate.sql}", predicate.params
        )
        return int(row[0]) if row else 0

    # -- links and space states (docs/adr/0042) ----------------------------------------

    def links_of(self, memory: int, include_removed: bool = False) -> list[Link]:
        p = self._p
        live = "" if include_removed else " AND removed IS NULL"
        rows = self._rows(
            f"SELECT {_LINK} FROM links WHERE (source = {p} OR target = {p}){live} ORDER BY id",
            (memory, memory),
        )
        return [link_from_row(row) for row in rows]

    def find_link(self, source: int, target: int, relation: str) -> Link | None:
        p = self._p
        row = self._one(
            f"SELECT {_LINK} FROM links WHERE source = {p} AND target = {p}"
            f" AND relation = {p} AND removed IS NULL",
            (source, target, relation),
        )
        return None if row is None else link_from_row(row)

    def superseded_ids(self) -> frozenset[int]:
        rows = self._rows(
            "SELECT DISTINCT l.target FROM links AS l JOIN memories AS n ON n.id = l.source"
            " WHERE l.relation = 'supersedes' AND l.removed IS NULL AND n.deleted IS NULL"
        )
        return frozenset(int(row[0]) for row in rows)

    def inactive_spaces(self) -> dict[str, InactiveSpace]:
        rows = self._rows(f"SELECT {_INACTIVE} FROM inactive_spaces ORDER BY space")
        return {row[0]: inactive_from_row(row) for row in rows}

    # -- sessions --------------------------------------------------------------------------

    def get_session(self, id: int) -> Session | None:
        row = self._one(f"SELECT {_SESSION} FROM sessions AS s WHERE s.id = {self._p}", (id,))
        return session_from_row(row) if row else None

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        p = self._p
        row = self._one(
            f"SELECT {_SESSION} FROM sessions AS s"
            f" WHERE s.harness = {p} AND s.harness_session = {p}",
            (harness, harness_session),
        )
        return session_from_row(row) if row else None

    def list_sessions(self, where: SessionFilter, after: int | None, limit: int) -> list[Session]:
        predicate = self._before(self.filters.session_predicate(where), "s.id", after)
        rows = self._rows(
            f"SELECT {_SESSION} FROM sessions AS s WHERE {predicate.sql}"
            f" ORDER BY s.id DESC LIMIT {self._p}",
            (*predicate.params, limit),
        )
        return [session_from_row(row) for row in rows]

    # -- clients and meta ------------------------------------------------------------------

    def get_client(self, name: str) -> Client | None:
        row = self._one(f"SELECT {_CLIENT} FROM clients WHERE name = {self._p}", (name,))
        return client_from_row(row) if row else None

    def get_client_by_principal(self, principal: str) -> Client | None:
        row = self._one(f"SELECT {_CLIENT} FROM clients WHERE principal = {self._p}", (principal,))
        return client_from_row(row) if row else None

    def list_clients(self) -> list[Client]:
        return [
            client_from_row(r) for r in self._rows(f"SELECT {_CLIENT} FROM clients ORDER BY name")
        ]

    def get_meta(self, key: str) -> str | None:
        row = self._one(f"SELECT value FROM meta WHERE key = {self._p}{self._locking}", (key,))
        return row[0] if row else None

    def counts(self) -> StoreCounts:
        row = self._one(
            "SELECT"
            " (SELECT count(*) FROM memories WHERE deleted IS NULL),"
            " (SELECT count(*) FROM memories WHERE deleted IS NOT NULL),"
            " (SELECT count(*) FROM memory_versions),"
            " (SELECT count(*) FROM sessions),"
            " (SELECT count(*) FROM memory_vectors),"
            f" (SELECT count(*) FROM memories AS m WHERE {PENDING})"
        )
        assert row is not None
        memories, deleted, versions, sessions, vectors, pending = (int(v) for v in row)
        return StoreCounts(
            memories=memories,
            deleted=deleted,
            versions=versions,
            sessions=sessions,
            vectors=vectors,
            pending=pending,
        )


class SqlWriteTx(SqlReadTx):
    """Changes inside one write transaction. A store's write class lists its read class
    first (``class XWriteTx(XReadTx, SqlWriteTx)``), so its doors and queries are used."""

    @abstractmethod
    def _insert(self, sql: str, params: Sequence[Any]) -> int | None:
        """Run an INSERT of one row with an ID column and return the new ID, or ``None`` when
        its ``ON CONFLICT ... DO NOTHING`` kept the row out. (PostgreSQL reads it by
        RETURNING; SQLite by last_insert_rowid, as RETURNING costs it about a fifth of an add.)"""

    def _indexed(self, memory: Memory, id: int) -> None:
        """A new live row is in as ``id`` (``memory.id`` is the draft's): a store whose index
        no trigger keeps (PostgreSQL's postings) writes it here."""

    def _clients_changed(self) -> None:
        """A client was added or removed: a store that several daemons share says so."""

    def _duplicate(self, memory: Memory) -> VenomError:
        """``conflict.memory_duplicate``, naming the live memory ``memory`` collided with."""
        other = SqlReadTx.find_live_by_content(self, memory.space, memory.content_sha256)
        return VenomError.duplicate_memory(memory.space, None if other is None else other.id)

    def insert_memory(self, memory: Memory) -> int:
        """Insert; a live duplicate is ``conflict.memory_duplicate`` naming the other row.
        ON CONFLICT keeps the transaction usable (in PostgreSQL a unique violation would
        abort it), and is the partial unique index ``memories_live_content``'s own check."""
        id_ = self._insert(
            f"INSERT INTO memories ({columns(MEMORY_COLUMNS[1:])})"
            f" VALUES ({placeholders(self._p, len(MEMORY_COLUMNS) - 1)})"
            " ON CONFLICT (space, content_sha256) WHERE deleted IS NULL DO NOTHING",
            memory_values(memory),
        )
        if id_ is None:
            raise self._duplicate(memory)
        if memory.deleted is None:
            self._indexed(memory, id_)
        return id_

    def delete_memory(self, id: int) -> None:
        self._send(f"DELETE FROM memories WHERE id = {self._p}", (id,))

    def insert_version(self, version: Version) -> None:
        self._send(
            f"INSERT INTO memory_versions ({_VERSION})"
            f" VALUES ({placeholders(self._p, len(VERSION_COLUMNS))})",
            version_values(version),
        )

    def prune_versions(self, memory: int, keep: int) -> None:
        p = self._p
        self._send(
            f"DELETE FROM memory_versions WHERE memory = {p} AND revision NOT IN"
            f" (SELECT revision FROM memory_versions WHERE memory = {p}"
            f"  ORDER BY revision DESC LIMIT {p})",
            (memory, memory, max(keep, 0)),
        )

    def expired_tombstones(self, deleted_before: str) -> list[Memory]:
        rows = self._rows(
            f"SELECT {MEMORY} FROM memories AS m"
            f" WHERE m.deleted IS NOT NULL AND m.deleted < {self._p} ORDER BY m.id",
            (deleted_before,),
        )
        return [memory_from_row(row) for row in rows]

    def insert_link(self, link: Link) -> int:
        id_ = self._insert(
            f"INSERT INTO links ({columns(LINK_COLUMNS[1:])})"
            f" VALUES ({placeholders(self._p, len(LINK_COLUMNS) - 1)})",
            link_values(link),
        )
        assert id_ is not None  # no ON CONFLICT: a failure raised
        return id_

    def remove_link(self, id: int, removed: str, by: Provenance) -> None:
        p = self._p
        self._send(
            f"UPDATE links SET removed = {p}, removed_by = {p}, removed_label = {p}"
            f" WHERE id = {p} AND removed IS NULL",
            (removed, by.principal, by.label, id),
        )

    def set_space_inactive(self, inactive: InactiveSpace) -> None:
        self._send(
            f"INSERT INTO inactive_spaces ({_INACTIVE})"
            f" VALUES ({placeholders(self._p, len(INACTIVE_COLUMNS))})"
            " ON CONFLICT (space) DO NOTHING",
            inactive_values(inactive),
        )

    def set_space_active(self, space: str) -> None:
        self._send(f"DELETE FROM inactive_spaces WHERE space = {self._p}", (space,))

    def insert_session(self, session: Session) -> int:
        id_ = self._insert(
            f"INSERT INTO sessions ({columns(SESSION_COLUMNS[1:])})"
            f" VALUES ({placeholders(self._p, len(SESSION_COLUMNS) - 1)})",
            session_values(session),
        )
        assert id_ is not None  # no ON CONFLICT: a failure raised
        return id_

    def replace_session(self, session: Session) -> None:
        p = self._p
        changed = self._run(
            f"UPDATE sessions SET {assignments(p, SESSION_COLUMNS[1:])} WHERE id = {p}",
            (*session_values(session), session.id),
        )
        if not changed:
            raise VenomError.not_found("session", f"session s{session.id} does not exist")

    def delete_session(self, id: int) -> None:
        # ON DELETE SET NULL clears children's parent and memories' session.
        self._send(f"DELETE FROM sessions WHERE id = {self._p}", (id,))

    def insert_client(self, client: Client) -> None:
        self._send(
            f"INSERT INTO clients ({_CLIENT})"
            f" VALUES ({placeholders(self._p, len(CLIENT_COLUMNS))})",
            client_values(client),
        )
        self._clients_changed()

    def delete_client(self, name: str) -> None:
        if self._run(f"DELETE FROM clients WHERE name = {self._p}", (name,)):
            self._clients_changed()

    def set_meta(self, key: str, value: str) -> None:
        p = self._p
        self._send(
            f"INSERT INTO meta (key, value) VALUES ({p}, {p})"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str) -> None:
        self._send(f"DELETE FROM meta WHERE key = {self._p}", (key,))

    def set_space_description(self, description: SpaceDescription) -> None:
        self._send(
            f"INSERT INTO spaces ({_SPACE})"
            f" VALUES ({placeholders(self._p, len(SPACE_COLUMNS))})"
            " ON CONFLICT (space) DO UPDATE SET description = excluded.description,"
            " principal = excluded.principal, label = excluded.label, updated = excluded.updated",
            space_values(description),
        )

    def delete_space_description(self, space: str) -> None:
        self._send(f"DELETE FROM spaces WHERE space = {self._p}", (space,))
