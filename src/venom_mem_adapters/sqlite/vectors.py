"""The ``memory_vectors`` statements (sql_vectors.py) on an apsw connection, and
:class:`SqliteVectorRows`, the embedding service's port (embeddings/vector_rows.py) over a
SqliteStore: its reader snapshots and its one writer's transactions.

Every statement runs inside whatever transaction its caller opened (the writer's IMMEDIATE
transaction for changes, a reader's snapshot for queries) and translates apsw errors like
the rest of the store (:func:`translated`). The one writer makes the text check and the
insert of :meth:`SqlVectors.upsert_vector` atomic, so it takes no lock of its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import apsw

from ..sql_tx import Row
from ..sql_vectors import LOAD_COLUMNS, SqlVectors
from .errors import translated

if TYPE_CHECKING:
    from ..embeddings.vector_rows import VectorRowStore
    from .store import SqliteStore

__all__ = ["SqliteVectorRows", "SqliteVectors"]


class SqliteVectors(SqlVectors):
    """The statements on one apsw connection."""

    _p = "?"

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


class SqliteVectorRows:
    """The embedding service's :class:`~venom_mem_adapters.embeddings.vector_rows.VectorRowStore`
    on a SqliteStore: its reader snapshots and its one writer's transactions."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    @contextmanager
    def read(self) -> Iterator[SqliteVectors]:
        with self._store.read() as tx:
            yield SqliteVectors(tx.connection)

    @contextmanager
    def write(self) -> Iterator[SqliteVectors]:
        with self._store.write() as tx:
            yield SqliteVectors(tx.connection)


if TYPE_CHECKING:

    def _conforms(store: SqliteStore) -> VectorRowStore:
        return SqliteVectorRows(store)
