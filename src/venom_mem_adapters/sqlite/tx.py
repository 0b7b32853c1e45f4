"""The ReadTx and WriteTx ports over one apsw connection inside an open transaction.

The store opens and ends the transaction (store.py); these classes only run statements. All
SQL goes through :meth:`SqliteReadTx._rows` and :meth:`SqliteReadTx._run`, which fetch
eagerly inside :func:`translated`, so no apsw exception and no half-read cursor escapes a
method. Values are always bound, never formatted into SQL text; the only text built at run
time is the shape of a filter (filters.py) and the placeholders for a known column list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw
import attrs

from venom_mem_core import fts
from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Access
from venom_mem_core.ports import (
    MemoryFilter,
    SessionFilter,
    SpaceSummary,
    StoreCounts,
)
from venom_mem_core.records import (
    Client,
    ContextEntry,
    Memory,
    Session,
    SpaceDescription,
    Version,
)
from venom_mem_core.search_options import RFC_WEIGHTS, Weights

from . import bm25
from .errors import translated
from .filters import Predicate, access_predicate, memory_predicate, session_predicate
from .match import fts_match_expression
from .rows import (
    CLIENT_COLUMNS,
    MEMORY_COLUMNS,
    SESSION_COLUMNS,
    SPACE_COLUMNS,
    VERSION_COLUMNS,
    client_from_row,
    client_values,
    columns,
    memory_from_row,
    memory_values,
    session_from_row,
    session_values,
    space_from_row,
    space_values,
    version_from_row,
    version_values,
)

__all__ = ["SqliteReadTx", "SqliteWriteTx"]

Row = tuple[Any, ...]

_MEMORY = columns(MEMORY_COLUMNS, "m")
_SESSION = columns(SESSION_COLUMNS, "s")
_VERSION = columns(VERSION_COLUMNS)
_CLIENT = columns(CLIENT_COLUMNS)
_SPACE = columns(SPACE_COLUMNS)
# memory.context's order: importance as IMPORTANCES lists it, then latest update, then ID.
_CONTEXT_ORDER = (
    "CASE m.importance WHEN 'critical' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END,"
    " m.updated DESC, m.id DESC"
)
_SNIPPET = f"snippet(memory_fts, 1, '', '', '…', {fts.SNIPPET_TOKENS})"
_BUILTIN_BM25 = "bm25(memory_fts, {!r}, {!r}, {!r})"  # the column weights, floats


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


def _clean(tokens: Sequence[str]) -> list[str]:
    """FTS5 reads a query as a C string, so a NUL would end it mid-phrase (a syntax error).
    The tokenizer treats NUL as a separator anyway, so a space searches the same words."""
    return [token.replace("\x00", " ") for token in tokens]


def _match(tokens: Sequence[str]) -> str:
    return fts_match_expression(_clean(tokens))


def _only_live(where: MemoryFilter) -> bool:
    """True when the filter asks for nothing but readable live rows of an all-seeing caller."""
    return (
        where.access.everything
        and where.spaces is None
        and where.kinds is None
        and not where.tags
        and where.sessions is None
        and where.importances is None
        and where.branch is None
    )


def _narrows(where: MemoryFilter) -> bool:
    """True when the filter narrows the hits beyond the caller's readable live rows."""
    return not (
        where.spaces is None
        and where.kinds is None
        and not where.tags
        and where.sessions is None
        and where.importances is None
        and where.branch is None
    )


