"""Daemon and CLI figures, side by side in one run (issue 3's speed targets).

- ``venom-mem memory search ... --json`` against a running daemon at 10k memories, beside
  the same request from a ten-line stdlib-only client (the protocol floor). Target: <= 1.5x.
- 8 concurrent socket clients: adds/s (synchronous FULL) beside the raw apsw rate of
  one-commit adds of the same rows into the same schema at the same size (target: >= 50 %),
  and searches/s. The adds are measured twice: with the default config, whose memory.add
  ranks its near-duplicates after the commit (ADR 0043), and with
  ``memory.similar_threshold = 0``, which switches that off (the RFC-0020 add alone). The
  rate of one-commit inserts into a one-column table is printed too; docs/adr/0011 says why
  the store's own rows are the baseline.
- Cold start on demand: first CLI call with no daemon running, empty store. Target: < 300 ms.

Run: ``.venv/bin/python bench/bench_daemon.py`` (under a minute).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import VENOM_MEM, World, make_world

from venom_mem_adapters.client import connect
from venom_mem_adapters.sqlite import SqliteStore, open_connection

FLOOR_CLIENT = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["VENOM_MEM_SOCKET"])
f = s.makefile("rb")
s.sendall(b'{"id":1,"verb":"hello","params":{}}\n'); f.readline()
req = {"id": 2, "verb": "memory.search", "params": {"query": sys.argv[1], "limit": 10}}
s.sendall(json.dumps(req).encode() + b"\n")
sys.stdout.write(f.readline().decode())
"""

WORDS = (
    "zig", "build", "cache", "daemon", "socket", "sqlite", "memory", "search", "vector", "token",
    "grant", "space", "session", "harness", "agent", "review", "commit", "branch", "deploy",
    "config", "doctor", "events", "schema", "migration", "index",
)  # fmt: skip


