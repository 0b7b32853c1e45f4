"""The ``memory_vectors`` table on SQLite: the pending set and the statements the embedding
service runs (RFC-0020 sections 5 and 6), and :class:`SqliteVectorRows`, the service's port
(embeddings/vector_rows.py, which holds the records and the encoding) over them.

A vector is stored little-endian float32, normalized to length 1, with its model's name. A
memory is *pending* when it is live, a provider is on, and it has no row here. The schema's
``memories_vector_stale`` trigger deletes the row when the title or content changes or the
memory is deleted, and the foreign key's cascade deletes it on purge; so this module never
has to notice those, and writing a vector only checks that the text it was computed from is
still the memory's text (:func:`upsert_vector`).

Every function takes the apsw connection and runs inside whatever transaction its caller
opened: the writer's IMMEDIATE transaction for changes, a reader's snapshot for queries. They
translate apsw errors like the rest of the store (:func:`translated`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np
import numpy.typing as npt

from ..embeddings.vector_rows import (
    EMBEDDING_DTYPE,
    MemoryFacets,
    PendingText,
    StoredVector,
    VectorRows,
    decode_vector,
    encode_vector,
    unit_vector,
)
from .errors import translated

if TYPE_CHECKING:
    from ..embeddings.vector_rows import VectorRowStore
    from .store import SqliteStore

__all__ = [
    "EMBEDDING_DTYPE",
    "MemoryFacets",
    "PendingText",
    "SqliteVectorRows",
    "StoredVector",
    "VectorRows",
    "count_pending",
    "count_pending_before",
    "count_vectors",
    "decode_vector",
    "delete_stale_vectors",
    "encode_vector",
    "has_vector",
    "load_vectors",
    "pending_memories",
    "stored_vector",
    "unit_vector",
    "upsert_vector",
]

_PENDING = (
    "m.deleted IS NULL AND NOT EXISTS (SELECT 1 FROM memory_vectors AS v WHERE v.memory = m.id)"
)


Row = tuple[Any, ...]


def _fetch(connection: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
    """Every row of one statement, fetched eagerly, apsw errors translated."""
    with translated(_path(connection)):
        rows: list[Row] = connection.execute(sql, params).fetchall()
    return rows


def _facets(row: Sequence[Any]) -> MemoryFacets:
    """From ``space, principal, kind, tags, session`` columns."""
    space, principal, kind, tags, session = row
    return MemoryFacets(
        space=space, author=principal, kind=kind, tags=tuple(tags.split()), session=session
    )


def _path(connection: apsw.Connection) -> str:
    return str(connection.filename)


# -- queries -------------------------------------------------------------------------------


def load_vectors(
    connection: apsw.Connection,
    model: str,
    dimensions: int,
    *,
    spare_fraction: float = 0.0,
    min_spare: int = 0,
) -> VectorRows:
    """Read every live memory's vector of ``model`` with its facets, in one pass.

    Call it inside a read transaction, so the count and the rows come from one snapshot.
    Blobs are copied straight into one preallocated float32 matrix, as many rows as live
    memories (a cheap count, through the ``memories_space`` index, that bounds the vectors
    from above) plus ``max(min_spare, spare_fraction * live)`` spare rows. Vectors of
    another model or of the wrong length are left out and their memories listed in
    ``stale``, so serve learns whether :func:`delete_stale_vectors` has work to do without
    a second scan of the table.
    """
    row_bytes = dimensions * EMBEDDING_DTYPE.itemsize
    upper = int(_fetch(connection, "SELECT count(*) FROM memories WHERE deleted IS NULL")[0][0])
    spare = max(min_spare, int(upper * spare_fraction), 0)
    matrix = np.empty((upper + spare, dimensions), dtype=EMBEDDING_DTYPE)
    raw = matrix.data.cast("B")
    with translated(_path(connection)):
        ids: list[int] = []
        spaces: list[str] = []
        authors: list[str] = []
        kinds: list[str] = []
        tags: list[str] = []
        sessions: list[int | None] = []
        stale: list[int] = []
        cursor = connection.execute(
            "SELECT v.memory, v.model, v.embedding, m.space, m.principal, m.kind, m.tags,"
            " m.session FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory"
            " WHERE m.deleted IS NULL"
        )
        # One str object per distinct value: a space or tag set repeats on many rows, and a
        # copy per row would stay in the allocator's arenas after the load.
        same: dict[str, str] = {}
        for memory, vector_model, blob, space, principal, kind, tag_text, session in cursor:
            row = len(ids)
            if vector_model != model or len(blob) != row_bytes:
                stale.append(memory)
                continue
            if row >= upper:
                continue  # the count is from the same snapshot; this is belt and braces
            raw[row * row_bytes : (row + 1) * row_bytes] = blob
            ids.append(memory)
            spaces.append(same.setdefault(space, space))
            authors.append(same.setdefault(principal, principal))
            kinds.append(same.setdefault(kind, kind))
            tags.append(same.setdefault(tag_text, tag_text))
            sessions.append(session)
    return VectorRows(
        ids=np.asarray(ids, dtype=np.int64),
        # A no-op view on little-endian machines; a converting copy on the others.
        matrix=matrix if matrix.dtype == np.float32 else matrix.astype(np.float32),
        spaces=spaces,
        authors=authors,
        kinds=kinds,
        tags=tags,
        sessions=sessions,
        stale=stale,
    )


def stored_vector(
    connection: apsw.Connection, memory: int, model: str, dimensions: int
) -> StoredVector | None:
    """The memory's vector of ``model`` with its facets, if it is live and has one."""
    rows = _fetch(
        connection,
        "SELECT v.embedding, m.space, m.principal, m.kind, m.tags, m.session"
        " FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory"
        " WHERE v.memory = ? AND v.model = ? AND m.deleted IS NULL",
        (memory, model),
    )
    if not rows:
        return None
    blob, *facets = rows[0]
    try:
        vector = decode_vector(blob, dimensions)
    except ValueError:
        return None
    return StoredVector(id=memory, vector=vector, facets=_facets(facets))


