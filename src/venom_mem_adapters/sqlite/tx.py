"""The ReadTx and WriteTx ports over one apsw connection inside an open transaction.

The store opens and ends the transaction (store.py); these classes only run statements. The
queries both SQL stores share are written once (``venom_mem_adapters/sql/_tx.py``); this
module supplies SQLite's doors, :meth:`SqliteReadTx._rows` and :meth:`SqliteReadTx._run`,
which fetch eagerly inside :func:`translated` so no apsw exception and no half-read cursor
escapes a method, and what only FTS5 does: ranking and snippets. The FTS5 index follows
the memories by triggers (schema.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import attrs

from venom_mem_core import fts
from venom_mem_core.errors import VenomError
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.records import Memory
from venom_mem_core.search_options import RFC_WEIGHTS, Weights

from ..sql import (
    MEMORY_COLUMNS,
    Row,
    SqlReadTx,
    SqlWriteTx,
    assignments,
    memory_values,
    narrows,
    only_live,
    placeholders,
)
from . import bm25
from .errors import translated
from .filters import FILTERS
from .match import fts_match_expression

__all__ = ["SqliteReadTx", "SqliteWriteTx"]

_SNIPPET = f"snippet(memory_fts, 1, '', '', '…', {fts.SNIPPET_TOKENS})"
_BUILTIN_BM25 = "bm25(memory_fts, {!r}, {!r}, {!r})"  # the column weights, floats


def _clean(tokens: Sequence[str]) -> list[str]:
    """FTS5 reads a query as a C string, so a NUL would end it mid-phrase (a syntax error).
    The tokenizer treats NUL as a separator anyway, so a space searches the same words."""
    return [token.replace("\x00", " ") for token in tokens]


def _match(tokens: Sequence[str]) -> str:
    return fts_match_expression(_clean(tokens))


class SqliteReadTx(SqlReadTx):
    """Queries over the snapshot of the connection's current transaction."""

    filters = FILTERS

    def __init__(self, connection: apsw.Connection, path: str) -> None:
        self._connection = connection
        self._path = path

    @property
    def connection(self) -> apsw.Connection:
        """The connection under this transaction, for adapter modules beside the store
        (vectors) that run their own statements inside it."""
        return self._connection

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with translated(self._path):
            return self._connection.execute(sql, tuple(params)).fetchall()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        with translated(self._path):
            self._connection.execute(sql, tuple(params)).fetchall()
            return self._connection.changes()

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
        candidates = FILTERS.memory_predicate(attrs.evolve(where, include_deleted=False))
        if not where.access.everything:
            # Statistics over the readable rows (docs/adr/0003), read in bulk (docs/adr/0016).
            readable = FILTERS.access_predicate(where.access, alias="m")
            with translated(self._path):
                return bm25.rank_readable(
                    self._connection,
                    _clean(tokens),
                    readable,
                    limit,
                    narrowed=candidates if narrows(where) else None,
                    weights=weights,
                )
        builtin = _BUILTIN_BM25.format(*map(float, weights))
        if only_live(where):
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
                f" WHERE memory_fts MATCH ? AND rowid IN ({placeholders('?', len(ids))})",
                (_match(tokens), *ids),
            )
        }

    def schema_version(self) -> int:
        """``user_version``, for store.status and doctor (not part of the port)."""
        row = self._one("PRAGMA user_version")
        return int(row[0]) if row else 0


class SqliteWriteTx(SqliteReadTx, SqlWriteTx):
    """Changes inside the store's one IMMEDIATE write transaction."""

    def _insert(self, sql: str, params: Sequence[Any]) -> int | None:
        with translated(self._path):
            self._connection.execute(sql, tuple(params)).fetchall()
            if not self._connection.changes():  # the statement's own rows, not triggers'
                return None
            return self._connection.last_insert_rowid()

    def replace_memory(self, memory: Memory) -> None:
        try:
            changed = self._run(
                f"UPDATE memories SET {assignments('?', MEMORY_COLUMNS[1:])} WHERE id = ?",
                (*memory_values(memory), memory.id),
            )
        except VenomError as error:
            if error.code == "conflict.memory_duplicate":
                raise self._duplicate(memory) from error.__cause__
            raise
        if not changed:
            raise VenomError.not_found("memory", f"memory m{memory.id} does not exist")
