"""The PostgreSQL team store beside the SQLite store, on the same data, through the daemon
(issue 19, docs/adr/0028).

For each size: one daemon on a SQLite file and one on a database of a throwaway PostgreSQL
server (tests/support/postgres_server.py: a unix socket on this machine, fsync off, so the
figures are the store's work rather than a disk's or a network's). The same memories are
added to both through a held socket connection (add p50 over the last 1,000 adds), then the
same queries are searched (fts, owner and a client that reads 2 of 20 spaces: search p50).

Hybrid search (``--hybrid``, on by default): after the fts figures at a size, each daemon is
restarted with embeddings on, served by a loopback OpenAI-compatible stub
(tests/support/embed_stub.py, as the hybrid daemon tests use it: a fixed vector per text, no
model), waits until every memory has its vector, and the same queries are searched again
(hybrid, owner and the 2-of-20 client); then it is restarted with embeddings off, so the next
size's adds are the fts store's alone. Both stores serve vectors through the daemon's numpy
index (docs/adr/0028). There are no floors yet; the figures are printed beside SQLite's.

Then the load across machines (issue 24, docs/adr/0031): on a second server with ``fsync``
on (durable commits, as a team's server runs), 1, 2 and 4 daemons (``--daemons``) on one
database, each with 4 writers adding short memories and 2 searchers, ``--load-seconds``
long (bench/daemon_load.py), beside one daemon on a SQLite file under the same load; the
targets are printed beside the figures: one daemon at least half SQLite's adds/s, 4 daemons
at least twice one, add p99 under 100 ms at 4 daemons. Beside each row, the CPU milliseconds
(user + system, from /proc) per operation (adds and searches) that the daemons, the server's
processes and the load's own clients used in the window: unlike adds/s, that doesn't move
with the machine's other load, and it bounds what the machine can do (ops/s ceiling = cores
* 1000 / the CPU ms of one operation, all three together, as they share the cores here).

Run: ``.venv/bin/python bench/bench_postgres.py [--sizes 10000,100000] [--no-hybrid]
[--daemons 1,2,4] [--load-seconds 15]``; ``--sizes ''`` or ``--daemons ''`` skips a part
(10k: a few minutes, the load about two more; 10k and 100k: about half an hour on 2 cores).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu_time import process_tree_cpu_s, processes_cpu_s
from daemon_load import LoadFigures, run_load
from tests.support.daemon_env import World, make_world
from tests.support.embed_stub import EmbedStub, embed_stub
from tests.support.postgres_server import PostgresServer, running_server

from venom_mem_adapters.client import connect

WORDS = (
    "zig", "build", "cache", "daemon", "socket", "sqlite", "memory", "search", "vector", "token",
    "grant", "space", "session", "harness", "agent", "review", "commit", "branch", "deploy",
    "config", "doctor", "events", "schema", "migration", "index",
)  # fmt: skip
QUERIES = ["daemon socket", "deploy", "schema migration index", "token grant", "zig build cache"]
SEARCHES = 200
DIMENSIONS = 768
EMBED_WAIT_S = 3600
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


def search_p50(world: World, token: str, mode: str = "fts") -> float:
    samples = []
    with connect(world.environ(token)) as conn:
        for i in range(SEARCHES):
            query = {"query": QUERIES[i % len(QUERIES)], "limit": 10, "mode": mode}
            began = time.perf_counter()
            result = conn.call("memory.search", query)
            samples.append(time.perf_counter() - began)
            assert result["mode"] == ("fts" if mode == "fts" else "hybrid"), result
    return statistics.median(samples) * 1000


def store_config(world: World, store: str, stub: EmbedStub | None) -> None:
    """config.zon with the world's store (``store``: its store section, or empty) and, with a
    stub, embeddings from it; the daemon is restarted to read it."""
    world.stop_daemon()
    sections = [store] if store else []
    if stub is not None:
        sections.append(
            f'.embeddings = .{{ .provider = "http", .base_url = "{stub.base_url}",'
            f' .model = "stub", .dimensions = {DIMENSIONS}, .query_timeout_ms = 10000,'
            " .batch_timeout_ms = 120000 }"
        )
    world.write_config(".{ " + ", ".join(sections) + " }")


def wait_embedded(world: World) -> float:
    """Seconds until store.status shows no memory waiting for its vector."""
    began = time.perf_counter()
    with connect(world.environ("@owner")) as conn:
        while time.perf_counter() - began < EMBED_WAIT_S:
            status = conn.call("store.status", {})
            if status["embeddings"] != "off" and status["pending"] == 0:
                return time.perf_counter() - began
            time.sleep(1.0)
    raise SystemExit("the daemon did not embed every memory in time")


def hybrid_figures(world: World, store: str, stub: EmbedStub, reader: str) -> dict[str, float]:
    """Restart with embeddings on; the hybrid p50s and how long the backlog took."""
    store_config(world, store, stub)
    embed_s = wait_embedded(world)
    figures = {
        "hybrid_owner": search_p50(world, "@owner", "auto"),
        "hybrid_reader": search_p50(world, reader, "auto"),
        "embed_s": embed_s,
    }
    store_config(world, store, None)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--hybrid", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--daemons", default="1,2,4")
    parser.add_argument("--load-seconds", type=float, default=15.0)
    parser.add_argument(
        "--similar-threshold",
        type=float,
        default=None,
        help="memory.similar_threshold for every store of both tables (0: no similar on add);"
        " default: the config's default",
    )
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    daemons = [int(n) for n in args.daemons.split(",") if n]
    if sizes:
        try:
            with running_server() as server:
                run(server, sizes, hybrid=args.hybrid, similar=args.similar_threshold)
        except RuntimeError as exc:
            print(f"bench_postgres: skipped: {exc}")
            return 0
    if daemons:
        try:
            with running_server(settings=DURABLE) as server:
                load_table(server, daemons, args.load_seconds, args.similar_threshold)
        except RuntimeError as exc:
            print(f"bench_postgres: load skipped: {exc}")
    return 0


def run(server: PostgresServer, sizes: list[int], *, hybrid: bool, similar: float | None) -> None:
    with (
        make_world() as lite,
        make_world() as pg,
        embed_stub(DIMENSIONS) as stub,
    ):
        pg.env.update(server.environ)
        options = server.fresh_url("bench").split("&options=", 1)[1]
        memory = memory_section(similar)
        postgres = f'.store = .{{ .url = "postgresql:///postgres?options={options}" }}'
        stores = {
            "sqlite": memory,
            "postgres": ", ".join(s for s in (postgres, memory) if s),
        }
        print(f"stores at memory.similar_threshold {threshold_text(similar)}", flush=True)
        worlds = {"sqlite": lite, "postgres": pg}
        for name, world in worlds.items():
            world.write_config(f".{{ {stores[name]} }}")
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
                if hybrid:
                    figures[name].update(hybrid_figures(world, stores[name], stub, readers[name]))
            filled = size
            for what, label in (
                ("add", "add p50"),
                ("owner", "search p50 (fts, owner)"),
                ("reader", "search p50 (fts, 2 of 20 spaces)"),
            ):
                lite_ms, pg_ms = figures["sqlite"][what], figures["postgres"][what]
                print(
                    f"{size:>7,} memories  {label:<36} sqlite {lite_ms:7.2f} ms"
                    f"   postgres {pg_ms:7.2f} ms   ({pg_ms / lite_ms:4.1f}x)",
                    flush=True,
                )
            if hybrid:
                print_hybrid(size, figures)


def memory_section(similar: float | None) -> str:
    """The config's ``memory`` section for ``similar`` (ADR 0043), or none for its default."""
    return "" if similar is None else f".memory = .{{ .similar_threshold = {similar!r} }}"


