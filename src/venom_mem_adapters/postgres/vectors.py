"""The ``memory_vectors`` table on PostgreSQL: the embedding service's port
(embeddings/vector_rows.py) over a PostgresStore, the same statements as ``sqlite/vectors.py``.

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
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import psycopg

from ..embeddings.vector_rows import (
    EMBEDDING_DTYPE,
    MemoryFacets,
    PendingText,
    StoredVector,
    VectorRows,
    decode_vector,
    encode_vector,
)

if TYPE_CHECKING:
    from ..embeddings.vector_rows import VectorRowStore
    from .store import PostgresStore

__all__ = ["PgVectorRows", "PgVectors"]

Connection = psycopg.Connection[tuple[Any, ...]]
_PAGE = 16384  # rows per page: about 50 MB of 768-dimension vectors (2-3 s at 100k here)
_PENDING = (
    "m.deleted IS NULL AND NOT EXISTS (SELECT 1 FROM memory_vectors AS v WHERE v.memory = m.id)"
)


def _facets(row: Sequence[Any]) -> MemoryFacets:
    """From ``space, principal, kind, tags, session`` columns."""
    space, principal, kind, tags, session = row
    return MemoryFacets(
        space=space,
        author=principal,
        kind=kind,
        tags=tuple(tags.split()),
        session=None if session is None else int(session),
    )


class PgVectors:
    """The statements on one connection, inside the transaction its caller holds."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._connection.execute(sql, params).fetchall()

    def _count(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self._rows(sql, params)[0][0])

    # -- queries ---------------------------------------------------------------------------

    def load_vectors(
        self, model: str, dimensions: int, *, spare_fraction: float, min_spare: int
    ) -> VectorRows:
        """Every live memory's vector of ``model`` with its facets (sqlite/vectors.py's
        ``load_vectors``: one preallocated matrix, spare rows, other models' in ``stale``)."""
        row_bytes = dimensions * EMBEDDING_DTYPE.itemsize
        upper = self._count("SELECT count(*) FROM memories WHERE deleted IS NULL")
        spare = max(min_spare, int(upper * spare_fraction), 0)
        matrix = np.empty((upper + spare, dimensions), dtype=EMBEDDING_DTYPE)
        raw = matrix.data.cast("B")
        ids: list[int] = []
        spaces: list[str] = []
        authors: list[str] = []
        kinds: list[str] = []
        tags: list[str] = []
        sessions: list[int | None] = []
        stale: list[int] = []
        same: dict[str, str] = {}  # one str object per distinct value, as on SQLite
        after = 0
        cursor = self._connection.cursor(binary=True)
        while True:
            cursor.execute(
                "SELECT v.memory, v.model, v.embedding, m.space, m.principal, m.kind, m.tags,"
                " m.session FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory"
                " WHERE m.deleted IS NULL AND v.memory > %s ORDER BY v.memory LIMIT %s",
                (after, _PAGE),
            )
            page = cursor.fetchall()
            for memory, vector_model, blob, space, principal, kind, tag_text, session in page:
                row = len(ids)
                if vector_model != model or len(blob) != row_bytes:
                    stale.append(int(memory))
                    continue
                if row >= upper:
                    continue  # the count is from the same snapshot; this is belt and braces
                raw[row * row_bytes : (row + 1) * row_bytes] = blob
                ids.append(int(memory))
                spaces.append(same.setdefault(space, space))
                authors.append(same.setdefault(principal, principal))
                kinds.append(same.setdefault(kind, kind))
                tags.append(same.setdefault(tag_text, tag_text))
                sessions.append(None if session is None else int(session))
            if len(page) < _PAGE:
                break
            after = int(page[-1][0])
        return VectorRows(
            ids=np.asarray(ids, dtype=np.int64),
            matrix=matrix if matrix.dtype == np.float32 else matrix.astype(np.float32),
            spaces=spaces,
            authors=authors,
            kinds=kinds,
            tags=tags,
            sessions=sessions,
            stale=stale,
        )

    def stored_vector(self, memory: int, model: str, dimensions: int) -> StoredVector | None:
        """The memory's vector of ``model`` with its facets, if it is live and has one."""
        rows = self._rows(
            "SELECT v.embedding, m.space, m.principal, m.kind, m.tags, m.session"
            " FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory"
            " WHERE v.memory = %s AND v.model = %s AND m.deleted IS NULL",
            (memory, model),
        )
        if not rows:
            return None
        blob, *facets = rows[0]
        try:
            vector = decode_vector(bytes(blob), dimensions)
        except ValueError:
            return None
        return StoredVector(id=memory, vector=vector, facets=_facets(facets))

    def pending_memories(self, *, limit: int) -> list[PendingText]:
        """Up to ``limit`` pending memories, newest first."""
        rows = self._rows(
            "SELECT m.id, m.title, m.content, m.content_sha256 FROM memories AS m"
            f" WHERE {_PENDING} ORDER BY m.id DESC LIMIT %s",
            (limit,),
        )
        return [
            PendingText(id=int(id_), title=title, content=content, content_sha256=bytes(digest))
            for id_, title, content, digest in rows
        ]

    def count_pending(self) -> int:
        return self._count(f"SELECT count(*) FROM memories AS m WHERE {_PENDING}")

    def count_vectors(self, model: str | None = None) -> int:
        if model is None:
            return self._count("SELECT count(*) FROM memory_vectors")
        return self._count("SELECT count(*) FROM memory_vectors WHERE model = %s", (model,))

    # -- changes (inside a write transaction) ----------------------------------------------

    def delete_stale_vectors(self, model: str, dimensions: int) -> int:
        """At serve: delete every vector of another model, or of the wrong length."""
        deleted = self._rows(
            "DELETE FROM memory_vectors WHERE model <> %s OR octet_length(embedding) <> %s"
            " RETURNING memory",  # counted from the rows: the pipeline has no rowcount yet
            (model, dimensions * EMBEDDING_DTYPE.itemsize),
        )
        return len(deleted)

    def upsert_vector(
        self, pending: PendingText, model: str, vector: Sequence[float] | npt.NDArray[Any]
    ) -> StoredVector | None:
        """Store the vector computed from ``pending``'s text, if that is still the memory's
        text (checked under a share lock on the memory: the module docstring says why)."""
        blob = encode_vector(vector)
        rows = self._rows(
            "SELECT space, principal, kind, tags, session FROM memories"
            " WHERE id = %s AND deleted IS NULL AND title = %s AND content_sha256 = %s"
            " FOR SHARE",
            (pending.id, pending.title, pending.content_sha256),
        )
        if not rows:
            return None
        self._connection.execute(
            "INSERT INTO memory_vectors (memory, model, embedding) VALUES (%s, %s, %s)"
            " ON CONFLICT (memory) DO UPDATE"
            " SET model = excluded.model, embedding = excluded.embedding",
            (pending.id, model, blob),
        )
        stored = decode_vector(blob, len(blob) // EMBEDDING_DTYPE.itemsize)
        return StoredVector(id=pending.id, vector=stored, facets=_facets(rows[0]))


class PgVectorRows:
    """The embedding service's VectorRowStore on a PostgresStore's transactions."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    @contextmanager
    def read(self) -> Iterator[PgVectors]:
        with self._store.read() as tx:
            yield PgVectors(tx.connection)

    @contextmanager
    def write(self) -> Iterator[PgVectors]:
        with self._store.write() as tx:
            yield PgVectors(tx.connection)


if TYPE_CHECKING:

    def _conforms(store: PostgresStore) -> VectorRowStore:
        return PgVectorRows(store)
