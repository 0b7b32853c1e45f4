"""memory.context at 10k memories in 20 spaces, through the CLI's ``--json`` path (issue 17).

Target: p50 under 20 ms for ``venom-mem memory context --spaces ... --json`` against a
running daemon, printed beside ``memory search --json`` on the same store and the ten-line
stdlib client's floor for the same context request. The store is filled in process, a
thousand rows per transaction (the figures are about reading, and 10k one-commit adds would
take most of the run): every space described, one memory in ten critical, one in four low, one
in seven on a feature branch.

Run: ``.venv/bin/python bench/bench_context.py`` (about a minute).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import VENOM_MEM, World, make_world

from venom_mem_adapters.client import connect
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.records import Memory, Provenance, SpaceDescription, Version

SPACES = [f"project/p{n}" for n in range(19)] + ["user"]
WORDS = (
    "zig", "build", "cache", "daemon", "socket", "sqlite", "memory", "search", "vector", "token",
    "grant", "space", "session", "harness", "agent", "review", "commit", "branch", "deploy",
)  # fmt: skip
AUTHOR = Provenance(principal="g1", label="claude-code")
RUNS = 30
FLOOR_CLIENT = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["VENOM_MEM_SOCKET"])
f = s.makefile("rb")
s.sendall(b'{"id":1,"verb":"hello","params":{}}\n'); f.readline()
req = {"id": 2, "verb": "memory.context", "params": json.loads(sys.argv[1])}
s.sendall(json.dumps(req).encode() + b"\n")
sys.stdout.write(f.readline().decode())
"""


def _memory(n: int) -> Memory:
    words = " ".join(WORDS[(n * k) % len(WORDS)] for k in range(1, 4 + n % 20))
    content = f"note {n}: {words} detail {n * 31}"
    day = 1 + n % 28
    ts = f"2026-10-{day:02d}T10:{n % 60:02d}:00.000Z"
    return Memory(
        id=0,
        space=SPACES[n % len(SPACES)],
        kind="fact" if n % 3 else "note",
        content=content,
        content_sha256=hashlib.sha256(content.encode()).digest(),
        importance="critical" if n % 10 == 0 else "low" if n % 4 == 0 else "normal",
        branches=("feature/x",) if n % 7 == 0 else (),
        author=AUTHOR,
        updated_by=AUTHOR,
        created=ts,
        updated=ts,
    )


def fill(path: Path, count: int) -> None:
    with SqliteStore.open(path) as store:
        for start in range(0, count, 1000):
            with store.write() as tx:
                for n in range(start, min(start + 1000, count)):
                    draft = _memory(n)
                    id_ = tx.insert_memory(draft)
                    tx.insert_version(
                        Version(
                            memory=id_,
                            revision=1,
                            action="add",
                            kind=draft.kind,
                            title="",
                            content=draft.content,
                            tags=(),
                            importance=draft.importance,
                            branches=draft.branches,
                            by=AUTHOR,
                            ts=draft.created,
                        )
                    )
        with store.write() as tx:
            for space in SPACES:
                tx.set_space_description(
                    SpaceDescription(
                        space=space,
                        description=f"Facts of {space}: build, test and review rules.",
                        by=AUTHOR,
                        updated="2026-10-01T10:00:00.000Z",
                    )
                )


def p50_ms(cmd: list[str], env: dict[str, str]) -> float:
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def call_p50_ms(world: World, verb: str, params: dict[str, object]) -> float:
    """The verb alone: one connection, many calls (no process start, no hello)."""
    samples = []
    with connect(world.environ()) as conn:
        for _ in range(RUNS * 3):
            started = time.perf_counter()
            conn.call(verb, params)
            samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def cli_p50_ms(world: World, *args: str) -> float:
    return p50_ms([VENOM_MEM, *args, "--json"], world.env)


def main() -> None:
    rows: list[tuple[str, str, str]] = []
    with make_world() as world:
        world.write_config(".{ .daemon = .{ .idle_timeout_ms = 600000 } }")
        fill(world.store, 10_000)
        status = world.ok("store", "status")
        assert status["memories"] == 10_000, status

        def run(*args: str) -> float:
            return cli_p50_ms(world, *args)

        two = json.dumps(["project/p3", "user"])
        context = run("memory", "context", "--spaces", two, "--branch", "main")
        big = run("memory", "context", "--spaces", two, "--budget", "65536")
        every = run("memory", "context", "--spaces", json.dumps(SPACES), "--budget", "65536")
        search = run("memory", "search", "--query", "which zig version cache")
        params = json.dumps({"spaces": ["project/p3", "user"], "branch": "main"})
        floor = p50_ms([sys.executable, "-c", FLOOR_CLIENT, params], world.env)
        shown = world.ok("memory", "context", "--spaces", two, "--branch", "main")
        rows.append(
            (
                "CLI memory context --json, 2 spaces, budget 8192 (p50)",
                f"{context:.1f} ms",
                f"target < 20 ms; {len(shown['memories'])} shown, {shown['omitted']} left out",
            )
        )
        rows.append(
            ("CLI memory context --json, 2 spaces, budget 65536 (p50)", f"{big:.1f} ms", "")
        )
        rows.append(
            ("CLI memory context --json, 20 spaces, budget 65536 (p50)", f"{every:.1f} ms", "")
        )
        rows.append(("CLI memory search --json, same store (p50)", f"{search:.1f} ms", "beside"))
        rows.append(("stdlib client floor, the same context (p50)", f"{floor:.1f} ms", ""))
        startup = p50_ms([sys.executable, "-S", "-c", "pass"], world.env)
        rows.append(
            ("python -S -c pass, this machine now (p50)", f"{startup:.1f} ms", "no CLI beats it")
        )
        verb = call_p50_ms(world, "memory.context", json.loads(params))
        found = call_p50_ms(world, "memory.search", {"query": "which zig version cache"})
        rows.append(("memory.context over one connection (p50)", f"{verb:.2f} ms", ""))
        rows.append(("memory.search over one connection (p50)", f"{found:.2f} ms", "beside"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'figure':>10}  note")
    for name, figure, note in rows:
        print(f"{name:<{width}}  {figure:>10}  {note}")
    print(json.dumps({"python": sys.version.split()[0], "cores": os.cpu_count()}))


if __name__ == "__main__":
    main()