def threshold_text(similar: float | None) -> str:
    return "default" if similar is None else f"{similar:g}"


def print_hybrid(size: int, figures: dict[str, dict[str, float]]) -> None:
    for what, label in (
        ("hybrid_owner", "search p50 (hybrid, owner)"),
        ("hybrid_reader", "search p50 (hybrid, 2 of 20 spaces)"),
    ):
        row = f"{size:>7,} memories  {label:<36}"
        for name in ("sqlite", "postgres"):
            row += f" {name} {figures[name][what]:7.2f} ms  "
        print(row, flush=True)
    for name in ("sqlite", "postgres"):
        took = figures[name]["embed_s"]
        print(f"{size:>7,} memories  {name} daemon embedded the backlog in {took:.0f} s")


# A team's server commits durably: the test server's fsync-off settings put back to the defaults.
DURABLE = ("fsync=on", "synchronous_commit=on", "full_page_writes=on")
LOAD_SEED = 1000  # memories in each store before the load, so searches have postings to rank
WRITERS, SEARCHERS = 4, 2
# Issue 24's targets: PostgreSQL's one daemon against SQLite's, 4 daemons against one.
ONE_VS_SQLITE, FOUR_VS_ONE, FOUR_P99_MS = 0.5, 2.0, 100.0
CORES = os.cpu_count() or 1


