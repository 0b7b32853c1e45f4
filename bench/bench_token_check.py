"""Token removal across daemons: the per-request read against LISTEN/NOTIFY (issue 19, ADR 0028).

A daemon on a PostgreSQL store reads ``meta.clients_version`` before every request of a
connection held by a client token (daemon/connection.py, ``sync_clients``), so a token removed
through another daemon is refused at its next request. What that read costs, and how fast a
NOTIFY would have told the daemon instead:

* through the daemon, on a throwaway PostgreSQL server (tests/support/postgres_server.py) and
  beside a SQLite store: ``ping`` and ``memory.get`` p50 over a held connection, as ``@owner``
  (no read: only a token can have been revoked) and as a client token (one read per request);
  the difference on PostgreSQL, less the same difference on SQLite (which has no counter), is
  what the read costs a request;
* the read alone, in-process: ``PostgresStore.clients_version()`` p50;
* delivery of postgres/notify.py's ``EventBridge``: two bridges on one store, as two daemons
  have, each with its own EventLog; an event emitted into one log is published with
  ``pg_notify`` and relayed into the other; p50/p95 from ``emit`` to the other log's
  subscriber, which is when a daemon listening for removals would first know.

Run: ``.venv/bin/python bench/bench_token_check.py`` (under a minute). No floors: the figures
choose (ADR 0028). Without a PostgreSQL server it says why and exits 0.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import World, make_world

REQUESTS = 1000
NOTIFIES = 300
GRANTS = '[{"right":"read","scope":"space:project/p1"}]'


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def request_p50s(world: World, token: str, memory: str) -> dict[str, float]:
    from venom_mem_adapters.client import connect

    figures = {}
    with connect(world.environ(token)) as conn:
        for verb, params in (("ping", {}), ("memory.get", {"id": memory})):
            for _ in range(50):  # warm: pool connections, registry, caches
                conn.call(verb, params)
            samples = []
            for _ in range(REQUESTS):
                began = time.perf_counter()
                conn.call(verb, params)
                samples.append(time.perf_counter() - began)
            figures[verb] = statistics.median(samples) * 1000
    return figures


def read_alone_p50(url: str) -> float:
    from venom_mem_adapters.postgres import PostgresStore

    with PostgresStore.open(url) as store:
        for _ in range(50):
            store.clients_version()
        samples = []
        for _ in range(REQUESTS):
            began = time.perf_counter()
            store.clients_version()
            samples.append(time.perf_counter() - began)
    return statistics.median(samples) * 1000


def notify_latencies(url: str) -> list[float]:
    """emit into one daemon's log -> relayed into the other's, NOTIFIES times, in seconds."""
    from venom_mem_adapters.daemon.event_log import EventLog
    from venom_mem_adapters.postgres.notify import EventBridge
    from venom_mem_core.clock import SystemClock

    sender, receiver = EventLog(SystemClock()), EventLog(SystemClock())
    bridges = [EventBridge(url, sender), EventBridge(url, receiver)]
    arrived = threading.Event()
    latencies: list[float] = []
    seen = [0]

    def on_relayed() -> None:
        for event in receiver.after(seen[0]):
            seen[0] = event["seq"]
            latencies.append(time.perf_counter() - float(event["data"]["sent"]))
            arrived.set()

    for bridge in bridges:
        bridge.start()
    receiver.subscribe(on_relayed)
    try:
        for n in range(NOTIFIES):
            arrived.clear()
            sender.emit("client.removed", f"client:g{n}", {"sent": time.perf_counter()})
            if not arrived.wait(5):
                raise SystemExit(f"notification {n} did not arrive within 5 s")
            time.sleep(0.002)  # one at a time, as removals come
    finally:
        for bridge in bridges:
            bridge.close()
    return latencies[20:]  # the first ones warm the listener's connection


def main() -> int:
    try:
        import psycopg  # noqa: F401  (only to say why the bench can't run)
    except ImportError:
        print("bench_token_check: skipped: psycopg is not installed (pip install -e '.[dev]')")
        return 0
    from tests.support.postgres_server import running_server

    from venom_mem_adapters.client import connect

    try:
        server_context = running_server()
        server = server_context.__enter__()
    except RuntimeError as exc:
        print(f"bench_token_check: skipped: {exc}")
        return 0
    try:
        url = server.fresh_url("tokens")
        figures: dict[str, dict[str, float]] = {}
        with make_world() as lite, make_world() as pg:
            pg.env.update(server.environ)
            options = url.split("&options=", 1)[1]
            pg.write_config(
                f'.{{ .store = .{{ .url = "postgresql:///postgres?options={options}" }} }}'
            )
            for name, world in (("sqlite", lite), ("postgres", pg)):
                token = world.add_client("reader", GRANTS)
                with connect(world.environ("@owner")) as conn:
                    added = conn.call("memory.add", {"space": "project/p1", "content": "a note"})
                memory = str(added["id"])
                figures[f"{name} @owner"] = request_p50s(world, "@owner", memory)
                figures[f"{name} client"] = request_p50s(world, token, memory)
        alone = read_alone_p50(url)
        latencies = notify_latencies(url)
    finally:
        server_context.__exit__(None, None, None)

    print(f"{REQUESTS} requests each over one held connection; p50 in ms")
    print(f"{'':<22} {'ping':>8} {'memory.get':>11}")
    for label, row in figures.items():
        print(f"{label:<22} {row['ping']:8.3f} {row['memory.get']:11.3f}")
    for verb in ("ping", "memory.get"):
        pg_delta = figures["postgres client"][verb] - figures["postgres @owner"][verb]
        lite_delta = figures["sqlite client"][verb] - figures["sqlite @owner"][verb]
        print(
            f"{verb}: the per-request read costs {pg_delta - lite_delta:+.3f} ms"
            f" (client - owner: postgres {pg_delta:+.3f}, sqlite {lite_delta:+.3f})"
        )
    print(f"clients_version() alone, in-process: p50 {alone:.3f} ms")
    p50, p95 = percentiles(latencies)
    print(
        f"EventBridge delivery, emit -> other daemon's log ({len(latencies)} events):"
        f" p50 {p50:.3f} ms   p95 {p95:.3f} ms   max {max(latencies) * 1000:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