def fill(world: World, count: int) -> None:
    with connect(world.environ("@owner")) as conn:
        for n in range(count):
            a, b, c = WORDS[n % len(WORDS)], WORDS[(n * 7) % len(WORDS)], WORDS[(n * 13) % 29 % 25]
            conn.call(
                "memory.add",
                {
                    "space": f"project/p{n % 20}",
                    "content": f"note {n}: {a} {b} {c} detail {n * 31}",
                },
            )


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_command(cmd: list[str], env: dict[str, str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        samples.append(time.perf_counter() - started)
    return samples


# The daemon outlives the pauses between measures; the plain adds' config adds one section.
IDLE_CONFIG = ".{ .daemon = .{ .idle_timeout_ms = 600000 } }"
PLAIN_ADD_CONFIG = IDLE_CONFIG.removesuffix(" }") + ", .memory = .{ .similar_threshold = 0.0 } }"
ROUNDS = 3  # each rate is the median of this many windows: one window swings by 10 %


def raw_apsw_rates(seconds: float = 3.0) -> list[float]:
    d = tempfile.mkdtemp()
    conn = apsw.Connection(os.path.join(d, "raw.db"))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    count, rates = 0, []
    for _ in range(ROUNDS):
        start, deadline = count, time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            with conn:
                conn.execute("INSERT INTO t (body) VALUES (?)", (f"row {count}",))
            count += 1
        rates.append((count - start) / seconds)
    return rates


def raw_schema_rates(seconds: float = 3.0, existing: int = 10_000) -> list[float]:
    """One-commit adds into the store's own schema through raw apsw, at the same store size
    as the daemon's run: the statements memory.add runs (the dedup lookup, the memories row,
    which fires the FTS5 trigger and updates the indexes, and the version row) with the
    store's connection settings. The storage floor of an add: no daemon, wire or use case."""
    d = tempfile.mkdtemp()
    os.chmod(d, 0o700)
    path = os.path.join(d, "store.db")
    SqliteStore.open(path).close()
    conn = open_connection(path, readonly=False)
    ts = "2026-11-09T10:00:00.000Z"

    def add(n: int, space: str) -> None:
        content = f"raw note {n}: {WORDS[n % len(WORDS)]} {WORDS[(n * 7) % len(WORDS)]} {n * 31}"
        digest = hashlib.sha256(content.encode()).digest()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "SELECT id FROM memories WHERE space = ? AND content_sha256 = ? AND deleted IS NULL",
            (space, digest),
        ).fetchall()
        conn.execute(
            "INSERT INTO memories (space, kind, title, content, content_sha256, tags, principal,"
            " updated_by, created, updated) VALUES (?, 'note', '', ?, ?, '', 'owner',"
            " 'owner', ?, ?)",
            (space, content, digest, ts, ts),
        )
        conn.execute(
            "INSERT INTO memory_versions (memory, revision, action, kind, title, content, tags,"
            " principal, ts) VALUES (?, 1, 'add', 'note', '', ?, '', 'owner', ?)",
            (conn.last_insert_rowid(), content, ts),
        )
        conn.execute("COMMIT")

    for n in range(existing):
        add(n, f"project/p{n % 20}")
    count, rates = existing, []
    for _ in range(ROUNDS):
        start, deadline = count, time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            add(count, "bench")
            count += 1
        rates.append((count - start) / seconds)
    conn.close()
    return rates


def _client(environ: dict[str, str], verb: str, k: int, start: float, stop: float) -> int:
    """One client process: connect, wait for the common start, call until the stop."""
    with connect(environ) as conn:
        while time.time() < start:
            time.sleep(0.001)
        n = 0
        while time.time() < stop:
            if verb == "memory.add":
                conn.call("memory.add", {"space": "bench", "content": f"c{k} n{n} {time.time()}"})
            else:
                conn.call("memory.search", {"query": WORDS[n % len(WORDS)], "limit": 10})
            n += 1
    return n


def concurrent_rate(world: World, verb: str, seconds: float = 3.0, clients: int = 8) -> float:
    """Calls per second from ``clients`` separate processes (threads in this process would
    measure this process's GIL as much as the daemon)."""
    start = time.time() + 1.0
    args = [(world.environ("@owner"), verb, k, start, start + seconds) for k in range(clients)]
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        done = pool.starmap(_client, args)
    return sum(done) / seconds


def main() -> None:
    rows: list[tuple[str, str, str]] = []
    with make_world() as world:
        world.write_config(IDLE_CONFIG)
        cold = []
        for _ in range(5):
            world.stop_daemon()
            for f in world.store.parent.glob("store.db*"):
                f.unlink()
            started = time.perf_counter()
            subprocess.run([VENOM_MEM, "memory", "list", "--json"], env=world.env,
                           capture_output=True, check=True)  # fmt: skip
            cold.append(time.perf_counter() - started)
        rows.append(("cold start, first CLI call (median of 5)", f"{median_ms(cold):.0f} ms",
                     "target < 300 ms"))  # fmt: skip

        fill(world, 10_000)
        query = "which zig version cache"
        cli = time_command([VENOM_MEM, "memory", "search", "--query", query, "--json"],
                           world.env, 30)  # fmt: skip
        floor = time_command([sys.executable, "-c", FLOOR_CLIENT, query], world.env, 30)
        ratio = median_ms(cli) / median_ms(floor)
        rows.append(("CLI search --json at 10k (median)", f"{median_ms(cli):.1f} ms", ""))
        rows.append(("stdlib client floor (median)", f"{median_ms(floor):.1f} ms",
                     f"ratio {ratio:.2f}x, target <= 1.5x"))  # fmt: skip

        raw = statistics.median(raw_apsw_rates())
        schema = statistics.median(raw_schema_rates())
        adds = statistics.median(concurrent_rate(world, "memory.add") for _ in range(ROUNDS))
        searches = concurrent_rate(world, "memory.search")
        # The same adds without near-duplicate ranking: a new daemon reads the new config.
        world.write_config(PLAIN_ADD_CONFIG)
        world.stop_daemon()
        plain = statistics.median(concurrent_rate(world, "memory.add") for _ in range(ROUNDS))
        rows.append(("raw apsw one-commit adds, the store's schema at 10k", f"{schema:.0f}/s",
                     "the storage floor of memory.add"))  # fmt: skip
        rows.append(("8 clients memory.add at 10k (FULL sync)", f"{adds:.0f}/s",
                     f"{adds / schema * 100:.0f}% of the raw adds (target >= 50%)"))  # fmt: skip
        rows.append(("  the same, memory.similar_threshold = 0 (no similar)", f"{plain:.0f}/s",
                     f"{plain / schema * 100:.0f}% of the raw adds (target >= 50%)"))  # fmt: skip
        rows.append(("raw apsw one-commit inserts, 1-column table", f"{raw:.0f}/s",
                     f"the floor above is {schema / raw * 100:.0f}% of this, "
                     f"memory.add {adds / raw * 100:.0f}% (docs/adr/0011)"))  # fmt: skip
        rows.append(("8 clients memory.search at 10k", f"{searches:.0f}/s", ""))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'figure':>12}  note")
    for name, figure, note in rows:
        print(f"{name:<{width}}  {figure:>12}  {note}")
    print(json.dumps({"python": sys.version.split()[0], "cores": os.cpu_count()}))


if __name__ == "__main__":
    main()
