"""``venom-mem ui`` figures at 10k memories, through HTTP as a browser asks (issue 18).

- Search through the page: ``GET /search?q=...`` (the whole page, as a link or reload asks)
  and the same request as htmx sends it (``HX-Request``, the results table only), each
  timed end to end from a loopback HTTP client: the guard, ``whoami`` and ``memory.search``
  on the daemon, and the Jinja rendering. Target: < 100 ms.
- A memory's page (get, history, two revisions for the diff), the spaces page, and the
  writes chart, which reads every memory through memory.list: no target, for scale.

Run: ``.venv/bin/python bench/bench_ui.py`` (about a minute, most of it filling the store).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_daemon import fill
from tests.support.daemon_env import make_world
from tests.support.ui_server import run_ui

QUERIES = ("which zig version cache", "daemon socket", "grant token session", "review commit")
RUNS = 40


def timed(client: httpx.Client, path: str, runs: int, headers: dict[str, str]) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        reply = client.get(path, headers=headers)
        samples.append(time.perf_counter() - started)
        assert reply.status_code == 200, (path, reply.status_code, reply.text[:300])
    return samples


def figures(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


def main() -> None:
    rows: list[tuple[str, str, str]] = []
    with make_world() as world:
        world.write_config(".{ .daemon = .{ .idle_timeout_ms = 600000 } }")
        fill(world, 10_000)
        world.ok("memory", "update", "--id", "m1", "--revision", "1", "--content", "zig 0.17",
                 token="@owner")  # fmt: skip
        with run_ui(world) as ui, ui.client() as client:
            for query in QUERIES:  # warm the daemon's readers and the templates
                client.get("/search", params={"q": query})
            search: list[float] = []
            partial: list[float] = []
            for query in QUERIES:
                path = "/search?" + httpx.QueryParams({"q": query, "limit": "10"}).__str__()
                search += timed(client, path, RUNS // len(QUERIES) * 2, {})
                partial += timed(client, path, RUNS // len(QUERIES) * 2, {"hx-request": "true"})
            hits = client.get("/search", params={"q": QUERIES[0], "limit": "100"})
            assert hits.text.count('class="hit') == 100
            full100 = timed(client, "/search?q=zig+cache+daemon&limit=100", RUNS, {})
            for name, samples, target in (
                ("search page at 10k, limit 10", search, "target < 100 ms"),
                ("search results (htmx) at 10k, limit 10", partial, "target < 100 ms"),
                ("search page at 10k, limit 100", full100, "target < 100 ms"),
            ):
                median, p95 = figures(samples)
                verdict = "ok" if p95 < 100 else "OVER"
                rows.append((f"{name} (median)", f"{median:.1f} ms", ""))
                rows.append((f"{name} (p95)", f"{p95:.1f} ms", f"{target}: {verdict}"))
            memory = figures(timed(client, "/memory/m1", RUNS, {}))
            rows.append(("memory page with diff (median)", f"{memory[0]:.1f} ms", ""))
            spaces = figures(timed(client, "/", RUNS, {}))
            rows.append(("spaces page (median)", f"{spaces[0]:.1f} ms", ""))
            chart = figures(timed(client, "/chart", 5, {}))
            rows.append(("writes chart over 10k memories (median of 5)", f"{chart[0]:.0f} ms",
                         "50 memory.list pages; loaded after the spaces page"))  # fmt: skip
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'figure':>10}  note")
    for name, figure, note in rows:
        print(f"{name:<{width}}  {figure:>10}  {note}")
    print(json.dumps({"python": sys.version.split()[0], "cores": os.cpu_count()}))


if __name__ == "__main__":
    main()
