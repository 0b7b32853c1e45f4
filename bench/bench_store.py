"""Micro-benchmark of the SQLite store: add latency and full-text search latency.

Adds run one commit each with synchronous = FULL, as the daemon does, so they measure an
fsync per memory. Searches run on stores of 10k and 100k memories, built with one bulk
insert transaction (executemany on the writer connection) to keep the run short, once as the
owner (built-in bm25) and once as a client that reads one space of four (bm25 over its
readable rows, see docs/adr/0003), the two in turn per query so load touches both alike. The
client's median beside the owner's is printed with its target (issue 15: at most 1.2x; the
readable set is a rowid set inside the FTS5 scan, docs/adr/0016). Run:
``.venv/bin/python bench/bench_store.py``.
"""

from __future__ import annotations

import hashlib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw

from venom_mem_adapters.sqlite import SqliteStore, open_connection
from venom_mem_adapters.sqlite.connection import transaction
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.records import Memory, Provenance

ADDS = 300
QUERIES = 60
SIZES = (10_000, 100_000)
SPACES = ("alpha", "beta", "gamma", "delta")
TS = "2026-11-09T10:00:00.000Z"
OWNER = Provenance(principal="owner", label="owner")

_rng = random.Random(20261109)
_SYLLABLES = ("ka", "zu", "mi", "to", "re", "an", "vo", "li", "se", "pur", "gen", "dex")
VOCABULARY = sorted(
    {"".join(_rng.choice(_SYLLABLES) for _ in range(_rng.randint(2, 4))) for _ in range(8000)}
)
# Zipf-like weights: a few words are everywhere, most are rare, as in real notes.
_WEIGHTS = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]


def words(count: int) -> str:
    return " ".join(_rng.choices(VOCABULARY, weights=_WEIGHTS, k=count))


def memory(n: int) -> Memory:
    content = f"{words(_rng.randint(20, 80))} n{n}"
    return Memory(
        id=0,
        space=SPACES[n % len(SPACES)],
        kind="note",
        title=words(_rng.randint(0, 6)),
        content=content,
        content_sha256=hashlib.sha256(content.encode()).digest(),
        tags=tuple(sorted(set(_rng.choices(("zig", "build", "infra", "doc", "ops"), k=2)))),
        author=OWNER,
        updated_by=OWNER,
        created=TS,
        updated=TS,
    )


def percentiles(samples: list[float]) -> tuple[float, float]:
    """Median and p99, in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p99 * 1000


def timed(action: Callable[[], object], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def bench_adds(directory: Path) -> list[float]:
    counter = iter(range(10**9))
    with SqliteStore.open(directory / "adds" / "store.db") as store:

        def add() -> None:
            with store.write() as tx:
                tx.insert_memory(memory(next(counter)))

        return timed(add, ADDS)


def bulk_rows(count: int) -> Iterator[tuple[object, ...]]:
    """The varying columns; provenance and timestamps are constants in the INSERT."""
    for n in range(count):
        m = memory(n)
        yield (m.space, m.kind, m.title, m.content, m.content_sha256, " ".join(m.tags))


def build(path: Path, count: int) -> float:
    SqliteStore.open(path).close()  # creates schema 1
    start = time.perf_counter()
    connection = open_connection(path, readonly=False)
    try:
        with transaction(connection, str(path), immediate=True):
            connection.executemany(
                "INSERT INTO memories (space, kind, title, content, content_sha256, tags,"
                " principal, label, updated_by, updated_label, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, 'owner', 'owner', 'owner', 'owner', ?, ?)",
                ((*row, TS, TS) for row in bulk_rows(count)),
            )
    finally:
        connection.close()
    return time.perf_counter() - start


def bench_search(path: Path) -> dict[str, list[float]]:
    queries = [
        [_rng.choice(VOCABULARY[:50]), _rng.choice(VOCABULARY[200:2000])] for _ in range(QUERIES)
    ]
    callers = {
        "owner": MemoryFilter(access=Access(everything=True)),
        "client, 1 of 4 spaces": MemoryFilter(access=Access(spaces=frozenset({"alpha"}))),
    }
    results: dict[str, list[float]] = {label: [] for label in callers}
    with SqliteStore.open(path) as store:
        for query in queries:
            for label, where in callers.items():
                with store.read() as tx:
                    start = time.perf_counter()
                    # What memory.search asks of the store: ranked IDs, snippets, rows.
                    found = tx.rank_text_scored(query, where, 100)
                    tx.text_snippets(query, [id_ for id_, _ in found])
                    [tx.get_memory(id_) for id_, _ in found]
                    results[label].append(time.perf_counter() - start)
    return results


def main() -> None:
    rows: list[tuple[str, str, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="venom-mem-bench-") as tmp:
        directory = Path(tmp)
        directory.chmod(0o700)
        print(f"store files under {directory} (TMPDIR picks the disk)", file=sys.stderr)
        rows.append(("add (1 commit, FULL)", "fresh", *percentiles(bench_adds(directory))))
        ratios: list[tuple[int, float]] = []
        for size in SIZES:
            path = directory / f"s{size}" / "store.db"
            seconds = build(path, size)
            print(f"built {size:,} memories in {seconds:.1f} s", file=sys.stderr)
            medians = []
            for label, samples in bench_search(path).items():
                rows.append((f"search, {label}", f"{size:,}", *percentiles(samples)))
                medians.append(percentiles(samples)[0])
            ratios.append((size, medians[1] / medians[0]))
    print(f"SQLite {apsw.sqlite_lib_version()}, {ADDS} adds, {QUERIES} queries per row")
    print(f"{'operation':<34} {'memories':>9} {'median ms':>10} {'p99 ms':>9}")
    print("-" * 65)
    for name, size_label, median, p99 in rows:
        print(f"{name:<34} {size_label:>9} {median:>10.2f} {p99:>9.2f}")
    print()
    for size, ratio in ratios:
        print(f"client median / owner median at {size:>7,}: {ratio:.2f}x   target <= 1.2x")


if __name__ == "__main__":
    main()
