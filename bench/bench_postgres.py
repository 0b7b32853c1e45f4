"""The PostgreSQL team store beside the SQLite store, on the same data, through the daemon
(issue 19, docs/adr/0028).

For each size: one daemon on a SQLite file and one on a database of a throwaway PostgreSQL
server (tests/support/postgres_server.py: a unix socket on this machine, fsync off, so the
figures are the store's work rather than a disk's or a network's). The same memories are
added to both through a held socket connection (add p50 over the last 1,000 adds), then the
same queries are searched (fts, owner and a client that reads 2 of 20 spaces: search p50).
Hybrid search is not measured by this script (the PostgreSQL store serves embeddings through
the daemon's numpy index, as SQLite does: docs/adr/0028). There are no floors yet; the figures
are printed beside SQLite's.

Run: ``.venv/bin/python bench/bench_postgres.py [--sizes 10000,100000]`` (10k: a few minutes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import World, make_world
from tests.support.postgres_server import running_server

from venom_mem_adapters.client import connect

WORDS = (
    "zig", "build", "cache", "daemon", "socket", "sqlite", "memory", "search", "vector", "token",
    "grant", "space", "session", "harness", "agent", "review", "commit", "branch", "deploy",
    "config", "doctor", "events", "schema", "migration", "index",
)  # fmt: skip
QUERIES = ["daemon socket", "deploy", "schema migration index", "token grant", "zig build cache"]
SEARCHES = 200
READER_GRANTS = (
    '[{"right":"read","scope":"space:project/p1"},{"right":"read","scope":"space:project/p2"}]'
)


def content(n: int) -> str:
    a, b, c = WORDS[n % len(WORDS)], WORDS[(n * 7) % len(WORDS)], WORDS[(n * 13) % 29 % 25]
    return f"note {n}: {a} {b} {c} detail {n * 31}"


def fill(world: World, start: int, count: int) -> list[float]:
    samples = []
    with connect(world.environ("@owner")) as conn:
        for n in range(start, start + count):
            began = time.perf_counter()
            conn.call("memory.add", {"space": f"project/p{n % 20}", "content": content(n)})
            samples.append(time.perf_counter() - began)
    return samples


def search_p50(world: World, token: str) -> float:
    samples = []
    with connect(world.environ(token)) as conn:
        for i in range(SEARCHES):
            began = time.perf_counter()
            conn.call("memory.search", {"query": QUERIES[i % len(QUERIES)], "limit": 10})
            samples.append(time.perf_counter() - began)
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    with running_server() as server, make_world() as lite, make_world() as pg:
        pg.env.update(server.environ)
        options = server.fresh_url("bench").split("&options=", 1)[1]
        pg.write_config(f'.{{ .store = .{{ .url = "postgresql:///postgres?options={options}" }} }}')
        worlds = {"sqlite": lite, "postgres": pg}
        readers = {name: w.add_client("reader", READER_GRANTS) for name, w in worlds.items()}
        filled = 0
        for size in sizes:
            figures: dict[str, dict[str, float]] = {}
            for name, world in worlds.items():
                samples = fill(world, filled, size - filled)
                figures[name] = {
                    "add": statistics.median(samples[-1000:]) * 1000,
                    "owner": search_p50(world, "@owner"),
                    "reader": search_p50(world, readers[name]),
                }
            filled = size
            for what, label in (
                ("add", "add p50"),
                ("owner", "search p50 (fts, owner)"),
                ("reader", "search p50 (fts, 2 of 20 spaces)"),
            ):
                lite_ms, pg_ms = figures["sqlite"][what], figures["postgres"][what]
                print(
                    f"{size:>7,} memories  {label:<34} sqlite {lite_ms:7.2f} ms"
                    f"   postgres {pg_ms:7.2f} ms   ({pg_ms / lite_ms:4.1f}x)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