def pending_memories(connection: apsw.Connection, *, limit: int) -> list[PendingText]:
    """Up to ``limit`` pending memories, newest first, so a new memory is embedded soon
    even behind a backlog."""
    rows = _fetch(
        connection,
        "SELECT m.id, m.title, m.content, m.content_sha256 FROM memories AS m"
        f" WHERE {_PENDING} ORDER BY m.id DESC LIMIT ?",
        (limit,),
    )
    return [
        PendingText(id=id_, title=title, content=content, content_sha256=bytes(digest))
        for id_, title, content, digest in rows
    ]


def count_pending(connection: apsw.Connection) -> int:
    return int(_fetch(connection, f"SELECT count(*) FROM memories AS m WHERE {_PENDING}")[0][0])


def count_pending_before(connection: apsw.Connection, updated_before: str) -> int:
    """Pending memories last changed before the timestamp (RFC 3339, compared as text)."""
    rows = _fetch(
        connection,
        f"SELECT count(*) FROM memories AS m WHERE {_PENDING} AND m.updated < ?",
        (updated_before,),
    )
    return int(rows[0][0])


def count_vectors(connection: apsw.Connection, model: str | None = None) -> int:
    if model is None:
        return int(_fetch(connection, "SELECT count(*) FROM memory_vectors")[0][0])
    rows = _fetch(connection, "SELECT count(*) FROM memory_vectors WHERE model = ?", (model,))
    return int(rows[0][0])


def has_vector(connection: apsw.Connection, memory: int, model: str | None = None) -> bool:
    """True when the memory has a stored vector (of ``model``, when given)."""
    if model is None:
        return bool(_fetch(connection, "SELECT 1 FROM memory_vectors WHERE memory = ?", (memory,)))
    return bool(
        _fetch(
            connection,
            "SELECT 1 FROM memory_vectors WHERE memory = ? AND model = ?",
            (memory, model),
        )
    )