def load_table(
    server: PostgresServer, daemons: list[int], seconds: float, similar: float | None
) -> None:
    """The N-daemon table: SQLite's one daemon, then each count of daemons on a new schema
    of one fsync-on server, every daemon with its own writers and searchers. ``similar``:
    every store's memory.similar_threshold (ADR 0043: near-duplicates cost each add a
    ranking), None for the default."""
    rows: dict[str, LoadFigures] = {}
    memory = memory_section(similar)
    with make_world() as lite:
        lite.write_config(f".{{ {memory} }}")
        fill(lite, 0, LOAD_SEED)
        pid = lite.daemon_pid()
        assert pid is not None
        rows["sqlite, 1 daemon"] = run_load(
            [lite.environ("@owner")],
            writers=WRITERS,
            searchers=SEARCHERS,
            seconds=seconds,
            meters={"daemons": lambda: processes_cpu_s([pid]), "server": lambda: 0.0},
        )
        lite.stop_daemon()
    print_load_header(seconds, similar)
    print_load_row("sqlite, 1 daemon", rows["sqlite, 1 daemon"])
    for count in daemons:
        url = server.fresh_url("load")
        options = url.split("&options=", 1)[1]
        section = f'.store = .{{ .url = "postgresql:///postgres?options={options}" }}'
        store = ".{ " + ", ".join(filter(None, (section, memory))) + " }"
        with contextlib.ExitStack() as stack:
            worlds = [stack.enter_context(make_world()) for _ in range(count)]
            for world in worlds:
                world.env.update(server.environ)
                world.write_config(store)
            fill(worlds[0], 0, LOAD_SEED)
            analyze(url)
            for world in worlds[1:]:
                world.ok("store", "status")  # every daemon up before the window opens
            label = f"postgres, {count} daemon{'s' if count > 1 else ''}"
            pids = [pid for w in worlds if (pid := w.daemon_pid()) is not None]
            postmaster = server.postmaster_pid()
            rows[label] = run_load(
                [w.environ("@owner") for w in worlds],
                writers=WRITERS,
                searchers=SEARCHERS,
                seconds=seconds,
                meters={
                    "daemons": functools.partial(processes_cpu_s, pids),
                    "server": functools.partial(process_tree_cpu_s, postmaster),
                },
            )
            for world in worlds:
                world.stop_daemon()
        print_load_row(label, rows[label])
    print_targets(rows)


