"""The ``memory_vectors`` table on PostgreSQL: the statements of ``sql_vectors.py`` on a
psycopg connection, which the store (store.py) binds to its transactions through
:class:`~venom_mem_adapters.sql_vectors.SqlVectorRows`.

The encoding is the SQLite store's: little-endian float32 unit vectors in ``bytea``, with the
model's name; ``memories_vector_stale`` (schema.py) deletes a vector when its memory's title
or content changes or the memory is deleted, and the foreign key's cascade on purge. What
several daemons on one database change (docs/adr/0028):

* :meth:`PgVectors.upsert_vector` reads the memory ``FOR SHARE`` while it checks the text's
  fingerprint. SQLite's one writer makes check-then-insert atomic; here an update of the
  memory by another daemon either waits for this transaction (and its trigger then deletes
  the vector just stored) or commits first (and the check, evaluated again on the new row,
  fails), so a vector of stale text is never stored.
* The insert is ``ON CONFLICT (memory) DO UPDATE``: two daemons embedding one memory at once
  both succeed, the later commit's vector staying (the same model gives the same vector).
* :meth:`PgVectors.load_vectors` reads in pages by memory ID inside the read snapshot, in
  binary, so serve never holds the whole table's result twice over.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from ..sql_tx import Row
from ..sql_vectors import LOAD_COLUMNS, SqlVectors

__all__ = ["PgVectors"]

Connection = psycopg.Connection[tuple[Any, ...]]
_PAGE = 16384  # rows per page: about 50 MB of 768-dimension vectors (2-3 s at 100k here)


class PgVectors(SqlVectors):
    """The statements on one psycopg connection."""

    _param = "%s"
    _text_lock = " FOR SHARE"

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._connection.execute(sql, params).fetchall()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._connection.execute(sql, params)

    def _vector_rows(self) -> Iterator[Row]:
        """In pages by memory ID inside the read snapshot, in binary (the module docstring)."""
        cursor = self._connection.cursor(binary=True)
        after = 0
        while True:
            cursor.execute(
                f"SELECT {LOAD_COLUMNS} AND v.memory > %s ORDER BY v.memory LIMIT %s",
                (after, _PAGE),
            )
            page = cursor.fetchall()
            yield from page
            if len(page) < _PAGE:
                return
            after = int(page[-1][0])
