"""The ReadTx and WriteTx ports over one psycopg connection inside an open transaction.

The store opens and ends the transaction (store.py); these classes only run statements. The
queries both SQL stores share are written once (``venom_mem_adapters/sql/_tx.py``); this
module supplies PostgreSQL's doors (:meth:`PgReadTx._rows`, :meth:`PgReadTx._run`, which
fetch eagerly inside :func:`translated`, and :meth:`PgReadTx._send`, pipelined), the
ranking and snippets of fts.py, the postings a write keeps, and the locks.

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
from venom_mem_core.fts import CorpusStats, bm25_term_sql, query_phrases, weighted_hits
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.records import InactiveSpace, Memory, Provenance, Session
from venom_mem_core.search_options import RFC_WEIGHTS, Weights

from ..sql import (
    MEMORY,
    MEMORY_COLUMNS,
    Row,
    SqlReadTx,
    SqlWriteTx,
    assignments,
    memory_from_row,
    memory_values,
    only_live,
)
from . import fts
from .errors import translated
from .filters import FILTERS, Predicate

__all__ = ["PgReadTx", "PgWriteTx", "array_literal"]


def _corpus(readable: Predicate) -> str:
    """The readable corpus's size, ``n`` rows of ``t`` tokens (float8, as BM25 divides)."""
    if readable.sql == FILTERS.dialect.true:
        return "SELECT count(*)::float8 AS n, coalesce(sum(length), 0)::float8 AS t FROM memory_fts"
    return (
        "SELECT count(*)::float8 AS n, coalesce(sum(f.length), 0)::float8 AS t"
        f" FROM memory_fts AS f JOIN memories AS m ON m.id = f.memory WHERE {readable.sql}"
    )


def array_literal(positions: Sequence[int]) -> str:
    """``{0,3}``: an integer array's literal."""
    return "{" + ",".join(map(str, positions)) + "}"


