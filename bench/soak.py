"""Soak: the reliability harnesses of tests/reliability, for longer than ``make test`` runs
them, with the figures printed at the end (and as JSON with ``--json``).

- power: rounds of a stream of memory verbs on the real store over the power-cutting VFS,
  each ending in a cut; every acknowledged memory must survive (tests/reliability/
  power_harness.py);
- faults: cases of one failed write or fsync under an in-process daemon, then a restart
  (tests/reliability/fault_harness.py);
- load: 8 CLI processes, 4 socket clients and 2 MCP adapters for a while; no lost update, no
  busy error, bounded daemon memory (tests/reliability/load_harness.py).

Run: ``.venv/bin/python bench/soak.py`` (about eight minutes with the defaults), or e.g.
``bench/soak.py --only power --power-rounds 5000 --seed 7``. Exits 1 if a promise failed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reliability.fault_harness import Kind, run_fault_case
from tests.reliability.load_harness import run_load
from tests.reliability.power_harness import PowerLossRun
from tests.support.daemon_env import make_world
from tests.support.faulty_vfs import FaultyVFS


def soak_power(rounds: int, seed: int) -> tuple[dict[str, Any], list[str]]:
    root = Path(tempfile.mkdtemp(prefix="soak-power-"))
    vfs = FaultyVFS("soak-power", seed=seed)
    try:
        harness = PowerLossRun(
            root / "store" / "store.db", vfs, random.Random(seed), full_check_every=50
        )
        started = time.monotonic()
        for n in range(rounds):
            harness.round()
            if n % 100 == 99:
                print(f"  power: {n + 1} rounds, {len(harness.losses)} losses", flush=True)
        harness.final_check()
        figures: dict[str, Any] = dict(harness.figures)
        figures.update({f"vfs_{k}": v for k, v in vfs.stats.items()})
        figures["seconds"] = round(time.monotonic() - started, 1)
        return figures, list(harness.losses)
    finally:
        vfs.unregister()
        shutil.rmtree(root, ignore_errors=True)


def soak_faults(cases: int, seed: int) -> tuple[dict[str, Any], list[str]]:
    rng = random.Random(seed)
    totals: dict[str, Any] = {"cases": 0}
    failures: list[str] = []
    started = time.monotonic()
    kinds: tuple[tuple[Kind, int], ...] = (("write", 300), ("sync", 10))
    for kind, top in kinds:
        for i in range(cases):
            nth, restart = rng.randint(1, top), ("clean", "power-cut")[i % 2]
            root = Path(tempfile.mkdtemp(prefix="soak-fault-", dir="/tmp"))
            vfs = FaultyVFS(f"soak-fault-{kind}-{i}", seed=seed + i)
            try:
                for key, value in run_fault_case(root, vfs, kind, nth, restart).items():
                    totals[key] = totals.get(key, 0) + value
            except AssertionError as error:
                failures.append(f"{kind} #{nth} ({restart}): {error}")
            finally:
                vfs.unregister()
                shutil.rmtree(root, ignore_errors=True)
            totals["cases"] += 1
    totals["seconds"] = round(time.monotonic() - started, 1)
    return totals, failures


def soak_load(seconds: float, seed: int) -> tuple[dict[str, Any], list[str]]:
    with make_world() as world:
        run = run_load(world, seconds=seconds, seed=seed)
    figures = {
        "seconds": round(run.seconds, 1),
        "clients": len(run.actors),
        "requests": run.requests(),
        "cli_requests": run.requests("cli"),
        "socket_requests": run.requests("socket"),
        "mcp_requests": run.requests("mcp"),
        "acknowledged_changes": run.acknowledged,
        "revision_conflicts": run.conflicts,
        "history_entries_checked": run.history_checked,
        "daemon_rss_kib_before": run.rss_before_kib,
        "daemon_rss_kib_peak": run.rss_peak_kib,
        "daemon_rss_kib_after": run.rss_after_kib,
    }
    return figures, run.lost + run.forbidden


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--power-rounds", type=int, default=1000)
    parser.add_argument("--fault-cases", type=int, default=50, help="per kind (write, fsync)")
    parser.add_argument("--load-seconds", type=float, default=300)
    parser.add_argument("--seed", type=int, default=20261109)
    parser.add_argument("--only", default="power,faults,load")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    only = set(args.only.split(","))
    report: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    if "power" in only:
        print(f"power loss: {args.power_rounds} rounds", flush=True)
        figures, losses = soak_power(args.power_rounds, args.seed)
        report["power_loss"], problems = figures, problems + losses
    if "faults" in only:
        print(f"I/O faults: {args.fault_cases} cases per kind", flush=True)
        figures, failures = soak_faults(args.fault_cases, args.seed)
        report["io_faults"], problems = figures, problems + failures
    if "load" in only:
        print(f"load: {args.load_seconds:.0f} s", flush=True)
        figures, lost = soak_load(args.load_seconds, args.seed)
        report["load"], problems = figures, problems + lost
    for name, figures in report.items():
        print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in sorted(figures.items())))
    if args.json:
        print(json.dumps({"figures": report, "problems": problems}, sort_keys=True))
    for problem in problems[:50]:
        print(f"PROBLEM: {problem}")
    print("ok" if not problems else f"{len(problems)} problems")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
