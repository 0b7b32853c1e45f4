"""The CLI's ``--json`` path of this checkout beside another's, interleaved (issue 14).

On a loaded machine two runs of bench_daemon.py minutes apart differ more than any import
change does, so this runs the same ``memory search --json`` through both checkouts and the
stdlib floor client in turn, against one daemon, and prints the medians with the ratios to the
floor (ADR 0006: <= 1.5x).

Run: ``git archive <base> | tar -x -C /tmp/base`` then
``.venv/bin/python bench/bench_json_path_ab.py /tmp/base/src`` (about a minute).
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_daemon import FLOOR_CLIENT
from tests.support.daemon_env import VENOM_MEM, make_world

ROUNDS = 60


def main(base_src: str) -> None:
    with make_world() as world:
        for n in range(20):
            world.ok("memory", "add", "--space", "user", "--content", f"zig build {n}",
                     token="@owner")  # fmt: skip
        here = world.environ()
        base = dict(here, PYTHONPATH=base_src)
        search = [VENOM_MEM, "memory", "search", "--query", "zig", "--limit", "10", "--json"]
        runs = {
            "this checkout": (search, here),
            f"base ({base_src})": (search, base),
            "stdlib floor": ([sys.executable, "-c", FLOOR_CLIENT, "zig"], here),
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        order = list(runs)
        for _ in range(ROUNDS):
            random.shuffle(order)  # no checkout always goes first (a cold cache) or last
            for name in order:
                command, env = runs[name]
                started = time.perf_counter()
                subprocess.run(command, env=env, capture_output=True, check=True)
                times[name].append((time.perf_counter() - started) * 1000)
        floor = statistics.median(times["stdlib floor"])
        print(f"{'measure':<48}{'median':>10}  note")
        for name, samples in times.items():
            median = statistics.median(samples)
            note = "" if name == "stdlib floor" else f"ratio {median / floor:.2f}x, target <= 1.5x"
            print(f"{name:<48}{median:>7.1f} ms  {note}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "src")