# -- changes (inside the writer's transaction) ---------------------------------------------


def delete_stale_vectors(connection: apsw.Connection, model: str, dimensions: int) -> int:
    """At serve: delete every vector of another model, or of the wrong length for this one.

    Their memories become pending, and the worker embeds them again with the configured
    model. Returns how many rows were deleted.
    """
    _fetch(
        connection,
        "DELETE FROM memory_vectors WHERE model <> ? OR length(embedding) <> ?",
        (model, dimensions * EMBEDDING_DTYPE.itemsize),
    )
    return int(connection.changes())


def upsert_vector(
    connection: apsw.Connection,
    pending: PendingText,
    model: str,
    vector: Sequence[float] | npt.NDArray[Any],
) -> StoredVector | None:
    """Store the vector computed from ``pending``'s text, if that is still the memory's text.

    The memory may have changed or gone while its text was being embedded; then nothing is
    stored (it stays pending if it is live) and ``None`` is returned. Otherwise the vector is
    stored normalized, replacing any earlier one, and returned as stored (the float32 unit
    vector) with the memory's facets, for the index. A zero or non-finite vector is
    ValueError.
    """
    blob = encode_vector(vector)
    rows = _fetch(
        connection,
        "SELECT space, principal, kind, tags, session FROM memories"
        " WHERE id = ? AND deleted IS NULL AND title = ? AND content_sha256 = ?",
        (pending.id, pending.title, pending.content_sha256),
    )
    if not rows:
        return None
    _fetch(
        connection,
        "INSERT INTO memory_vectors (memory, model, embedding) VALUES (?, ?, ?)"
        " ON CONFLICT (memory) DO UPDATE"
        " SET model = excluded.model, embedding = excluded.embedding",
        (pending.id, model, blob),
    )
    stored = decode_vector(blob, len(blob) // EMBEDDING_DTYPE.itemsize)
    return StoredVector(id=pending.id, vector=stored, facets=_facets(rows[0]))


# -- the embedding service's port ----------------------------------------------------------


class _Bound:
    """The statements above on one connection, inside the transaction its caller holds."""

    def __init__(self, connection: apsw.Connection) -> None:
        self._connection = connection

    def load_vectors(
        self, model: str, dimensions: int, *, spare_fraction: float, min_spare: int
    ) -> VectorRows:
        return load_vectors(
            self._connection,
            model,
            dimensions,
            spare_fraction=spare_fraction,
            min_spare=min_spare,
        )

    def stored_vector(self, memory: int, model: str, dimensions: int) -> StoredVector | None:
        return stored_vector(self._connection, memory, model, dimensions)

    def pending_memories(self, *, limit: int) -> list[PendingText]:
        return pending_memories(self._connection, limit=limit)

    def count_pending(self) -> int:
        return count_pending(self._connection)

    def count_vectors(self, model: str | None = None) -> int:
        return count_vectors(self._connection, model)

    def delete_stale_vectors(self, model: str, dimensions: int) -> int:
        return delete_stale_vectors(self._connection, model, dimensions)

    def upsert_vector(
        self, pending: PendingText, model: str, vector: Sequence[float] | npt.NDArray[Any]
    ) -> StoredVector | None:
        return upsert_vector(self._connection, pending, model, vector)


class SqliteVectorRows:
    """The embedding service's :class:`~venom_mem_adapters.embeddings.vector_rows.VectorRowStore`
    on a SqliteStore: its reader snapshots and its one writer's transactions."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    @contextmanager
    def read(self) -> Iterator[_Bound]:
        with self._store.read() as tx:
            yield _Bound(tx.connection)

    @contextmanager
    def write(self) -> Iterator[_Bound]:
        with self._store.write() as tx:
            yield _Bound(tx.connection)


if TYPE_CHECKING:

    def _conforms(store: SqliteStore) -> VectorRowStore:
        return SqliteVectorRows(store)
