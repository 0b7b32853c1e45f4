"""memory.add and memory.search latency through this checkout's daemon beside another's,
paired (issue 16's typed commands).

On a loaded machine two runs of bench_daemon.py minutes apart differ by more than any
dispatch change, so this runs both daemons at once and alternates the same calls between
them in shuffled order, one socket client each, so both see the same load. It prints the
p50 and p90 of each verb on each daemon.

Run: ``git archive <base> | tar -x -C /tmp/base`` then
``.venv/bin/python bench/bench_dispatch_ab.py /tmp/base/src`` (about a minute).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import make_world

from venom_mem_adapters.client import connect

ROUNDS = 1500
WARM = 500
WORDS = ("zig", "cache", "note", "warm", "build")


def main(base_src: str) -> None:
    base_env = dict(os.environ, PYTHONPATH=base_src)  # the base CLI launches the base daemon
    with make_world(base=base_env) as base, make_world() as here:
        for world in (base, here):
            world.write_config(".{ .daemon = .{ .idle_timeout_ms = 600000 } }")
            world.ok("whoami")
        names = {"this checkout": here, f"base ({base_src})": base}
        conns = {name: connect(world.environ("@owner")) for name, world in names.items()}
        for conn in conns.values():
            for n in range(WARM):
                conn.call("memory.add", {"space": "bench", "content": f"warm zig cache {n}"})
        times: dict[tuple[str, str], list[float]] = {
            (verb, name): [] for verb in ("memory.add", "memory.search") for name in conns
        }
        for i in range(ROUNDS):
            order = list(conns)
            random.shuffle(order)  # neither daemon always goes first
            for name in order:
                calls = (
                    ("memory.add", {"space": "bench", "content": f"round {i} {time.time()}"}),
                    ("memory.search", {"query": WORDS[i % len(WORDS)], "limit": 10}),
                )
                for verb, params in calls:
                    started = time.perf_counter()
                    conns[name].call(verb, params)
                    times[verb, name].append((time.perf_counter() - started) * 1000)
        for conn in conns.values():
            conn.close()
    print(f"{'verb':<15}{'daemon':<44}{'p50':>9}{'p90':>10}")
    for (verb, name), samples in times.items():
        p90 = statistics.quantiles(samples, n=10)[-1]
        print(f"{verb:<15}{name:<44}{statistics.median(samples):>6.2f} ms{p90:>7.2f} ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "src")
