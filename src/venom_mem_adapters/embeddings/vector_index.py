"""The daemon's exact vector index: live vectors of one model in one float32 matrix.

RFC-0020 section 5, step 3, and docs/adr/0007. A search is a dot product against every
filtered vector; there is no approximate index, so the result is the same as a full scan in
SQL would give, only faster.

Layout. Row ``r`` of a C-contiguous ``(capacity, dimensions)`` float32 matrix holds one
memory's unit vector; beside it, per-row columns hold what a :class:`MemoryFilter` reads:
the memory ID, its space, author principal and kind (as small integer codes), up to 16 tag
codes, and its session. The first ``len(index)`` rows are live; the rest is spare capacity,
which numpy allocates without touching, so it costs no resident memory until used.

Search (:meth:`VectorIndex.nearest`):

1. The filter (readable set, then spaces, kinds, all tags, sessions) becomes a boolean mask
   over the rows with vectorized numpy operations, *before* any similarity is computed, so a
   row the caller can't read never takes part.
2. One matrix-vector product over the passing rows (the whole matrix when most pass, the
   gathered rows when few do) finds the candidates: the top ``limit`` and anything within a
   rounding margin of the last of them.
3. Those few rows are scored again in float64, one row at a time the same way, so equal
   vectors get equal scores wherever they sit in the matrix; rows below ``min_similarity``
   are dropped and the rest ordered by similarity, then highest ID.

Upkeep is incremental: :meth:`upsert` writes one row (appending when the memory is new, and
growing the arrays by half when full, which amortizes to a constant per add), :meth:`remove`
moves the last row into the hole. Nothing reloads the matrix after :meth:`load`.

Threads: any number of searches run at once (numpy releases the GIL in the product); a change
waits for them and holds them off only while it copies one row. Growth copies the arrays
while searches go on, and swaps them in under the same short exclusive hold.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from venom_mem_core.errors import VenomError
from venom_mem_core.grammar import MAX_TAGS
from venom_mem_core.ports import MemoryFilter

__all__ = ["RowMeta", "VectorIndex"]

_NONE = -1  # no tag in this slot / no session
_MIN_CAPACITY = 64
_GROWTH = 1.5
# Fewer passing rows than this fraction of the matrix: gather them, else multiply everything.
_GATHER_FRACTION = 0.25
# Rows re-scored in float64 at a time, to bound the temporary when many rows tie.
_EXACT_CHUNK = 2048

FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen(kw_only=True)
class RowMeta:
    """The facets of one memory that a MemoryFilter reads."""

    space: str
    author: str
    kind: str
    tags: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    session: int | None = None


class _Codes:
    """Strings to small integers, assigned in order of first sight and never reused."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self._names: list[str] = []

    def __len__(self) -> int:
        return len(self._names)

    def code(self, value: str) -> int:
        found = self._codes.get(value)
        if found is None:
            found = self._codes[value] = len(self._names)
            self._names.append(value)
        return found

    def name(self, code: int) -> str:
        return self._names[code]

    def known(self, values: Iterable[str]) -> list[int]:
        """The codes of the values already seen; unseen values match no row."""
        return [c for c in (self._codes.get(v) for v in values) if c is not None]

    def get(self, value: str) -> int | None:
        return self._codes.get(value)