class PgReadTx(SqlReadTx):
    """Queries over the snapshot of the connection's current transaction."""

    filters = FILTERS

    def __init__(self, connection: psycopg.Connection[Row], where: str) -> None:
        self._connection = connection
        self._where = where
        # Memories read ahead for this snapshot (rank_text_scored); None in a write.
        self._memo: dict[int, Memory] | None = {}

    @property
    def connection(self) -> psycopg.Connection[Row]:
        return self._connection

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

    def get_memory(self, id: int) -> Memory | None:
        if self._memo is not None and id in self._memo:
            return self._memo[id]
        return super().get_memory(id)

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
        with their positions, which a phrase needs (a query of single terms is ranked in SQL,
        :meth:`_rank_in_sql`). The winners' rows are then read in one more, and kept for the
        search's get_memory and snippets.
        """
        wanted = query_phrases(tokens)
        terms = sorted({term for phrase in wanted for term in phrase})
        if not terms or limit <= 0 or where.access.nothing:
            return []
        readable = FILTERS.access_predicate(where.access, alias="m")
        passes = FILTERS.memory_predicate(attrs.evolve(where, include_deleted=False))
        if all(len(phrase) <= 1 for phrase in wanted):
            return self._rank_in_sql(wanted, where, readable, passes, limit=limit, weights=weights)
        found = self._rows(
            f"WITH corpus AS ({_corpus(readable)}),"
            f" hit AS (SELECT p.memory, f.length, ({passes.sql}) AS admitted, p.term,"
            " p.title, p.content, p.tags"
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
            freqs = tuple(fts.weighted_freq(p, row_terms, weights) for p in wanted)
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

    def text_stats(self, tokens: Sequence[str], access: Access) -> CorpusStats | None:
        """The readable corpus's size and each single-term token's readable rows, as
        :meth:`_rank_in_sql` counts them: one statement of counts, no posting read twice.
        None when a token has several terms (or none): that ranking is Python's."""
        wanted = query_phrases(tokens)
        if not wanted or any(len(phrase) != 1 for phrase in wanted) or access.nothing:
            return None
        readable = FILTERS.access_predicate(access, alias="m")
        terms = [phrase[0] for phrase in wanted]
        joined = (
            ""
            if readable.sql == FILTERS.dialect.true
            else f" JOIN memories AS m ON m.id = p.memory WHERE ({readable.sql}) AND"
        )
        # One count per term by a GROUP BY (a comparison per posting, not one per term).
        found = self._rows(
            f"WITH corpus AS ({_corpus(readable)}),"
            " df AS (SELECT p.term, count(*) AS n FROM memory_fts_terms AS p"
            f"{joined or ' WHERE'} p.term = ANY(%s) GROUP BY p.term)"
            " SELECT corpus.n, corpus.t, df.term, df.n FROM corpus LEFT JOIN df ON TRUE",
            (*readable.params, *readable.params, sorted(set(terms))),
        )
        hits = {term: int(n) for _, _, term, n in found if term is not None}
        return CorpusStats(
            rows=int(found[0][0]),
            tokens=int(found[0][1]),
            hits=tuple(hits.get(term, 0) for term in terms),
        )

    def rank_text_among(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights,
        *,
        stats: CorpusStats,
        among: Sequence[str],
    ) -> list[tuple[int, float]]:
        """:meth:`rank_text_scored` over the hits holding one of ``among``'s terms, with
        ``stats`` (:meth:`text_stats`'s) for the statistics it would count: the same
        operations on the same values, so the same scores, for far fewer rows."""
        wanted = query_phrases(tokens)
        required = sorted({term for phrase in query_phrases(among) for term in phrase})
        if (
            any(len(phrase) != 1 for phrase in wanted)
            or len(stats.hits) != len(wanted)
            or limit <= 0
            or where.access.nothing
        ):
            return self.rank_text_scored(tokens, where, limit, weights)
        if not required or stats.rows == 0:
            return []
        readable = FILTERS.access_predicate(where.access, alias="m")
        passes = FILTERS.memory_predicate(attrs.evolve(where, include_deleted=False))
        return self._rank_in_sql(
            wanted, where, readable, passes, limit=limit, weights=weights,
            stats=stats, required=required,
        )  # fmt: skip

    def _rank_in_sql(
        self,
        wanted: Sequence[fts.Phrase],
        where: MemoryFilter,
        readable: Predicate,
        passes: Predicate,
        *,
        limit: int,
        weights: Weights,
        stats: CorpusStats | None = None,
        required: Sequence[str] = (),
    ) -> list[tuple[int, float]]:
        """BM25 in one statement when every phrase is one term (the usual query): the
        statistics, IDFs and scores in SQL, fts.score's operations in its order (float8
        throughout), only the best ``limit`` rows returned.

        The postings are read once and grouped by row, one column ``f<i>`` per phrase (NULL
        where the row lacks the term), so the IDFs are counts of those columns and a row's
        score is ``p0 + p1 + ...`` in query order: a missing phrase adds 0.0, which leaves a
        float8 unchanged, as bm25's ``0.0 + ...`` does. (An ordered ``sum(... ORDER BY i)``
        per row gave the same numbers, and sorted each row's parts: issue 19.) A posting's
        ``freq`` is weighted by RFC-0020's column weights; other weights weigh its column
        counts in fts5_aux.c's order (whole numbers, so both are exact)."""
        terms = [phrase[0] if phrase else "" for phrase in wanted]
        f8 = "::float8"
        title_w, content_w, tags_w = (f"{float(w)!r}{f8}" for w in weights)
        freq = (
            "p.freq"
            if tuple(weights) == fts.WEIGHTS
            else f"({title_w} * cardinality(p.title) + {content_w} * cardinality(p.content)"
            f" + {tags_w} * cardinality(p.tags))"
        )
        # Each (term, memory) is one posting, so each f<i> sums one value or none: exact.
        freqs = ", ".join(
            f"sum({freq}) FILTER (WHERE p.term = %s) AS f{i}" for i in range(len(terms))
        )
        distinct = sorted(set(terms))
        if stats is not None:
            # rank_text_among: the statistics are ``stats``, counted over every hit, so only
            # the rows the filter admits that hold one of ``required``'s terms are read.
            hit = (
                f"SELECT p.memory, max(p.length){f8} AS length, TRUE AS admitted, {freqs}"
                " FROM memory_fts_terms AS p WHERE p.term = ANY(%s) AND p.memory IN"
                " (SELECT q.memory FROM memory_fts_terms AS q JOIN memories AS m"
                f" ON m.id = q.memory WHERE q.term = ANY(%s) AND ({passes.sql}))"
                " GROUP BY p.memory"
            )
            hit_params: tuple[Any, ...] = (*terms, distinct, list(required), *passes.params)
        elif only_live(where):
            # memory_fts_terms holds live rows only: no filter, so no join at all.
            hit = (
                f"SELECT p.memory, max(p.length){f8} AS length, TRUE AS admitted, {freqs}"
                " FROM memory_fts_terms AS p WHERE p.term = ANY(%s) GROUP BY p.memory"
            )
            hit_params = (*terms, distinct)
        else:
            hit = (
                f"SELECT p.memory, max(p.length){f8} AS length, bool_or({passes.sql}) AS admitted,"
                f" {freqs} FROM memory_fts_terms AS p JOIN memories AS m ON m.id = p.memory"
                f" WHERE p.term = ANY(%s) AND ({readable.sql}) GROUP BY p.memory"
            )
            hit_params = (*passes.params, *terms, distinct, *readable.params)
        corpus_params: tuple[Any, ...]
        df_params: tuple[Any, ...]
        if stats is None:
            corpus, corpus_params = _corpus(readable), tuple(readable.params)
            counts = ", ".join(f"count(f{i}){f8} AS n{i}" for i in range(len(terms)))
            df, df_params = f"SELECT {counts} FROM hit", ()
        else:
            corpus = f"SELECT %s{f8} AS n, %s{f8} AS t"
            corpus_params = (float(stats.rows), float(stats.tokens))
            counts = ", ".join(f"%s{f8} AS n{i}" for i in range(len(terms)))
            df, df_params = f"SELECT {counts}", tuple(float(n) for n in stats.hits)

        def part(i: int) -> str:
            term = bm25_term_sql(
                rows="c.n", hits=f"df.n{i}", freq=f"h.f{i}", length="h.length",
                avgdl="(c.t / c.n)", cast=f8,
            )  # fmt: skip
            return f"coalesce({term}, 0{f8})"

        score = " + ".join(part(i) for i in range(len(terms)))
        # The winners' rows come with their scores (no second round trip), kept for the
        # search's get_memory and snippets as _remember keeps them.
        rows = self._rows(
            f"WITH corpus AS ({corpus}), hit AS MATERIALIZED ({hit}),"
            f" df AS ({df}), ranked AS (SELECT h.memory, {score} AS score"
            " FROM hit AS h CROSS JOIN df CROSS JOIN corpus AS c"
            " WHERE h.admitted ORDER BY score DESC, h.memory DESC LIMIT %s)"
            f" SELECT r.score, {MEMORY} FROM ranked AS r JOIN memories AS m ON m.id = r.memory"
            " ORDER BY r.score DESC, r.memory DESC",
            (*corpus_params, *hit_params, *df_params, limit),
        )
        scored = []
        for row in rows:
            memory = memory_from_row(row[1:])
            if self._memo is not None:
                self._memo[memory.id] = memory
            scored.append((memory.id, float(row[0])))
        return scored

    def _remember(self, ids: Sequence[int]) -> None:
        """Read these memories now, in one statement, for the get_memory calls a search
        makes next (a read snapshot can't change; a write transaction keeps no copies)."""
        if self._memo is None or not ids:
            return
        for memory in self._memories(ids):
            self._memo[memory.id] = memory

    def _memories(self, ids: Sequence[int]) -> list[Memory]:
        rows = self._rows(f"SELECT {MEMORY} FROM memories AS m WHERE m.id = ANY(%s)", (list(ids),))
        return [memory_from_row(row) for row in rows]

    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]:
        wanted = query_phrases(tokens)
        if not any(wanted) or not ids:
            return {}
        memo = self._memo or {}
        missing = [id_ for id_ in ids if id_ not in memo]
        memories = [memo[id_] for id_ in ids if id_ in memo]
        if missing:
            memories.extend(self._memories(missing))
        out = {}
        for memory in memories:
            if memory.deleted is None and fts.matches(memory, wanted):
                out[memory.id] = fts.snippet(memory, wanted)
        return out

    def schema_version(self) -> int:
        value = self.get_meta("schema_version")
        return int(value) if value else 0