class SqliteReadTx:
    """Queries over the snapshot of the connection's current transaction."""

    def __init__(self, connection: apsw.Connection, path: str) -> None:
        self._connection = connection
        self._path = path

    @property
    def connection(self) -> apsw.Connection:
        """The connection under this transaction, for adapter modules beside the store
        (vectors) that run their own statements inside it."""
        return self._connection

    def has_vector(self, id: int) -> bool:
        return bool(self._rows("SELECT 1 FROM memory_vectors WHERE memory = ?", (id,)))

    # -- the two doors every statement goes through -------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with translated(self._path):
            return self._connection.execute(sql, tuple(params)).fetchall()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute a change and return how many rows it changed."""
        with translated(self._path):
            self._connection.execute(sql, tuple(params)).fetchall()
            return self._connection.changes()

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    # -- memories ------------------------------------------------------------------------

    def get_memory(self, id: int) -> Memory | None:
        row = self._one(f"SELECT {_MEMORY} FROM memories AS m WHERE m.id = ?", (id,))
        return memory_from_row(row) if row else None

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        row = self._one(
            f"SELECT {_MEMORY} FROM memories AS m"
            " WHERE m.space = ? AND m.content_sha256 = ? AND m.deleted IS NULL",
            (space, content_sha256),
        )
        return memory_from_row(row) if row else None

    def get_version(self, memory: int, revision: int) -> Version | None:
        row = self._one(
            f"SELECT {_VERSION} FROM memory_versions WHERE memory = ? AND revision = ?",
            (memory, revision),
        )
        return version_from_row(row) if row else None

    def list_versions(self, memory: int) -> list[Version]:
        rows = self._rows(
            f"SELECT {_VERSION} FROM memory_versions WHERE memory = ? ORDER BY revision DESC",
            (memory,),
        )
        return [version_from_row(row) for row in rows]

    def rank_text(self, tokens: Sequence[str], where: MemoryFilter, limit: int) -> list[int]:
        return [id_ for id_, _ in self.rank_text_scored(tokens, where, limit)]

    def rank_text_scored(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights = RFC_WEIGHTS,
    ) -> list[tuple[int, float]]:
        """Filter, then rank; see bm25.py for why ranking has two forms.

        The owner's search is one statement with the built-in bm25. Only IDs and scores go
        through the sorter (it would carry every selected column of every match); rows and
        snippets are read afterwards for the few that made the cut.
        """
        if not tokens or limit <= 0 or where.access.nothing:
            return []
        candidates = memory_predicate(attrs.evolve(where, include_deleted=False))
        if not where.access.everything:
            # Statistics over the readable rows (docs/adr/0003), read in bulk (docs/adr/0016).
            readable = access_predicate(where.access, alias="m")
            with translated(self._path):
                return bm25.rank_readable(
                    self._connection,
                    _clean(tokens),
                    readable,
                    limit,
                    narrowed=candidates if _narrows(where) else None,
                    weights=weights,
                )
        builtin = _BUILTIN_BM25.format(*map(float, weights))
        if _only_live(where):
            # memory_fts holds live rows only (the triggers see to it): no join needed.
            ranked = self._rows(
                f"SELECT memory_fts.rowid, {builtin} AS score FROM memory_fts"
                " WHERE memory_fts MATCH ? ORDER BY score, memory_fts.rowid DESC LIMIT ?",
                (_match(tokens), limit),
            )
        else:
            # The filter is a set of rowids that the FTS5 scan checks each match against
            # (SQLite builds it once per statement, from memories_space when the filter names
            # spaces), so nothing outside it is joined, scored or sorted (docs/adr/0016).
            ranked = self._rows(
                f"SELECT memory_fts.rowid, {builtin} AS score FROM memory_fts"
                f" WHERE memory_fts MATCH ? AND {bm25.IN_ROWS.format(candidates.sql)}"
                " ORDER BY score, memory_fts.rowid DESC LIMIT ?",
                (_match(tokens), *candidates.params, limit),
            )
        return [(int(row[0]), -float(row[1])) for row in ranked]

    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]:
        if not tokens or not ids:
            return {}
        return {
            int(row[0]): str(row[1] or "")
            for row in self._rows(
                f"SELECT rowid, {_SNIPPET} FROM memory_fts"
                f" WHERE memory_fts MATCH ? AND rowid IN ({_placeholders(len(ids))})",
                (_match(tokens), *ids),
            )
        }

    def list_memories(self, where: MemoryFilter, after: int | None, limit: int) -> list[Memory]:
        predicate = memory_predicate(where)
        if after is not None:
            predicate = Predicate.all_of([predicate, Predicate("m.id < ?", (after,))], empty="1")
        rows = self._rows(
            f"SELECT {_MEMORY} FROM memories AS m WHERE {predicate.sql} ORDER BY m.id DESC LIMIT ?",
            (*predicate.params, limit),
        )
        return [memory_from_row(row) for row in rows]

    def space_summaries(self, access: Access) -> list[SpaceSummary]:
        readable = access_predicate(access, alias="m")
        counted = {
            r[0]: (int(r[1]), str(r[2]))
            for r in self._rows(
                "SELECT m.space, count(*), max(m.updated) FROM memories AS m"
                f" WHERE m.deleted IS NULL AND ({readable.sql})"
                " GROUP BY m.space",
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
        rows = self._rows(
            f"SELECT {_SPACE} FROM spaces WHERE space IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(spaces))),),
        )
        return {row[0]: space_from_row(row) for row in rows}

    def context_entries(self, where: MemoryFilter, offset: int, limit: int) -> list[ContextEntry]:
        predicate = memory_predicate(attrs.evolve(where, include_deleted=False))
        rows = self._rows(
            "SELECT m.id, m.importance, m.created, m.updated,"
            " coalesce(nullif(m.label, ''), m.principal), m.content"
            f" FROM memories AS m WHERE {predicate.sql}"
            f" ORDER BY {_CONTEXT_ORDER} LIMIT ? OFFSET ?",
            (*predicate.params, limit, offset),
        )
        return [
            ContextEntry(
                id=r[0], importance=r[1], created=r[2], updated=r[3], by=r[4], content=r[5]
            )
            for r in rows
        ]

    def count_memories(self, where: MemoryFilter) -> int:
        predicate = memory_predicate(attrs.evolve(where, include_deleted=False))
        row = self._one(
            f"SELECT count(*) FROM memories AS m WHERE {predicate.sql}", predicate.params
        )
        return int(row[0]) if row else 0

    # -- sessions ------------------------------------------------------------------------

    def get_session(self, id: int) -> Session | None:
        row = self._one(f"SELECT {_SESSION} FROM sessions AS s WHERE s.id = ?", (id,))
        return session_from_row(row) if row else None

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        row = self._one(
            f"SELECT {_SESSION} FROM sessions AS s WHERE s.harness = ? AND s.harness_session = ?",
            (harness, harness_session),
        )
        return session_from_row(row) if row else None

    def list_sessions(self, where: SessionFilter, after: int | None, limit: int) -> list[Session]:
        predicate = session_predicate(where)
        if after is not None:
            predicate = Predicate.all_of([predicate, Predicate("s.id < ?", (after,))], empty="1")
        rows = self._rows(
            f"SELECT {_SESSION} FROM sessions AS s WHERE {predicate.sql}"
            " ORDER BY s.id DESC LIMIT ?",
            (*predicate.params, limit),
        )
        return [session_from_row(row) for row in rows]

    # -- clients and meta ----------------------------------------------------------------

    def get_client(self, name: str) -> Client | None:
        row = self._one(f"SELECT {_CLIENT} FROM clients WHERE name = ?", (name,))
        return client_from_row(row) if row else None

    def get_client_by_principal(self, principal: str) -> Client | None:
        row = self._one(f"SELECT {_CLIENT} FROM clients WHERE principal = ?", (principal,))
        return client_from_row(row) if row else None

    def list_clients(self) -> list[Client]:
        return [client_from_row(r) for r in self._rows(f"SELECT {_CLIENT} FROM clients")]

    def get_meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return row[0] if row else None

    def schema_version(self) -> int:
        """``user_version``, for store.status and doctor (not part of the port)."""
        row = self._one("PRAGMA user_version")
        return int(row[0]) if row else 0

    def counts(self) -> StoreCounts:
        row = self._one(
            "SELECT"
            " (SELECT count(*) FROM memories WHERE deleted IS NULL),"
            " (SELECT count(*) FROM memories WHERE deleted IS NOT NULL),"
            " (SELECT count(*) FROM memory_versions),"
            " (SELECT count(*) FROM sessions),"
            " (SELECT count(*) FROM memory_vectors),"
            " (SELECT count(*) FROM memories AS m WHERE m.deleted IS NULL"
            "   AND NOT EXISTS (SELECT 1 FROM memory_vectors AS v WHERE v.memory = m.id))"
        )
        assert row is not None
        memories, deleted, versions, sessions, vectors, pending = row
        return StoreCounts(
            memories=memories,
            deleted=deleted,
            versions=versions,
            sessions=sessions,
            vectors=vectors,
            pending=pending,
        )


class SqliteWriteTx(SqliteReadTx):
    """Changes inside the store's one IMMEDIATE write transaction."""

    def _duplicate(self, error: VenomError, memory: Memory) -> VenomError:
        """Name the live memory a unique violation collided with, as the spec's data does."""
        other = self.find_live_by_content(memory.space, memory.content_sha256)
        if other is not None:
            error.data["id"] = f"m{other.id}"
        return error

    def insert_memory(self, memory: Memory) -> int:
        try:
            self._run(
                f"INSERT INTO memories ({columns(MEMORY_COLUMNS[1:])})"
                f" VALUES ({_placeholders(len(MEMORY_COLUMNS) - 1)})",
                memory_values(memory),
            )
        except VenomError as error:
            if error.code == "conflict.memory_duplicate":
                raise self._duplicate(error, memory) from error.__cause__
            raise
        return self._connection.last_insert_rowid()

    def replace_memory(self, memory: Memory) -> None:
        assignments = ", ".join(f"{name} = ?" for name in MEMORY_COLUMNS[1:])
        try:
            changed = self._run(
                f"UPDATE memories SET {assignments} WHERE id = ?",
                (*memory_values(memory), memory.id),
            )
        except VenomError as error:
            if error.code == "conflict.memory_duplicate":
                raise self._duplicate(error, memory) from error.__cause__
            raise
        if not changed:
            raise VenomError.not_found("memory", f"memory m{memory.id} does not exist")

    def delete_memory(self, id: int) -> None:
        self._run("DELETE FROM memories WHERE id = ?", (id,))

    def insert_version(self, version: Version) -> None:
        self._run(
            f"INSERT INTO memory_versions ({_VERSION})"
            f" VALUES ({_placeholders(len(VERSION_COLUMNS))})",
            version_values(version),
        )

    def prune_versions(self, memory: int, keep: int) -> None:
        self._run(
            "DELETE FROM memory_versions WHERE memory = ? AND revision NOT IN"
            " (SELECT revision FROM memory_versions WHERE memory = ?"
            "  ORDER BY revision DESC LIMIT ?)",
            (memory, memory, max(keep, 0)),
        )

    def expired_tombstones(self, deleted_before: str) -> list[Memory]:
        rows = self._rows(
            f"SELECT {_MEMORY} FROM memories AS m"
            " WHERE m.deleted IS NOT NULL AND m.deleted < ? ORDER BY m.id",
            (deleted_before,),
        )
        return [memory_from_row(row) for row in rows]

    def insert_session(self, session: Session) -> int:
        self._run(
            f"INSERT INTO sessions ({columns(SESSION_COLUMNS[1:])})"
            f" VALUES ({_placeholders(len(SESSION_COLUMNS) - 1)})",
            session_values(session),
        )
        return self._connection.last_insert_rowid()

    def replace_session(self, session: Session) -> None:
        assignments = ", ".join(f"{name} = ?" for name in SESSION_COLUMNS[1:])
        changed = self._run(
            f"UPDATE sessions SET {assignments} WHERE id = ?",
            (*session_values(session), session.id),
        )
        if not changed:
            raise VenomError.not_found("session", f"session s{session.id} does not exist")

    def delete_session(self, id: int) -> None:
        # ON DELETE SET NULL clears children's parent and memories' session.
        self._run("DELETE FROM sessions WHERE id = ?", (id,))

    def insert_client(self, client: Client) -> None:
        self._run(
            f"INSERT INTO clients ({_CLIENT}) VALUES ({_placeholders(len(CLIENT_COLUMNS))})",
            client_values(client),
        )

    def delete_client(self, name: str) -> None:
        self._run("DELETE FROM clients WHERE name = ?", (name,))

    def set_meta(self, key: str, value: str) -> None:
        self._run(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str) -> None:
        self._run("DELETE FROM meta WHERE key = ?", (key,))

    def set_space_description(self, description: SpaceDescription) -> None:
        self._run(
            f"INSERT INTO spaces ({_SPACE}) VALUES ({_placeholders(len(SPACE_COLUMNS))})"
            " ON CONFLICT (space) DO UPDATE SET description = excluded.description,"
            " principal = excluded.principal, label = excluded.label, updated = excluded.updated",
            space_values(description),
        )

    def delete_space_description(self, space: str) -> None:
        self._run("DELETE FROM spaces WHERE space = ?", (space,))