class _ReadWriteLock:
    """Many readers or one writer; a waiting writer holds off new readers."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            while self._writing or self._readers:
                self._cond.wait()
            self._waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


@attrs.define(kw_only=True)
class _Arrays:
    """The matrix and its per-row columns, all with the same capacity."""

    matrix: FloatArray
    ids: IntArray
    space: npt.NDArray[np.int32]
    author: npt.NDArray[np.int32]
    kind: npt.NDArray[np.int32]
    tags: npt.NDArray[np.int32]
    session: IntArray

    @classmethod
    def empty(cls, capacity: int, dimensions: int) -> _Arrays:
        return cls.around(np.empty((capacity, dimensions), dtype=np.float32))

    @classmethod
    def around(cls, matrix: FloatArray) -> _Arrays:
        """Columns, not yet filled, for each row of ``matrix``."""
        capacity = int(matrix.shape[0])
        return cls(
            matrix=matrix,
            ids=np.empty(capacity, dtype=np.int64),
            space=np.empty(capacity, dtype=np.int32),
            author=np.empty(capacity, dtype=np.int32),
            kind=np.empty(capacity, dtype=np.int32),
            tags=np.empty((capacity, MAX_TAGS), dtype=np.int32),
            session=np.empty(capacity, dtype=np.int64),
        )

    @property
    def capacity(self) -> int:
        return int(self.ids.shape[0])

    def copy_rows_into(self, other: _Arrays, count: int) -> None:
        other.matrix[:count] = self.matrix[:count]
        other.ids[:count] = self.ids[:count]
        other.space[:count] = self.space[:count]
        other.author[:count] = self.author[:count]
        other.kind[:count] = self.kind[:count]
        other.tags[:count] = self.tags[:count]
        other.session[:count] = self.session[:count]

    def move_row(self, source: int, target: int) -> None:
        self.matrix[target] = self.matrix[source]
        self.ids[target] = self.ids[source]
        self.space[target] = self.space[source]
        self.author[target] = self.author[source]
        self.kind[target] = self.kind[source]
        self.tags[target] = self.tags[source]
        self.session[target] = self.session[source]


class VectorIndex:
    """The core ``VectorSearch`` port over an in-memory matrix of one model's vectors."""

    def __init__(self, *, model: str, dimensions: int) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be at least 1")
        self._model = model
        self._dimensions = dimensions
        # Float32 rounding in the product is at most about dimensions * eps for unit vectors.
        self._margin = max(1e-4, 2.0 * dimensions * float(np.finfo(np.float32).eps))
        self._arrays = _Arrays.empty(0, dimensions)
        self._count = 0
        self._row_of: dict[int, int] = {}
        self._spaces = _Codes()
        self._authors = _Codes()
        self._kinds = _Codes()
        self._tag_codes = _Codes()
        self._rw = _ReadWriteLock()
        self._mutate = threading.Lock()  # one change at a time, growth included

    # -- facts ---------------------------------------------------------------------------

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def __len__(self) -> int:
        return self._count

    def __contains__(self, memory: object) -> bool:
        with self._rw.reading():
            return memory in self._row_of

    @property
    def capacity(self) -> int:
        return self._arrays.capacity

    @property
    def nbytes(self) -> int:
        """Bytes held by the live rows' vectors."""
        return self._count * self._dimensions * 4

    def ids(self) -> frozenset[int]:
        with self._rw.reading():
            return frozenset(self._row_of)

    def get(self, memory: int) -> tuple[FloatArray, RowMeta] | None:
        """A copy of the memory's row and its facets (for tests and diagnostics)."""
        with self._rw.reading():
            row = self._row_of.get(memory)
            if row is None:
                return None
            a = self._arrays
            meta = RowMeta(
                space=self._spaces.name(int(a.space[row])),
                author=self._authors.name(int(a.author[row])),
                kind=self._kinds.name(int(a.kind[row])),
                tags=tuple(self._tag_codes.name(int(c)) for c in a.tags[row] if c != _NONE),
                session=None if a.session[row] == _NONE else int(a.session[row]),
            )
            return a.matrix[row].copy(), meta

    # -- changes -------------------------------------------------------------------------

    def load(
        self,
        ids: Sequence[int] | IntArray,
        matrix: FloatArray,
        *,
        spaces: Sequence[str],
        authors: Sequence[str],
        kinds: Sequence[str],
        tags: Sequence[str],
        sessions: Sequence[int | None],
    ) -> None:
        """Replace the whole index, adopting ``matrix`` without copying it.

        ``matrix`` is float32, C-contiguous, with at least ``len(ids)`` rows (more rows are
        spare capacity) holding unit vectors. ``tags`` are space-separated, as stored.
        """
        count = len(ids)
        if (
            matrix.dtype != np.float32
            or matrix.ndim != 2
            or matrix.shape[1] != self._dimensions
            or matrix.shape[0] < count
            or not matrix.flags.c_contiguous
        ):
            raise ValueError("load needs a C-contiguous float32 matrix of the index's width")
        if not len(spaces) == len(authors) == len(kinds) == len(tags) == len(sessions) == count:
            raise ValueError("every column needs one entry per ID")
        space_codes, author_codes, kind_codes, tag_codes = _Codes(), _Codes(), _Codes(), _Codes()
        arrays = _Arrays.around(matrix)
        arrays.ids[:count] = np.asarray(ids, dtype=np.int64)
        arrays.space[:count] = [space_codes.code(s) for s in spaces]
        arrays.author[:count] = [author_codes.code(a) for a in authors]
        arrays.kind[:count] = [kind_codes.code(k) for k in kinds]
        arrays.session[:count] = [_NONE if s is None else s for s in sessions]
        arrays.tags[:count] = _NONE
        for row, text in enumerate(tags):
            if text:
                names = text.split()[:MAX_TAGS]
                arrays.tags[row, : len(names)] = [tag_codes.code(t) for t in names]
        row_of = {int(memory): row for row, memory in enumerate(arrays.ids[:count])}
        if len(row_of) != count:
            raise ValueError("load needs distinct IDs")
        with self._mutate, self._rw.writing():
            self._arrays, self._count, self._row_of = arrays, count, row_of
            self._spaces, self._authors, self._kinds = space_codes, author_codes, kind_codes
            self._tag_codes = tag_codes

    def upsert(self, memory: int, vector: Sequence[float] | FloatArray, meta: RowMeta) -> None:
        """Add the memory's row, or replace its vector and facets.

        ``vector`` must already be the unit vector as stored (float32); it is copied as is, so
        the index and the table hold the same numbers.
        """
        row_vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        if row_vector.shape[0] != self._dimensions:
            raise ValueError(
                f"a vector of length {row_vector.shape[0]} in an index of {self._dimensions}"
            )
        with self._mutate:
            row = self._row_of.get(memory)
            if row is None and self._count == self._arrays.capacity:
                self._grow()
            with self._rw.writing():
                if row is None:
                    row = self._count
                    self._count += 1
                    self._row_of[memory] = row
                    self._arrays.ids[row] = memory
                self._arrays.matrix[row] = row_vector
                self._write_meta(row, meta)

    def update_meta(self, memory: int, meta: RowMeta) -> bool:
        """Replace the facets of the memory's row (its kind or tags changed); False if absent."""
        with self._mutate, self._rw.writing():
            row = self._row_of.get(memory)
            if row is None:
                return False
            self._write_meta(row, meta)
            return True

    def remove(self, memory: int) -> bool:
        """Drop the memory's row, moving the last row into its place; False if absent."""
        with self._mutate, self._rw.writing():
            row = self._row_of.pop(memory, None)
            if row is None:
                return False
            last = self._count - 1
            if row != last:
                self._arrays.move_row(last, row)
                self._row_of[int(self._arrays.ids[row])] = row
            self._count = last
            return True

    def clear_session(self, session: int) -> int:
        """A purged session: its memories keep their text and lose it. Returns rows changed."""
        with self._mutate, self._rw.writing():
            column = self._arrays.session[: self._count]
            hit = column == session
            column[hit] = _NONE
            return int(hit.sum())

    def _write_meta(self, row: int, meta: RowMeta) -> None:
        a = self._arrays
        a.space[row] = self._spaces.code(meta.space)
        a.author[row] = self._authors.code(meta.author)
        a.kind[row] = self._kinds.code(meta.kind)
        names = meta.tags[:MAX_TAGS]
        a.tags[row] = _NONE
        a.tags[row, : len(names)] = [self._tag_codes.code(t) for t in names]
        a.session[row] = _NONE if meta.session is None else meta.session

    def _grow(self) -> None:
        """Copy into arrays half again as large; searches go on until the swap."""
        old = self._arrays
        new = _Arrays.empty(max(_MIN_CAPACITY, int(old.capacity * _GROWTH) + 1), self._dimensions)
        old.copy_rows_into(new, self._count)  # only this thread changes rows: _mutate is held
        with self._rw.writing():
            self._arrays = new

    # -- search --------------------------------------------------------------------------

    def nearest(
        self, query: Sequence[float], where: MemoryFilter, limit: int, min_similarity: float
    ) -> list[tuple[int, float]]:
        """Up to ``limit`` (memory ID, similarity) among rows passing ``where``, at or above
        ``min_similarity``, best first, ties by highest ID."""
        q64 = np.asarray(query, dtype=np.float64).reshape(-1)
        if q64.shape[0] != self._dimensions:
            raise VenomError(
                "unavailable.embeddings",
                f"the query vector has length {q64.shape[0]}, the index {self._dimensions}",
            )
        norm = float(np.linalg.norm(q64))
        if limit <= 0 or not np.isfinite(norm) or norm == 0.0:
            return []
        q64 = q64 / norm
        q32 = q64.astype(np.float32)
        with self._rw.reading():
            a, count = self._arrays, self._count
            if count == 0:
                return []
            mask = self._mask(where, a, count)
            rows = self._candidates(
                a, count, mask=mask, query=q32, limit=limit, min_similarity=min_similarity
            )
            ids, scores = self._exact(a, rows, q64)
        keep = scores >= min_similarity
        ids, scores = ids[keep], scores[keep]
        order = np.lexsort((-ids, -scores))[:limit]
        return [(int(ids[i]), float(scores[i])) for i in order]

    def _candidates(
        self,
        a: _Arrays,
        count: int,
        *,
        mask: BoolArray | None,
        query: FloatArray,
        limit: int,
        min_similarity: float,
    ) -> IntArray:
        """Rows that may be in the answer: the float32 top ``limit``, widened by the margin."""
        passing: IntArray | None = None
        if mask is None:
            sims = a.matrix[:count] @ query
        else:
            passing = np.flatnonzero(mask)
            if passing.size == 0:
                return passing
            if passing.size < _GATHER_FRACTION * count:
                sims = a.matrix[passing] @ query
            else:
                sims = (a.matrix[:count] @ query)[passing]
        floor = min_similarity - self._margin
        if sims.size > limit:
            kth = float(np.partition(sims, sims.size - limit)[sims.size - limit])
            floor = max(floor, kth - self._margin)
        keep = np.flatnonzero(sims >= floor)
        return keep if passing is None else passing[keep]

    def _exact(
        self, a: _Arrays, rows: IntArray, q64: npt.NDArray[np.float64]
    ) -> tuple[IntArray, npt.NDArray[np.float64]]:
        """Float64 similarity of each row, computed the same way for every row."""
        ids = a.ids[rows].copy()
        scores = np.empty(rows.size, dtype=np.float64)
        for start in range(0, rows.size, _EXACT_CHUNK):
            chunk = rows[start : start + _EXACT_CHUNK]
            scores[start : start + chunk.size] = (a.matrix[chunk].astype(np.float64) * q64).sum(
                axis=1
            )
        return ids, scores

    def _mask(self, where: MemoryFilter, a: _Arrays, count: int) -> BoolArray | None:
        """Rows passing the filter, or None when every row does. Deleted rows are never here."""
        access = where.access
        mask: BoolArray | None = None
        if not access.everything:
            mask = np.zeros(count, dtype=np.bool_)
            if access.spaces:
                mask |= self._member(a.space[:count], self._spaces, access.spaces)
            if access.ids:
                mask |= np.isin(a.ids[:count], np.fromiter(access.ids, dtype=np.int64))
            if access.owner is not None:
                owner = self._authors.get(access.owner)
                if owner is not None:
                    mask |= a.author[:count] == owner
        conditions: list[BoolArray] = []
        if where.spaces is not None:
            conditions.append(self._member(a.space[:count], self._spaces, where.spaces))
        if where.kinds is not None:
            conditions.append(self._member(a.kind[:count], self._kinds, where.kinds))
        for tag in sorted(where.tags):
            code = self._tag_codes.get(tag)
            if code is None:
                return np.zeros(count, dtype=np.bool_)
            conditions.append((a.tags[:count] == code).any(axis=1))
        if where.sessions is not None:
            wanted = np.fromiter(where.sessions, dtype=np.int64)
            conditions.append(np.isin(a.session[:count], wanted))
        if where.exclude_spaces:  # inactive spaces (docs/adr/0042)
            conditions.append(~self._member(a.space[:count], self._spaces, where.exclude_spaces))
        if where.exclude_ids:  # superseded memories
            excluded = np.fromiter(where.exclude_ids, dtype=np.int64)
            conditions.append(~np.isin(a.ids[:count], excluded))
        for condition in conditions:
            mask = condition if mask is None else mask & condition
        return mask

    @staticmethod
    def _member(column: npt.NDArray[Any], codes: _Codes, values: Iterable[str]) -> BoolArray:
        """``name of column[i] in values``, as one table lookup per row."""
        table = np.zeros(len(codes), dtype=np.bool_)
        table[codes.known(values)] = True
        found: BoolArray = table[column]
        return found
