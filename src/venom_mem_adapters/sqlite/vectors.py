"""The ``memory_vectors`` statements (sql_vectors.py) on an apsw connection; the store
(store.py) binds them to its reader snapshots and its one writer's transactions through
:class:`~venom_mem_adapters.sql_vectors.SqlVectorRows`.

Every statement runs inside whatever transaction its caller opened (the writer's IMMEDIATE
transaction for changes, a reader's snapshot for queries) and translates apsw errors like
the rest of the store (:func:`translated`). The one writer makes the text check and the
insert of :meth:`SqlVectors.upsert_vector` atomic, so it takes no lock of its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import apsw

from ..sql_tx import Row
from ..sql_vectors import LOAD_COLUMNS, SqlVectors
from .errors import translated

__all__ = ["SqliteVectors"]


class SqliteVectors(SqlVectors):
    """The statements on one apsw connection."""

    _param = "?"

    def __init__(self, connection: apsw.Connection) -> None:
        self._connection = connection
        self._path = str(connection.filename)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with translated(self._path):
            rows: list[Row] = self._connection.execute(sql, tuple(params)).fetchall()
        return rows

    def _run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._rows(sql, params)

    def _vector_rows(self) -> Iterator[Row]:
        with translated(self._path):
            yield from self._connection.execute(f"SELECT {LOAD_COLUMNS}")