def analyze(url: str) -> None:
    """The statistics a team's server has for a store in use (autovacuum analyzes a table
    once a tenth of it changed, within a minute): a schema seeded seconds ago has none, and
    without them the planner read the content dedup through ``memories_space``, every live
    row of the space, instead of ``memories_live_content``'s one entry."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("ANALYZE")


def print_load_header(seconds: float, similar: float | None) -> None:
    threshold = threshold_text(similar)
    print(
        f"\nload: {WRITERS} writers + {SEARCHERS} searchers per daemon, {seconds:.0f} s,"
        f" PostgreSQL with fsync on, memory.similar_threshold {threshold};"
        f" load average {os.getloadavg()[0]:.1f} at the start",
        flush=True,
    )
    print(
        f"{'store, daemons':<22} {'adds/s':>8} {'add p50':>9} {'add p99':>9}"
        f" {'search p50':>11} {'search p99':>11} {'errors':>7}"
        f" {'ops/s':>6}   CPU ms/op: {'daemon':>6} {'server':>6} {'client':>6}"
        "   ceiling (ops/s, adds/s)"
    )


def ceiling_ops(f: LoadFigures) -> float:
    """The operations per second the machine's cores could serve at this row's CPU cost."""
    return CORES * 1000 / sum(f.cpu_ms_per_op(m) for m in ("daemons", "server", "clients"))


def print_load_row(label: str, f: LoadFigures) -> None:
    daemon, server, clients = (f.cpu_ms_per_op(m) for m in ("daemons", "server", "clients"))
    ceiling = ceiling_ops(f)
    print(
        f"{label:<22} {f.adds_per_s:8.0f} {f.add_p50_ms:6.1f} ms {f.add_p99_ms:6.1f} ms"
        f" {f.search_p50_ms:8.1f} ms {f.search_p99_ms:8.1f} ms {f.errors:7d}"
        f" {f.adds_per_s * f.ops / max(f.adds, 1):6.0f}"
        f"              {daemon:6.2f} {server:6.2f} {clients:6.2f}"
        f"   {ceiling:5.0f}, {ceiling * f.adds / f.ops:5.0f}",
        flush=True,
    )


def print_targets(rows: dict[str, LoadFigures]) -> None:
    lite, one, four = (
        rows.get("sqlite, 1 daemon"),
        rows.get("postgres, 1 daemon"),
        rows.get("postgres, 4 daemons"),
    )
    checks: list[tuple[str, str, bool]] = []
    if lite is not None and one is not None:
        ratio = one.adds_per_s / lite.adds_per_s
        checks.append((f"1 daemon / sqlite adds/s >= {ONE_VS_SQLITE}", f"{ratio:.2f}",
                       ratio >= ONE_VS_SQLITE))  # fmt: skip
    if one is not None and four is not None:
        ratio = four.adds_per_s / one.adds_per_s
        checks.append((f"4 daemons / 1 daemon adds/s >= {FOUR_VS_ONE}", f"{ratio:.2f}",
                       ratio >= FOUR_VS_ONE))  # fmt: skip
    if four is not None:
        checks.append((f"4 daemons add p99 < {FOUR_P99_MS:.0f} ms", f"{four.add_p99_ms:.1f} ms",
                       four.add_p99_ms < FOUR_P99_MS))  # fmt: skip
    for target, figure, met in checks:
        print(f"target  {target:<36} {figure:>9}  {'met' if met else 'NOT MET'}", flush=True)
    if four is not None:
        # A closed loop: every caller sends its next call when the last is answered, so by
        # Little's law the mean latency is the callers over the rate, at best the ceiling's.
        callers = 4 * (WRITERS + SEARCHERS)
        print(
            f"4 daemons: {callers} callers in a closed loop, so mean latency >= {callers}"
            f" / {ceiling_ops(four):.0f} ops/s = {callers / ceiling_ops(four) * 1000:.0f} ms"
            " even with the cores all the load's",
            flush=True,
        )
    print(
        f"ceiling = {CORES} cores * 1000 / (daemon + server + client CPU ms per operation): the"
        " ops/s this machine could serve if the load were all it ran (ops/s: what it served,"
        " adds and searches); adds/s at the row's mix."
        " 4 daemons at twice one needs the 4-daemon row's adds ceiling above twice the 1-daemon"
        " row's adds/s.",
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