class PgWriteTx(PgReadTx, SqlWriteTx):
    """Changes inside one write transaction, with the locks the module docstring lists."""

    _locking = " FOR UPDATE"  # get_memory and get_meta: the rows this transaction changes

    def __init__(self, connection: psycopg.Connection[Row], where: str) -> None:
        super().__init__(connection, where)
        self._memo = None  # a write changes rows: never answer from a copy
        # The last row this transaction wrote, (table, key column, key): what settles a
        # COMMIT whose reply was lost across a server restart (store.py, docs/adr/0030).
        self.witness: tuple[str, str, int | str] | None = None

    def _insert(self, sql: str, params: Sequence[Any]) -> int | None:
        row = self._one(f"{sql} RETURNING id", params)
        if row is None:
            return None
        self.witness = (sql.split()[2], "id", int(row[0]))  # "INSERT INTO <table> ..."
        return int(row[0])

    def _lock(self, *key: str) -> None:
        """A transaction advisory lock on ``key``, held until commit or rollback. Queued,
        not read: it travels with the read that follows it, which the server runs after the
        lock is had, on a snapshot taken then (READ COMMITTED takes one per statement), so
        the lock costs no round trip of its own; a lock not had fails that read."""
        self._send("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ("\x1f".join(key),))

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        self._lock("content", space, content_sha256.hex())
        return super().find_live_by_content(space, content_sha256)

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        self._lock("session", harness, harness_session)
        return super().find_session(harness, harness_session)

    def _clients_changed(self) -> None:
        """Every daemon on the database compares this counter before it trusts its registry
        (docs/adr/0028): a client added or removed anywhere is seen at the next request."""
        self._send(
            "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'clients_version'"
        )

    def _indexed(self, memory: Memory, id: int) -> None:
        """Write a live memory's length and postings (fts.py): one statement, queued, its
        postings as parallel arrays (positions as array literals, ragged as they are)."""
        length, postings = fts.postings(memory)
        self._send(
            "WITH row_length AS (INSERT INTO memory_fts (memory, length) VALUES (%s, %s))"
            " INSERT INTO memory_fts_terms (term, memory, title, content, tags, length, freq)"
            " SELECT p.term, %s, p.title::integer[], p.content::integer[], p.tags::integer[],"
            " %s, p.freq FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[],"
            " %s::float8[]) AS p(term, title, content, tags, freq)",
            (
                id,
                length,
                id,
                length,
                [p.term for p in postings],
                [array_literal(p.title) for p in postings],
                [array_literal(p.content) for p in postings],
                [array_literal(p.tags) for p in postings],
                [weighted_hits((len(p.title), len(p.content), len(p.tags))) for p in postings],
            ),
        )

    # An unlink's UPDATE and a deactivate's INSERT leave a row with this transaction's ID as
    # its xmin, so they settle as an insert does; an activate's DELETE leaves none.
    def remove_link(self, id: int, removed: str, by: Provenance) -> None:
        super().remove_link(id, removed, by)
        self.witness = ("links", "id", id)

    def set_space_inactive(self, inactive: InactiveSpace) -> None:
        super().set_space_inactive(inactive)
        self.witness = ("inactive_spaces", "space", inactive.space)

    def replace_memory(self, memory: Memory) -> None:
        """Overwrite the row, unless another writer already took it to this revision or
        beyond (``conflict.memory_revision``): the check is inside the UPDATE."""
        row = self._one(
            f"UPDATE memories AS m SET {assignments('%s', MEMORY_COLUMNS[1:])} FROM"
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
        self.witness = ("memories", "id", memory.id)
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
            self._indexed(memory, memory.id)
