"""The ReadTx and WriteTx ports over one psycopg connection inside an open transaction.

The store opens and ends the transaction (store.py); these classes only run statements,
through :meth:`PgReadTx._rows` and :meth:`PgReadTx._run`, which fetch eagerly inside
:func:`translated`. Values are always bound; the only SQL built at run time is the shape of a
filter (filters.py) and column lists.

Several daemons write the same database at once, so a write transaction (READ COMMITTED)
takes the locks that make the use cases' read-then-write steps hold as they do behind
SQLite's one writer (docs/adr/0028):

* :meth:`PgWriteTx.get_memory` reads the row ``FOR UPDATE``: a second writer of the same
  memory waits for the first to commit and then reads its revision, so the use case's
  revision check fails with ``conflict.memory_revision``. :meth:`PgWriteTx.replace_memory`
  checks the revision inside the UPDATE too (``revision < new``), the backstop.
* :meth:`PgWriteTx.find_live_by_content` first takes a transaction advisory lock on
  (space, content hash): racing adds of the same content queue there, and each later one
  reads the row the first committed and answers ``changed: false``. The partial unique index
  ``memories_live_content`` is the backstop.
* :meth:`PgWriteTx.get_meta` reads ``FOR UPDATE`` (the principal counter is read, then
  written); :meth:`PgWriteTx.find_session` takes an advisory lock on (harness, session).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import psycopg

from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, SessionFilter, SpaceSummary, StoreCounts
from venom_mem_core.records import Client, ContextEntry, Memory, Session, SpaceDescription, Version
from venom_mem_core.search_options import RFC_WEIGHTS, Weights

from ..sqlite.rows import (
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
from . import fts
from .errors import translated
from .filters import Predicate, access_predicate, memory_predicate, session_predicate

__all__ = ["PgReadTx", "PgWriteTx"]

Row = tuple[Any, ...]

_MEMORY = columns(MEMORY_COLUMNS, "m")
_SESSION = columns(SESSION_COLUMNS, "s")
_VERSION = columns(VERSION_COLUMNS)
_CLIENT = columns(CLIENT_COLUMNS)
_SPACE = columns(SPACE_COLUMNS)
_CONTEXT_ORDER = (
    "CASE m.importance WHEN 'critical' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END,"
    " m.updated DESC, m.id DESC"
)


def _only_live(where: MemoryFilter) -> bool:
    """Whether the filter admits every live row (an all-seeing caller, no narrowing)."""
    return (
        where.access.everything
        and where.spaces is None
        and where.kinds is None
        and not where.tags
        and where.sessions is None
        and where.importances is None
        and where.branch is None
    )


def _placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


class PgReadTx:
    """Queries over the snapshot of the connection's current transaction."""

    def __init__(self, connection: psycopg.Connection[Row], where: str) -> None:
        self._connection = connection
        self._where = where
        # Memories read ahead for this snapshot (rank_text_scored); None in a write.
        self._memo: dict[int, Memory] | None = {}

    @property
    def connection(self) -> psycopg.Connection[Row]:
        return self._connection

    # -- the two doors every statement goes through -------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A statement that returns rows, and its rows (which sends what is queued)."""
        with translated(self._where):
            return self._connection.execute(sql, tuple(params)).fetchall()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute a change and return how many rows it changed (a round trip)."""
        with translated(self._where), self._connection.pipeline() as pipe:
            cursor = self._connection.execute(sql, tuple(params))
            pipe.sync()
            return cursor.rowcount

    def _send(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Queue a change whose outcome nothing reads; it is sent with the next statement
        that is read, or the COMMIT, and an error in it fails that one (store.py)."""
        with translated(self._where):
            self._connection.execute(sql, tuple(params))

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    # -- memories ------------------------------------------------------------------------

    def get_memory(self, id: int) -> Memory | None:
        if self._memo is not None and id in self._memo:
            return self._memo[id]
        row = self._one(f"SELECT {_MEMORY} FROM memories AS m WHERE m.id = %s", (id,))
        return memory_from_row(row) if row else None

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        row = self._one(
            f"SELECT {_MEMORY} FROM memories AS m"
            " WHERE m.space = %s AND m.content_sha256 = %s AND m.deleted IS NULL",
            (space, content_sha256),
        )
        return memory_from_row(row) if row else None

    def get_version(self, memory: int, revision: int) -> Version | None:
        row = self._one(
            f"SELECT {_VERSION} FROM memory_versions WHERE memory = %s AND revision = %s",
            (memory, revision),
        )
        return version_from_row(row) if row else None

    def list_versions(self, memory: int) -> list[Version]:
        rows = self._rows(
            f"SELECT {_VERSION} FROM memory_versions WHERE memory = %s ORDER BY revision DESC",
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
        """BM25 over the caller's readable live rows (fts.py), the other filters narrowing
        the hits without changing the statistics, as the SQLite store ranks them.

        One statement: the readable corpus's size (rows and tokens), and every readable
        row's postings for the query's terms, each with whether the whole filter admits it
        (positions only when a phrase needs them; counts otherwise). The winners' rows are
        then read in one more, and kept for the search's get_memory and snippets.
        """
        wanted = fts.phrases(tokens)
        terms = sorted({term for phrase in wanted for term in phrase})
        if not terms or limit <= 0 or where.access.nothing:
            return []
        readable = access_predicate(where.access, alias="m")
        passes = memory_predicate(attrs.evolve(where, include_deleted=False))
        positions = any(len(phrase) > 1 for phrase in wanted)
        if not positions:
            scored = self._rank_in_sql(
                wanted, where, readable, passes, limit=limit, weights=weights
            )
            self._remember([id_ for id_, _ in scored])
            return scored
        hits_sql = (
            "p.title, p.content, p.tags"
            if positions
            else "cardinality(p.title), cardinality(p.content), cardinality(p.tags)"
        )
        if where.access.everything:
            corpus = "SELECT count(*) AS n, coalesce(sum(length), 0) AS t FROM memory_fts"
        else:
            corpus = (
                "SELECT count(*) AS n, coalesce(sum(f.length), 0) AS t FROM memory_fts AS f"
                f" JOIN memories AS m ON m.id = f.memory WHERE {readable.sql}"
            )
        found = self._rows(
            f"WITH corpus AS ({corpus}),"
            f" hit AS (SELECT p.memory, f.length, ({passes.sql}) AS admitted, p.term, {hits_sql}"
            " FROM memory_fts_terms AS p JOIN memory_fts AS f ON f.memory = p.memory"
            " JOIN memories AS m ON m.id = p.memory"
            f" WHERE p.term = ANY(%s) AND {readable.sql})"
            " SELECT corpus.n, corpus.t, hit.* FROM corpus LEFT JOIN hit ON TRUE",
            (*readable.params, *passes.params, terms, *readable.params),
        )
        corpus_rows, corpus_tokens = int(found[0][0]), int(found[0][1])
        if corpus_rows == 0 or found[0][2] is None:
            return []
        by_row: dict[int, tuple[int, bool, dict[str, Any]]] = {}
        for _, _, memory, length, admitted, term, title, content, tags in found:
            entry = by_row.setdefault(memory, (length, bool(admitted), {}))
            entry[2][term] = (title, content, tags)
        hits = [0] * len(wanted)
        rows: list[fts.RowHits] = []
        for memory, (length, admitted, row_terms) in by_row.items():
            if positions:
                freqs = tuple(fts.weighted_freq(p, row_terms, weights) for p in wanted)
            else:
                freqs = tuple(
                    fts.counted_freq(row_terms.get(p[0]), weights) if p else 0.0 for p in wanted
                )
            for index, freq in enumerate(freqs):
                if freq > 0:
                    hits[index] += 1
            if admitted and any(freqs):
                rows.append(fts.RowHits(id=memory, length=length, freqs=freqs))
        scored = fts.score(rows, corpus_rows, corpus_tokens, hits)
        scored.sort(key=lambda pair: (-pair[1], -pair[0]))
        scored = scored[:limit]
        self._remember([id_ for id_, _ in scored])
        return scored

    def _rank_in_sql(
        self,
        wanted: Sequence[fts.Phrase],
        where: MemoryFilter,
        readable: Predicate,
        passes: Predicate,
        *,
        limit: int,
        weights: Weights,
    ) -> list[tuple[int, float]]:
        """BM25 in one statement when every phrase is one term (the usual query): the
        statistics, IDFs and scores in SQL, fts.score's operations in its order (float8
        throughout, phrases summed in query order), only the best ``limit`` rows returned.
        A posting's ``freq`` is weighted by RFC-0020's column weights; other weights weigh its
        column counts in fts5_aux.c's order (whole numbers, so both are exact)."""
        terms = [phrase[0] if phrase else "" for phrase in wanted]
        f8 = "::float8"
        title_w, content_w, tags_w = (f"{float(w)!r}{f8}" for w in weights)
        freq = (
            "p.freq"
            if tuple(weights) == fts.WEIGHTS
            else f"({title_w} * cardinality(p.title) + {content_w} * cardinality(p.content)"
            f" + {tags_w} * cardinality(p.tags))"
        )
        k1, b = f"{fts.K1}{f8}", f"{fts.B}{f8}"
        if readable.sql == "TRUE":
            corpus = (
                "SELECT count(*)::float8 AS n, coalesce(sum(length), 0)::float8 AS t"
                " FROM memory_fts"
            )
        else:
            corpus = (
                "SELECT count(*)::float8 AS n, coalesce(sum(f.length), 0)::float8 AS t"
                f" FROM memory_fts AS f JOIN memories AS m ON m.id = f.memory WHERE {readable.sql}"
            )
        if _only_live(where):
            # memory_fts_terms holds live rows only: no filter, so no join at all.
            hits = f"SELECT q.i, p.memory, p.length::float8 AS length, {freq} AS freq,"
            hits += " TRUE AS admitted"
            hits += " FROM q JOIN memory_fts_terms AS p ON p.term = q.term"
            hit_params: tuple[Any, ...] = ()
        else:
            hits = (
                f"SELECT q.i, p.memory, p.length::float8 AS length, {freq} AS freq,"
                f" ({passes.sql}) AS admitted FROM q JOIN memory_fts_terms AS p ON p.term = q.term"
                f" JOIN memories AS m ON m.id = p.memory WHERE {readable.sql}"
            )
            hit_params = (*passes.params, *readable.params)
        rows = self._rows(
            f"WITH corpus AS ({corpus}),"
            " q AS (SELECT term, i FROM unnest(%s::text[]) WITH ORDINALITY AS q (term, i)),"
            f" hit AS ({hits}),"
            " df AS (SELECT i, count(*)::float8 AS n FROM hit GROUP BY i),"
            " idf AS (SELECT q.i, ln((c.n - coalesce(df.n, 0) + 0.5) / (coalesce(df.n, 0) + 0.5))"
            "  AS v FROM q CROSS JOIN corpus AS c LEFT JOIN df ON df.i = q.i)"
            " SELECT h.memory, sum(CASE WHEN idf.v <= 0 THEN 1e-6::float8 ELSE idf.v END"
            f"  * ((h.freq * ({k1} + 1.0{f8})) / (h.freq + {k1} * (1 - {b} + {b} * h.length"
            "  / (c.t / c.n)))) ORDER BY h.i) AS score"
            " FROM hit AS h JOIN idf ON idf.i = h.i CROSS JOIN corpus AS c"
            " WHERE h.admitted GROUP BY h.memory ORDER BY score DESC, h.memory DESC LIMIT %s",
            (*readable.params, terms, *hit_params, limit),
        )
        return [(int(memory), float(score)) for memory, score in rows]

    def _remember(self, ids: Sequence[int]) -> None:
        """Read these memories now, in one statement, for the get_memory calls a search
        makes next (a read snapshot can't change; a write transaction keeps no copies)."""
        if self._memo is None or not ids:
            return
        rows = self._rows(f"SELECT {_MEMORY} FROM memories AS m WHERE m.id = ANY(%s)", (list(ids),))
        for memory in map(memory_from_row, rows):
            self._memo[memory.id] = memory

    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]:
        wanted = fts.phrases(tokens)
        if not any(wanted) or not ids:
            return {}
        memo = self._memo or {}
        missing = [id_ for id_ in ids if id_ not in memo]
        memories = [memo[id_] for id_ in ids if id_ in memo]
        if missing:
            rows = self._rows(
                f"SELECT {_MEMORY} FROM memories AS m WHERE m.id = ANY(%s)", (missing,)
            )
            memories.extend(map(memory_from_row, rows))
        out = {}
        for memory in memories:
            if memory.deleted is None and fts.matches(memory, wanted):
                out[memory.id] = fts.snippet(memory, wanted)
        return out

    def list_memories(self, where: MemoryFilter, after: int | None, limit: int) -> list[Memory]:
        predicate = memory_predicate(where)
        if after is not None:
            predicate = Predicate.all_of(
                [predicate, Predicate("m.id < %s", (after,))], empty="TRUE"
            )
        rows = self._rows(
            f"SELECT {_MEMORY} FROM memories AS m WHERE {predicate.sql}"
            " ORDER BY m.id DESC LIMIT %s",
            (*predicate.params, limit),
        )
        return [memory_from_row(row) for row in rows]

    def space_summaries(self, access: Access) -> list[SpaceSummary]:
        readable = access_predicate(access, alias="m")
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
        rows = self._rows(
            f"SELECT {_SPACE} FROM spaces WHERE space = ANY(%s)", (sorted(set(spaces)),)
        )
        return {row[0]: space_from_row(row) for row in rows}

    def context_entries(self, where: MemoryFilter, offset: int, limit: int) -> list[ContextEntry]:
        predicate = memory_predicate(attrs.evolve(where, include_deleted=False))
        rows = self._rows(
            "SELECT m.id, m.importance, m.created, m.updated,"
            " coalesce(nullif(m.label, ''), m.principal), m.content"
            f" FROM memories AS m WHERE {predicate.sql}"
            f" ORDER BY {_CONTEXT_ORDER} LIMIT %s OFFSET %s",
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
        row = self._one(f"SELECT {_SESSION} FROM sessions AS s WHERE s.id = %s", (id,))
        return session_from_row(row) if row else None

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        row = self._one(
            f"SELECT {_SESSION} FROM sessions AS s WHERE s.harness = %s AND s.harness_session = %s",
            (harness, harness_session),
        )
        return session_from_row(row) if row else None

    def list_sessions(self, where: SessionFilter, after: int | None, limit: int) -> list[Session]:
        predicate = session_predicate(where)
        if after is not None:
            predicate = Predicate.all_of(
                [predicate, Predicate("s.id < %s", (after,))], empty="TRUE"
            )
        rows = self._rows(
            f"SELECT {_SESSION} FROM sessions AS s WHERE {predicate.sql}"
            " ORDER BY s.id DESC LIMIT %s",
            (*predicate.params, limit),
        )
        return [session_from_row(row) for row in rows]

    # -- clients and meta ----------------------------------------------------------------

    def get_client(self, name: str) -> Client | None:
        row = self._one(f"SELECT {_CLIENT} FROM clients WHERE name = %s", (name,))
        return client_from_row(row) if row else None

    def get_client_by_principal(self, principal: str) -> Client | None:
        row = self._one(f"SELECT {_CLIENT} FROM clients WHERE principal = %s", (principal,))
        return client_from_row(row) if row else None

    def list_clients(self) -> list[Client]:
        rows = self._rows(f"SELECT {_CLIENT} FROM clients ORDER BY name")
        return [client_from_row(r) for r in rows]

    def get_meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = %s", (key,))
        return row[0] if row else None

    def schema_version(self) -> int:
        value = self.get_meta("schema_version")
        return int(value) if value else 0

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
        memories, deleted, versions, sessions, vectors, pending = (int(v) for v in row)
        return StoreCounts(
            memories=memories,
            deleted=deleted,
            versions=versions,
            sessions=sessions,
            vectors=vectors,
            pending=pending,
        )


class PgWriteTx(PgReadTx):
    """Changes inside one write transaction, with the locks the module docstring lists."""

    def __init__(self, connection: psycopg.Connection[Row], where: str) -> None:
        super().__init__(connection, where)
        self._memo = None  # a write changes rows: never answer from a copy

    def _lock(self, *key: str) -> None:
        """A transaction advisory lock on ``key``, held until commit or rollback."""
        self._rows("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ("\x1f".join(key),))

    def get_memory(self, id: int) -> Memory | None:
        row = self._one(f"SELECT {_MEMORY} FROM memories AS m WHERE m.id = %s FOR UPDATE", (id,))
        return memory_from_row(row) if row else None

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        self._lock("content", space, content_sha256.hex())
        return super().find_live_by_content(space, content_sha256)

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        self._lock("session", harness, harness_session)
        return super().find_session(harness, harness_session)

    def get_meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = %s FOR UPDATE", (key,))
        return row[0] if row else None

    def _index(self, memory: Memory) -> None:
        """Write a live memory's length and postings (fts.py)."""
        length, postings = fts.postings(memory)
        self._send("INSERT INTO memory_fts (memory, length) VALUES (%s, %s)", (memory.id, length))
        if not postings:
            return
        with translated(self._where), self._connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO memory_fts_terms (term, memory, title, content, tags, length, freq)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        p.term,
                        memory.id,
                        list(p.title),
                        list(p.content),
                        list(p.tags),
                        length,
                        fts.counted_freq((len(p.title), len(p.content), len(p.tags))),
                    )
                    for p in postings
                ],
            )

    def insert_memory(self, memory: Memory) -> int:
        """Insert; a live duplicate is ``conflict.memory_duplicate`` naming the other row.
        ON CONFLICT keeps the transaction usable (a unique violation would abort it)."""
        row = self._one(
            f"INSERT INTO memories ({columns(MEMORY_COLUMNS[1:])})"
            f" VALUES ({_placeholders(len(MEMORY_COLUMNS) - 1)})"
            " ON CONFLICT (space, content_sha256) WHERE deleted IS NULL DO NOTHING RETURNING id",
            memory_values(memory),
        )
        if row is None:
            other = super().find_live_by_content(memory.space, memory.content_sha256)
            raise VenomError(
                "conflict.memory_duplicate",
                "a live memory with the same content already exists in this space",
                {"id": f"m{other.id}"} if other is not None else {},
            )
        id_ = int(row[0])
        if memory.deleted is None:
            self._index(attrs.evolve(memory, id=id_))
        return id_

    def replace_memory(self, memory: Memory) -> None:
        """Overwrite the row, unless another writer already took it to this revision or
        beyond (``conflict.memory_revision``): the check is inside the UPDATE."""
        assignments = ", ".join(f"{name} = %s" for name in MEMORY_COLUMNS[1:])
        row = self._one(
            f"UPDATE memories AS m SET {assignments} FROM"
            " (SELECT title, content, tags, deleted FROM memories WHERE id = %s) AS old"
            " WHERE m.id = %s AND m.revision < %s"
            " RETURNING old.title, old.content, old.tags, old.deleted",
            (*memory_values(memory), memory.id, memory.id, memory.revision),
        )
        if row is None:
            current = self._one("SELECT revision FROM memories WHERE id = %s", (memory.id,))
            if current is None:
                raise VenomError.not_found("memory", f"memory m{memory.id} does not exist")
            raise VenomError(
                "conflict.memory_revision",
                f"m{memory.id} is at revision {current[0]}",
                {"current": int(current[0])},
            )
        old_title, old_content, old_tags, old_deleted = row
        same_text = (old_title, old_content, old_tags) == (
            memory.title,
            memory.content,
            " ".join(memory.tags),
        )
        if same_text and (old_deleted is None) == (memory.deleted is None):
            return
        if old_deleted is None:
            self._send("DELETE FROM memory_fts WHERE memory = %s", (memory.id,))
        if memory.deleted is None:
            self._index(memory)

    def delete_memory(self, id: int) -> None:
        self._send("DELETE FROM memories WHERE id = %s", (id,))

    def insert_version(self, version: Version) -> None:
        self._send(
            f"INSERT INTO memory_versions ({_VERSION})"
            f" VALUES ({_placeholders(len(VERSION_COLUMNS))})",
            version_values(version),
        )

    def prune_versions(self, memory: int, keep: int) -> None:
        self._send(
            "DELETE FROM memory_versions WHERE memory = %s AND revision NOT IN"
            " (SELECT revision FROM memory_versions WHERE memory = %s"
            "  ORDER BY revision DESC LIMIT %s)",
            (memory, memory, max(keep, 0)),
        )

    def expired_tombstones(self, deleted_before: str) -> list[Memory]:
        rows = self._rows(
            f"SELECT {_MEMORY} FROM memories AS m"
            " WHERE m.deleted IS NOT NULL AND m.deleted < %s ORDER BY m.id",
            (deleted_before,),
        )
        return [memory_from_row(row) for row in rows]

    def insert_session(self, session: Session) -> int:
        row = self._one(
            f"INSERT INTO sessions ({columns(SESSION_COLUMNS[1:])})"
            f" VALUES ({_placeholders(len(SESSION_COLUMNS) - 1)}) RETURNING id",
            session_values(session),
        )
        assert row is not None
        return int(row[0])

    def replace_session(self, session: Session) -> None:
        assignments = ", ".join(f"{name} = %s" for name in SESSION_COLUMNS[1:])
        changed = self._run(
            f"UPDATE sessions SET {assignments} WHERE id = %s",
            (*session_values(session), session.id),
        )
        if not changed:
            raise VenomError.not_found("session", f"session s{session.id} does not exist")

    def delete_session(self, id: int) -> None:
        self._send("DELETE FROM sessions WHERE id = %s", (id,))

    def _clients_changed(self) -> None:
        """Every daemon on the database compares this counter before it trusts its registry
        (docs/adr/0028): a client added or removed anywhere is seen at the next request."""
        self._send(
            "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'clients_version'"
        )

    def insert_client(self, client: Client) -> None:
        self._send(
            f"INSERT INTO clients ({_CLIENT}) VALUES ({_placeholders(len(CLIENT_COLUMNS))})",
            client_values(client),
        )
        self._clients_changed()

    def delete_client(self, name: str) -> None:
        if self._run("DELETE FROM clients WHERE name = %s", (name,)):
            self._clients_changed()

    def set_meta(self, key: str, value: str) -> None:
        self._send(
            "INSERT INTO meta (key, value) VALUES (%s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str) -> None:
        self._send("DELETE FROM meta WHERE key = %s", (key,))

    def set_space_description(self, description: SpaceDescription) -> None:
        self._send(
            f"INSERT INTO spaces ({_SPACE}) VALUES ({_placeholders(len(SPACE_COLUMNS))})"
            " ON CONFLICT (space) DO UPDATE SET description = excluded.description,"
            " principal = excluded.principal, label = excluded.label, updated = excluded.updated",
            space_values(description),
        )

    def delete_space_description(self, space: str) -> None:
        self._send("DELETE FROM spaces WHERE space = %s", (space,))
