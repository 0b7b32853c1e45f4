"""The port the embedding service reads and writes its vectors through, and its records.

A store that can serve embeddings has ``vector_rows()`` (:class:`HasVectorRows`), which gives
a :class:`VectorRowStore`: ``read()`` opens one snapshot and ``write()`` one write
transaction, each yielding the statements of ``memory_vectors`` bound to it. Both SQL stores
give one class, ``sql_vectors.SqlVectorRows``, over their own statements (``sqlite/vectors.py``
on apsw, ``postgres/vectors.py`` on psycopg); the service (service.py) is one code path over
either.

The encoding is the same everywhere (RFC-0020 section 6): a vector is stored normalized to
length 1, little-endian float32, with its model's name. A memory is *pending* when it is live
and has no row. Writing a vector checks that the text it was computed from is still the
memory's text (title and ``content_sha256``), so a vector of stale text is never stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np
import numpy.typing as npt

__all__ = [
    "EMBEDDING_DTYPE",
    "HasVectorRows",
    "MemoryFacets",
    "PendingText",
    "StoredVector",
    "VectorReads",
    "VectorRowStore",
    "VectorRows",
    "VectorWrites",
    "decode_vector",
    "encode_vector",
    "unit_vector",
]

EMBEDDING_DTYPE = np.dtype("<f4")


def unit_vector(vector: Sequence[float] | npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """``vector`` scaled to length 1, in float64. A zero or non-finite vector is ValueError."""
    array = np.asarray(vector, dtype=np.float64).reshape(-1)
    norm = float(np.linalg.norm(array))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError("a vector must be finite and nonzero to normalize")
    return array / norm


def encode_vector(vector: Sequence[float] | npt.NDArray[Any]) -> bytes:
    """The stored form: normalized to length 1, then little-endian float32."""
    return unit_vector(vector).astype(EMBEDDING_DTYPE).tobytes()


def decode_vector(blob: bytes, dimensions: int) -> npt.NDArray[np.float32]:
    if len(blob) != dimensions * EMBEDDING_DTYPE.itemsize:
        raise ValueError(f"a stored vector of {len(blob)} bytes is not {dimensions} float32")
    return np.frombuffer(blob, dtype=EMBEDDING_DTYPE).astype(np.float32)


@attrs.frozen(kw_only=True)
class MemoryFacets:
    """What the vector index filters on: the columns a MemoryFilter reads."""

    space: str
    author: str
    kind: str
    tags: tuple[str, ...]
    session: int | None


@attrs.frozen(kw_only=True)
class PendingText:
    """A pending memory's text, and the fingerprint ``upsert_vector`` checks it against."""

    id: int
    title: str
    content: str
    content_sha256: bytes


@attrs.frozen(kw_only=True)
class StoredVector:
    """One live memory's stored vector of a model, with its facets."""

    id: int
    vector: npt.NDArray[np.float32]
    facets: MemoryFacets


@attrs.frozen(kw_only=True)
class VectorRows:
    """Every live vector of one model, column by column, ready for the index to adopt.

    ``matrix`` has at least ``len(ids)`` rows; the first ``len(ids)`` hold the vectors in the
    order of ``ids`` and the rest are spare capacity, allocated but never written (so not
    resident). The other columns have one entry per ID. ``stale`` lists the memories whose
    vector is of another model or of the wrong length.
    """

    ids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    spaces: list[str]
    authors: list[str]
    kinds: list[str]
    tags: list[str]
    sessions: list[int | None]
    stale: list[int] = attrs.field(factory=list)


class VectorReads(Protocol):
    """The queries, inside one read snapshot (or the write transaction)."""

    def load_vectors(
        self, model: str, dimensions: int, *, spare_fraction: float, min_spare: int
    ) -> VectorRows: ...

    def stored_vector(self, memory: int, model: str, dimensions: int) -> StoredVector | None: ...

    def pending_memories(self, *, limit: int) -> list[PendingText]: ...

    def count_pending(self) -> int: ...

    def count_vectors(self, model: str | None = None) -> int: ...


class VectorWrites(VectorReads, Protocol):
    """The changes, inside one write transaction."""

    def delete_stale_vectors(self, model: str, dimensions: int) -> int: ...

    def upsert_vector(
        self, pending: PendingText, model: str, vector: Sequence[float] | npt.NDArray[Any]
    ) -> StoredVector | None: ...


class VectorRowStore(Protocol):
    """One store's ``memory_vectors``, a transaction at a time."""

    def read(self) -> AbstractContextManager[VectorReads]: ...

    def write(self) -> AbstractContextManager[VectorWrites]: ...


@runtime_checkable
class HasVectorRows(Protocol):
    """A store that can serve embeddings."""

    def vector_rows(self) -> VectorRowStore: ...
