"""The in-daemon vector index: filter before rank, exact order, incremental upkeep, threads."""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from venom_mem_adapters.embeddings.vector_index import RowMeta, VectorIndex
from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.records import Memory, Provenance

DIMS = 8
EVERYTHING = Access(everything=True)
SPACES = ("user", "project/a", "project/b")
AUTHORS = ("owner", "g1", "g2")
KINDS = ("fact", "decision", "procedure", "note")
TAGS = ("zig", "build", "ci", "docs", "rust")


def unit(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return (array / np.linalg.norm(array)).astype(np.float32)


def where(access: Access = EVERYTHING, **kw: object) -> MemoryFilter:
    return MemoryFilter(access=access, **kw)  # type: ignore[arg-type]


def memory(id_: int, meta: RowMeta) -> Memory:
    """The record MemoryFilter.matches reads, with the row's facets."""
    return Memory(
        id=id_,
        space=meta.space,
        kind=meta.kind,
        content="x",
        content_sha256=b"",
        tags=meta.tags,
        author=Provenance(principal=meta.author),
        updated_by=Provenance(principal=meta.author),
        session=meta.session,
        created="t",
        updated="t",
    )


def random_rows(rng: random.Random, count: int) -> dict[int, tuple[np.ndarray, RowMeta]]:
    rows = {}
    for id_ in rng.sample(range(1, count * 3), count):
        meta = RowMeta(
            space=rng.choice(SPACES),
            author=rng.choice(AUTHORS),
            kind=rng.choice(KINDS),
            tags=tuple(rng.sample(TAGS, rng.randint(0, 3))),
            session=rng.choice([None, 1, 2, 3]),
        )
        rows[id_] = (unit([rng.gauss(0, 1) for _ in range(DIMS)]), meta)
    return rows


def reference(
    rows: dict[int, tuple[np.ndarray, RowMeta]],
    query: np.ndarray,
    flt: MemoryFilter,
    limit: int,
    min_similarity: float,
) -> list[int]:
    """The spec's definition, by brute force: filter, score, keep, order, cut."""
    q = query.astype(np.float64) / np.linalg.norm(query)
    scored = [
        (float(vec.astype(np.float64) @ q), id_)
        for id_, (vec, meta) in rows.items()
        if flt.matches(memory(id_, meta))
    ]
    kept = [(s, i) for s, i in scored if s >= min_similarity]
    kept.sort(key=lambda p: (-p[0], -p[1]))
    return [i for _, i in kept[:limit]]


def filled(rows: dict[int, tuple[np.ndarray, RowMeta]]) -> VectorIndex:
    index = VectorIndex(model="m", dimensions=DIMS)
    for id_, (vec, meta) in rows.items():
        index.upsert(id_, vec, meta)
    return index


FILTERS = [
    where(),
    where(Access(spaces=frozenset({"project/a"}))),
    where(Access(owner="g1")),
    where(Access(ids=frozenset({3, 5, 7, 11, 13}), owner="g2")),
    where(Access()),
    where(spaces=frozenset({"user", "project/b"})),
    where(spaces=frozenset({"nowhere"})),
    where(kinds=frozenset({"fact", "note"})),
    where(tags=frozenset({"zig"})),
    where(tags=frozenset({"zig", "build"})),
    where(tags=frozenset({"never-seen"})),
    where(sessions=frozenset({2})),
    where(sessions=frozenset({1, 3}), kinds=frozenset({"decision"})),
    where(Access(spaces=frozenset({"user"}), owner="g1"), tags=frozenset({"ci"})),
]


@pytest.mark.parametrize("flt", FILTERS)
@pytest.mark.parametrize(("limit", "min_similarity"), [(100, -1.0), (7, 0.0), (3, 0.3)])
def test_nearest_equals_brute_force(flt: MemoryFilter, limit: int, min_similarity: float) -> None:
    rng = random.Random(7)
    rows = random_rows(rng, 400)
    index = filled(rows)
    for _ in range(5):
        query = np.asarray([rng.gauss(0, 1) for _ in range(DIMS)], dtype=np.float32)
        got = index.nearest(query.tolist(), flt, limit, min_similarity)
        assert [i for i, _ in got] == reference(rows, query, flt, limit, min_similarity)
        for (_, sim), (_, following) in itertools.pairwise(got):
            assert sim >= following


def test_filter_is_applied_before_ranking() -> None:
    """A row the caller can't read never pushes a readable one out of the top `limit`."""
    index = VectorIndex(model="m", dimensions=2)
    q = [1.0, 0.0]
    for id_ in range(1, 51):  # fifty secret rows, all closer to the query
        index.upsert(
            id_, unit([1.0, 0.01 * id_]), RowMeta(space="secret", author="g9", kind="note")
        )
    index.upsert(100, unit([0.0, 1.0]), RowMeta(space="user", author="g1", kind="note"))
    readable = where(Access(spaces=frozenset({"user"})))
    ((only, similarity),) = index.nearest(q, readable, 1, -1.0)
    assert only == 100
    assert similarity == pytest.approx(0.0, abs=1e-7)
    assert [i for i, _ in index.nearest(q, where(), 3, -1.0)] == [1, 2, 3]


def test_ties_break_by_highest_id_and_scores_are_equal() -> None:
    index = VectorIndex(model="m", dimensions=DIMS)
    same = unit(range(1, DIMS + 1))
    meta = RowMeta(space="user", author="owner", kind="note")
    for id_ in (5, 90, 17, 42, 3):
        index.upsert(id_, same, meta)
    index.upsert(7, unit([1, 0, 0, 0, 0, 0, 0, 0]), meta)
    got = index.nearest(same.tolist(), where(), 3, 0.0)
    assert [i for i, _ in got] == [90, 42, 17]
    assert got[0][1] == got[1][1] == got[2][1]


def test_min_similarity_is_inclusive_and_limit_cuts() -> None:
    index = VectorIndex(model="m", dimensions=2)
    meta = RowMeta(space="user", author="owner", kind="note")
    index.upsert(1, unit([1, 0]), meta)
    index.upsert(2, unit([0, 1]), meta)  # similarity exactly 0
    index.upsert(3, unit([-1, 0]), meta)
    assert [i for i, _ in index.nearest([1, 0], where(), 10, 0.0)] == [1, 2]
    assert [i for i, _ in index.nearest([1, 0], where(), 1, -1.0)] == [1]
    assert index.nearest([1, 0], where(), 0, -1.0) == []


def test_a_query_of_the_wrong_length_is_unavailable() -> None:
    index = VectorIndex(model="m", dimensions=3)
    with pytest.raises(VenomError) as err:
        index.nearest([1.0, 0.0], where(), 10, 0.0)
    assert err.value.code == "unavailable.embeddings"
    with pytest.raises(ValueError, match="length 2"):
        index.upsert(1, [1.0, 0.0], RowMeta(space="user", author="o", kind="note"))


def test_upkeep_is_incremental() -> None:
    """Adds fill spare rows in place; updates and removes touch one row; nothing reloads."""
    rng = random.Random(3)
    rows = random_rows(rng, 50)
    index = filled(rows)
    matrix = index._arrays.matrix
    capacity = index.capacity
    assert capacity >= len(rows)
    spare = capacity - len(index)
    extra = random_rows(random.Random(99), spare)
    for id_, (vec, meta) in extra.items():
        if id_ not in rows:
            index.upsert(id_, vec, meta)
            rows[id_] = (vec, meta)
    assert index._arrays.matrix is matrix  # filled the spare rows, no reallocation
    victim = next(iter(rows))
    vec, meta = rows[victim]
    index.upsert(victim, -vec, RowMeta(space="user", author="g1", kind="fact", tags=("zig",)))
    rows[victim] = (-vec, RowMeta(space="user", author="g1", kind="fact", tags=("zig",)))
    assert index._arrays.matrix is matrix
    for id_ in list(rows)[::3]:
        assert index.remove(id_)
        del rows[id_]
    assert not index.remove(10**9)
    assert index._arrays.matrix is matrix
    assert index.ids() == frozenset(rows)
    for id_, (vec, meta) in rows.items():
        got = index.get(id_)
        assert got is not None
        assert np.array_equal(got[0], vec)
        assert got[1] == meta
    query = np.asarray([rng.gauss(0, 1) for _ in range(DIMS)], dtype=np.float32)
    for flt in FILTERS:
        got_ids = [i for i, _ in index.nearest(query.tolist(), flt, 20, -1.0)]
        assert got_ids == reference(rows, query, flt, 20, -1.0)


def test_growth_is_amortized() -> None:
    index = VectorIndex(model="m", dimensions=4)
    meta = RowMeta(space="user", author="owner", kind="note")
    reallocations = 0
    matrix = index._arrays.matrix
    for id_ in range(1, 10_001):
        index.upsert(id_, unit([1, id_, 0, 1]), meta)
        if index._arrays.matrix is not matrix:
            reallocations += 1
            matrix = index._arrays.matrix
    assert len(index) == 10_000
    assert reallocations <= 15  # growth by half: log_1.5(10000 / 64) is about 12.5


def test_update_meta_and_clear_session_change_what_matches() -> None:
    index = VectorIndex(model="m", dimensions=2)
    index.upsert(1, unit([1, 0]), RowMeta(space="user", author="o", kind="note", session=4))
    assert index.nearest([1, 0], where(tags=frozenset({"zig"})), 5, -1.0) == []
    assert index.update_meta(1, RowMeta(space="user", author="o", kind="fact", tags=("zig",)))
    assert [i for i, _ in index.nearest([1, 0], where(tags=frozenset({"zig"})), 5, -1)] == [1]
    assert not index.update_meta(2, RowMeta(space="user", author="o", kind="fact"))
    index.upsert(2, unit([0, 1]), RowMeta(space="user", author="o", kind="note", session=9))
    assert index.clear_session(9) == 1
    assert index.nearest([1, 1], where(sessions=frozenset({9})), 5, -1.0) == []


def test_load_adopts_the_matrix_without_copying() -> None:
    matrix = np.empty((10, 2), dtype=np.float32)
    matrix[:3] = [unit([1, 0]), unit([0, 1]), unit([1, 1])]
    index = VectorIndex(model="m", dimensions=2)
    index.load(
        [4, 8, 15],
        matrix,
        spaces=["user", "user", "project/a"],
        authors=["owner", "g1", "g1"],
        kinds=["note", "fact", "note"],
        tags=["zig build", "", "ci"],
        sessions=[None, 2, None],
    )
    assert index._arrays.matrix is matrix
    assert len(index) == 3
    assert index.capacity == 10
    got = index.get(4)
    assert got is not None
    assert got[1].tags == ("zig", "build")
    flt = where(Access(owner="g1"), tags=frozenset({"ci"}))
    assert [i for i, _ in index.nearest([1, 1], flt, 5, -1.0)] == [15]
    index.upsert(16, unit([1, 1]), RowMeta(space="user", author="g2", kind="note"))
    assert index._arrays.matrix is matrix
    with pytest.raises(ValueError, match="distinct"):
        index.load(
            [1, 1],
            matrix,
            spaces=["a", "a"],
            authors=["o", "o"],
            kinds=["note", "note"],
            tags=["", ""],
            sessions=[None, None],
        )


def test_searches_and_changes_from_many_threads() -> None:
    """Readers never see a torn row: every answer's IDs are rows that exist with their facets."""
    index = VectorIndex(model="m", dimensions=16)
    rng = random.Random(11)
    stop = threading.Event()
    errors: list[BaseException] = []
    visible = where(Access(spaces=frozenset({"visible"})))

    def writer() -> None:
        try:
            for step in range(3000):
                id_ = rng.randint(1, 400)
                space = "visible" if id_ % 2 else "hidden"
                if step % 3 == 0:
                    index.remove(id_)
                else:
                    vec = unit([rng.gauss(0, 1) for _ in range(16)])
                    index.upsert(id_, vec, RowMeta(space=space, author="o", kind="note"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            stop.set()

    def reader() -> None:
        local = random.Random(threading.get_ident())
        try:
            while not stop.is_set():
                query = [local.gauss(0, 1) for _ in range(16)]
                for id_, _ in index.nearest(query, visible, 50, -1.0):
                    assert id_ % 2 == 1, "a hidden row was returned"
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=reader) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
