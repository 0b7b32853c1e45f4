"""Micro-benchmark of the SQLite store: add latency and full-text search latency.

Adds run one commit each with synchronous = FULL, as the daemon does, so they measure an
fsync per memory. Searches run on stores of 10k and 100k memories, built with one bulk
insert transaction (executemany on the writer connection) to keep the run short, once as the
owner (built-in bm25) and once as a client that reads one space of four (bm25 over its
readable rows, see docs/adr/0003), the two in turn per query so load touches both alike. The
client's median beside the owner's is printed with its target (issue 15: at most 1.2x; how
the client's bm25 is read from the index, docs/adr/0016). Then both again, each search right
after a commit, which makes a client measure its readable corpus again (it is cached per
commit). Run:
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


CALLERS = {
    "owner": MemoryFilter(access=Access(everything=True)),
    "client, 1 of 4 spaces": MemoryFilter(access=Access(spaces=frozenset({"alpha"}))),
}
AFTER_COMMIT = 20  # queries, each after a commit: the client's cached corpus is measured anew


def bench_search(path: Path) -> dict[str, list[float]]:
    """Search latency per caller, then per caller again right after a commit."""
    queries = [
        [_rng.choice(VOCABULARY[:50]), _rng.choice(VOCABULARY[200:2000])] for _ in range(QUERIES)
    ]
    results: dict[str, list[float]] = {label: [] for label in CALLERS}
    results.update({f"{label}, after a commit": [] for label in CALLERS})
    with SqliteStore.open(path) as store:

        def search(query: list[str], label: str, where: MemoryFilter) -> None:
            with store.read() as tx:
                start = time.perf_counter()
                # What memory.search asks of the store: ranked IDs, snippets, rows.
                found = tx.rank_text_scored(query, where, 100)
                tx.text_snippets(query, [id_ for id_, _ in found])
                [tx.get_memory(id_) for id_, _ in found]
                results[label].append(time.perf_counter() - start)

        for query in queries:
            for label, where in CALLERS.items():
                search(query, label, where)
        extra = iter(range(10**9, 2 * 10**9))
        for query in queries[:AFTER_COMMIT]:
            for label, where in CALLERS.items():
                with store.write() as tx:  # every reader's next search sees a new snapshot
                    tx.insert_memory(memory(next(extra)))
                for _ in range(4):  # each reader of the pool in turn has the new snapshot
                    search(query, f"{label}, after a commit", where)
    return results


def main() -> None:
    rows: list[tuple[str, str, float, float]] = []
    side_by_side: list[tuple[int, float, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="venom-mem-bench-") as tmp:
        directory = Path(tmp)
        directory.chmod(0o700)
        print(f"store files under {directory} (TMPDIR picks the disk)", file=sys.stderr)
        rows.append(("add (1 commit, FULL)", "fresh", *percentiles(bench_adds(directory))))
        for size in SIZES:
            path = directory / f"s{size}" / "store.db"
            seconds = build(path, size)
            print(f"built {size:,} memories in {seconds:.1f} s", file=sys.stderr)
            medians = {}
            for label, samples in bench_search(path).items():
                rows.append((f"search, {label}", f"{size:,}", *percentiles(samples)))
                medians[label] = percentiles(samples)[0]
            side_by_side.append(
                (
                    size,
                    medians["owner"],
                    medians["client, 1 of 4 spaces"],
                    medians["owner, after a commit"],
                    medians["client, 1 of 4 spaces, after a commit"],
                )
            )
    print(f"SQLite {apsw.sqlite_lib_version()}, {ADDS} adds, {QUERIES} queries per row")
    print(f"{'operation':<46} {'memories':>9} {'median ms':>10} {'p99 ms':>9}")
    print("-" * 77)
    for name, size_label, median, p99 in rows:
        print(f"{name:<46} {size_label:>9} {median:>10.2f} {p99:>9.2f}")
    print()
    print("search p50, owner beside a client reading 1 of 4 spaces (target: client <= 1.2x owner)")
    print(f"{'memories':>9} {'owner ms':>9} {'client ms':>10} {'ratio':>7}  target")
    for size, owner, client, owner_after, client_after in side_by_side:
        met = "met" if client <= 1.2 * owner else "NOT met"
        print(f"{size:>9,} {owner:>9.2f} {client:>10.2f} {client / owner:>6.2f}x  <= 1.2x {met}")
        print(
            f"{'':>9} {owner_after:>9.2f} {client_after:>10.2f} {client_after / owner_after:>6.2f}x"
            "  (first searches after a commit; no target)"
        )


if __name__ == "__main__":
    main()
