"""The ``memory_vectors`` statements the embedding service runs (RFC-0020 sections 5 and 6),
written once for every SQL store: the queries and changes behind the service's port
(embeddings/vector_rows.py, which holds the records and the encoding).

A vector is stored little-endian float32, normalized to length 1, with its model's name. A
memory is *pending* when it is live, a provider is on, and it has no row here. The schema's
``memories_vector_stale`` trigger deletes the row when the title or content changes or the
memory is deleted, and the foreign key's cascade deletes it on purge; so these statements
never have to notice those, and writing a vector only checks that the text it was computed
from is still the memory's text (:meth:`SqlVectors.upsert_vector`).

Each store (``sqlite/vectors.py``, ``postgres/vectors.py``) subclasses :class:`SqlVectors` on
one connection, inside whatever transaction its caller holds, and supplies only its doors
(:meth:`SqlVectors._rows`, :meth:`SqlVectors._run`, and :meth:`SqlVectors._vector_rows` for
the load: one pass on SQLite, pages in binary on PostgreSQL), its placeholder, and the lock
its text check takes (PostgreSQL's ``FOR SHARE``: postgres/vectors.py says why).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from .embeddings.vector_rows import (
    EMBEDDING_DTYPE,
    MemoryFacets,
    PendingText,
    StoredVector,
    VectorRows,
    decode_vector,
    encode_vector,
)
from .sql_tx import PENDING, Row

__all__ = ["LOAD_COLUMNS", "SqlVectorRows", "SqlVectors", "Transactions"]

Tx = TypeVar("Tx")
Tx_co = TypeVar("Tx_co", covariant=True)

# What :meth:`SqlVectors._vector_rows` gives, a row per live memory's vector.
LOAD_COLUMNS = (
    "v.memory, v.model, v.embedding, m.space, m.principal, m.kind, m.tags, m.session"
    " FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory WHERE m.deleted IS NULL"
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


class SqlVectors(ABC):
    """The statements on one connection, inside the transaction its caller holds."""

    _param: ClassVar[str]  # the dialect's placeholder
    _text_lock: ClassVar[str] = ""  # appended to the text check's read

    @abstractmethod
    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A statement's rows, fetched eagerly (written with ``?``, bound in the dialect)."""

    @abstractmethod
    def _run(self, sql: str, params: Sequence[Any] = ()) -> None:
        """A change whose rows nothing reads."""

    @abstractmethod
    def _vector_rows(self) -> Iterable[Row]:
        """``SELECT {LOAD_COLUMNS}``'s rows, read the engine's way."""

    def _sql(self, sql: str) -> str:
        return sql if self._param == "?" else sql.replace("?", self._param)

    def _count(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self._rows(self._sql(sql), params)[0][0])

    # -- queries ---------------------------------------------------------------------------

    def load_vectors(
        self, model: str, dimensions: int, *, spare_fraction: float = 0.0, min_spare: int = 0
    ) -> VectorRows:
        """Read every live memory's vector of ``model`` with its facets, in one pass.

        Call it inside a read transaction, so the count and the rows come from one snapshot.
        Blobs are copied straight into one preallocated float32 matrix, as many rows as live
        memories (a cheap count that bounds the vectors from above) plus
        ``max(min_spare, spare_fraction * live)`` spare rows. Vectors of another model or of
        the wrong length are left out and their memories listed in ``stale``, so serve learns
        whether :meth:`delete_stale_vectors` has work to do without a second scan.
        """
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
        # One str object per distinct value: a space or tag set repeats on many rows, and a
        # copy per row would stay in the allocator's arenas after the load.
        same: dict[str, str] = {}
        for (
            memory,
            vector_model,
            blob,
            space,
            principal,
            kind,
            tag_text,
            session,
        ) in self._vector_rows():
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

    def stored_vector(self, memory: int, model: str, dimensions: int) -> StoredVector | None:
        """The memory's vector of ``model`` with its facets, if it is live and has one."""
        rows = self._rows(
            self._sql(
                "SELECT v.embedding, m.space, m.principal, m.kind, m.tags, m.session"
                " FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory"
                " WHERE v.memory = ? AND v.model = ? AND m.deleted IS NULL"
            ),
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
        """Up to ``limit`` pending memories, newest first, so a new memory is embedded soon
        even behind a backlog."""
        rows = self._rows(
            self._sql(
                "SELECT m.id, m.title, m.content, m.content_sha256 FROM memories AS m"
                f" WHERE {PENDING} ORDER BY m.id DESC LIMIT ?"
            ),
            (limit,),
        )
        return [
            PendingText(id=int(id_), title=title, content=content, content_sha256=bytes(digest))
            for id_, title, content, digest in rows
        ]

    def count_pending(self) -> int:
        return self._count(f"SELECT count(*) FROM memories AS m WHERE {PENDING}")

    def count_pending_since(self, before: str, model: str) -> int:
        """Live memories whose text last changed before ``before`` (RFC 3339, compared as
        text) with no vector of ``model``: doctor's ``embeddings.pending``."""
        return self._count(
            "SELECT count(*) FROM memories AS m WHERE m.deleted IS NULL AND m.updated < ?"
            " AND NOT EXISTS (SELECT 1 FROM memory_vectors AS v"
            " WHERE v.memory = m.id AND v.model = ?)",
            (before, model),
        )

    def count_vectors(self, model: str | None = None) -> int:
        if model is None:
            return self._count("SELECT count(*) FROM memory_vectors")
        return self._count("SELECT count(*) FROM memory_vectors WHERE model = ?", (model,))

    # -- changes (inside a write transaction) ----------------------------------------------

    def delete_stale_vectors(self, model: str, dimensions: int) -> int:
        """At serve: delete every vector of another model, or of the wrong length for this
        one. Their memories become pending, and the worker embeds them again with the
        configured model. Returns how many rows were deleted (counted from the rows: a
        pipelined PostgreSQL statement has no rowcount yet)."""
        deleted = self._rows(
            self._sql(
                "DELETE FROM memory_vectors WHERE model <> ? OR octet_length(embedding) <> ?"
                " RETURNING memory"
            ),
            (model, dimensions * EMBEDDING_DTYPE.itemsize),
        )
        return len(deleted)

    def upsert_vector(
        self, pending: PendingText, model: str, vector: Sequence[float] | npt.NDArray[Any]
    ) -> StoredVector | None:
        """Store the vector computed from ``pending``'s text, if that is still the memory's
        text.

        The memory may have changed or gone while its text was being embedded; then nothing
        is stored (it stays pending if it is live) and ``None`` is returned. Otherwise the
        vector is stored normalized, replacing any earlier one (``ON CONFLICT``: two daemons
        embedding one memory at once both succeed), and returned as stored (the float32 unit
        vector) with the memory's facets, for the index. A zero or non-finite vector is
        ValueError.
        """
        blob = encode_vector(vector)
        rows = self._rows(
            self._sql(
                "SELECT space, principal, kind, tags, session FROM memories"
                " WHERE id = ? AND deleted IS NULL AND title = ? AND content_sha256 = ?"
            )
            + self._text_lock,
            (pending.id, pending.title, pending.content_sha256),
        )
        if not rows:
            return None
        self._run(
            self._sql(
                "INSERT INTO memory_vectors (memory, model, embedding) VALUES (?, ?, ?)"
                " ON CONFLICT (memory) DO UPDATE"
                " SET model = excluded.model, embedding = excluded.embedding"
            ),
            (pending.id, model, blob),
        )
        stored = decode_vector(blob, len(blob) // EMBEDDING_DTYPE.itemsize)
        return StoredVector(id=pending.id, vector=stored, facets=_facets(rows[0]))


class Transactions(Protocol[Tx_co]):
    """A SQL store's units of work, as :class:`SqlVectorRows` opens them."""

    def read(self) -> AbstractContextManager[Tx_co]: ...

    def write(self) -> AbstractContextManager[Tx_co]: ...


class SqlVectorRows(Generic[Tx]):
    """The embedding service's :class:`~venom_mem_adapters.embeddings.vector_rows.VectorRowStore`
    on any SQL store: its read snapshots and its write transactions, each yielding the store's
    :class:`SqlVectors` bound to the transaction's connection (``statements``). One class for
    every store, so a store module builds it and the statements' module never names the store.
    """

    def __init__(self, store: Transactions[Tx], statements: Callable[[Tx], SqlVectors]) -> None:
        self._store = store
        self._statements = statements

    @contextmanager
    def read(self) -> Iterator[SqlVectors]:
        with self._store.read() as tx:
            yield self._statements(tx)

    @contextmanager
    def write(self) -> Iterator[SqlVectors]:
        with self._store.write() as tx:
            yield self._statements(tx)
