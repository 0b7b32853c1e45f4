"""``venom-mem export --out FILE`` of 10k and 100k memories through a real daemon, and
``store copy`` of the 100k store to PostgreSQL (issue 27, docs/adr/0039 and 0041).

What it shows: the export's time (CPU of the CLI and of the daemon, and wall clock) and the
peak RSS of each process (the CLI's from ``wait4``'s rusage, the daemon's ``VmHWM`` from
/proc). The floor for bounded memory: the export pages through the daemon, so neither
process's peak may grow with the store; the bench prints the growth from 10k to 100k beside
a bound (``RSS_GROWTH_MIB``), and the ratio of store size to growth. The floor for time: a raw
scan of the same rows in this process (every memory and version row read by apsw and written
as JSON), which the export through a socket and a second process can't beat.

The stores are filled in process, through the store port's write transactions, 5,000 rows a
transaction (one memory and its first version each; 100 sessions, 20 described spaces), which
gives a valid store: the daemon serves it as it serves one written through the verbs.
Each size has its own fresh daemon, so one's peak says nothing of the other's.

Run: ``.venv/bin/python bench/bench_export.py`` (about 5 minutes on 2 idle cores; ``--sizes
10000`` for a quick look). Wall-clock figures are only worth what the machine's load was: the
load average is printed before and after.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import apsw
from tests.support.daemon_env import VENOM_MEM, World, make_world

from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.records import Memory, Provenance, Session, SpaceDescription, Version

SPACES = [f"project/p{n}" for n in range(19)] + ["user"]
WORDS = ("zig", "build", "cache", "daemon", "socket", "sqlite", "memory", "search", "vector",
         "token", "grant", "space", "session", "harness", "agent", "review", "commit")  # fmt: skip
AUTHOR = Provenance(principal="g1", label="claude-code")
BATCH = 5000
RSS_GROWTH_MIB = 16.0  # 10k -> 100k: a page is 256 KiB; anything near the store's size is a leak


def _memory(n: int) -> Memory:
    words = " ".join(WORDS[(n * k) % len(WORDS)] for k in range(1, 6 + n % 30))
    content = f"note {n}: {words} — détail {n * 31}"
    ts = f"2026-10-{1 + n % 28:02d}T10:{n % 60:02d}:00.000Z"
    return Memory(
        id=0,
        space=SPACES[n % len(SPACES)],
        kind="fact" if n % 3 else "note",
        title=f"Note {n}" if n % 2 else "",
        content=content,
        content_sha256=hashlib.sha256(content.encode()).digest(),
        tags=("bench",) if n % 5 == 0 else (),
        importance="critical" if n % 10 == 0 else "normal",
        author=AUTHOR,
        updated_by=AUTHOR,
        session=1 + n % 100,
        created=ts,
        updated=ts,
    )


def fill(path: Path, count: int) -> None:
    with SqliteStore.open(path) as store:
        with store.write() as tx:
            for n in range(100):
                tx.insert_session(
                    Session(
                        id=0,
                        harness="claude-code",
                        harness_session=f"h-{n}",
                        reported_by=AUTHOR,
                        started="2026-10-01T09:00:00.000Z",
                    )
                )
            for space in SPACES:
                tx.set_space_description(
                    SpaceDescription(
                        space=space,
                        description=f"Facts of {space}",
                        by=AUTHOR,
                        updated="2026-10-01T10:00:00.000Z",
                    )
                )
        for start in range(0, count, BATCH):
            with store.write() as tx:
                for n in range(start, min(start + BATCH, count)):
                    draft = _memory(n)
                    id_ = tx.insert_memory(draft)
                    tx.insert_version(
                        Version(
                            memory=id_,
                            revision=1,
                            action="add",
                            kind=draft.kind,
                            title=draft.title,
                            content=draft.content,
                            tags=draft.tags,
                            importance=draft.importance,
                            branches=(),
                            by=AUTHOR,
                            ts=draft.created,
                        )
                    )


def _cpu_s(pid: int) -> float:
    """user + sys of a running process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def _cli_measured(world: World, *args: str) -> dict[str, float]:
    """One CLI call, measured by wait4 (its own rusage, not the sum of all children); its
    stdout is kept in a file, and shown when it fails."""
    started = time.perf_counter()
    said = world.root / "cli.out"
    quiet = [(os.POSIX_SPAWN_OPEN, 1, str(said), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    pid = os.posix_spawn(VENOM_MEM, [VENOM_MEM, *args], world.environ("@owner"), file_actions=quiet)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) == 0, (args, said.read_text()[-2000:])
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
    }


def raw_scan_s(path: Path) -> float:
    """The floor: every memory and version row read and written as JSON, in process (CPU)."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    sink = open(os.devnull, "w")  # noqa: SIM115 - closed below, beside the connection
    try:
        for table in ("memories", "memory_versions"):
            for row in connection.execute(f"SELECT * FROM {table}"):
                sink.write(json.dumps([v.hex() if isinstance(v, bytes) else v for v in row]))
    finally:
        sink.close()
        connection.close()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


@contextmanager
def postgres() -> Iterator[object | None]:
    try:
        import psycopg  # noqa: F401
        from tests.support.postgres_server import running_server
    except ImportError:
        yield None
        return
    try:
        with running_server() as server:
            yield server
    except RuntimeError as exc:
        print(f"no PostgreSQL server: {exc}")
        yield None


def measure(count: int, out_dir: Path, *, copy: bool) -> dict[str, object]:
    with make_world() as world:
        world.write_config(".{ .daemon = .{ .idle_timeout_ms = 3600000 } }")
        filled = time.perf_counter()
        fill(world.store, count)
        fill_s = time.perf_counter() - filled
        status = world.ok("store", "status", token="@owner")
        assert status["memories"] == count, status
        pid = world.daemon_pid()
        assert pid is not None
        daemon_cpu = _cpu_s(pid)
        target = out_dir / f"export-{count}.jsonl"
        cli = _cli_measured(world, "export", "--out", str(target))
        daemon_cpu = _cpu_s(pid) - daemon_cpu
        lines = sum(1 for _ in target.open("rb"))
        assert lines == 1 + count + 100 + len(SPACES), lines
        result: dict[str, object] = {
            "memories": count,
            "store_mib": status["bytes"] / 2**20,
            "fill_s": fill_s,
            "export_mib": target.stat().st_size / 2**20,
            "cli": cli,
            "daemon_cpu_s": daemon_cpu,
            "daemon_hwm_mib": _hwm_mib(pid),
            "floor_scan_cpu_s": raw_scan_s(world.store),
        }
        target.unlink()
        print(json.dumps(result), flush=True)
        if copy:
            with postgres() as server:
                if server is not None:
                    url = server.fresh_url("bench")  # type: ignore[attr-defined]
                    before = _cpu_s(pid)
                    copied = _cli_measured(world, "store", "copy", "--to", url, "--json")
                    result["copy"] = copied | {
                        "daemon_cpu_s": _cpu_s(pid) - before,
                        "daemon_hwm_mib": _hwm_mib(pid),
                    }
                    world.stop_daemon()
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--no-copy", action="store_true", help="skip store copy to PostgreSQL")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average before: {os.getloadavg()}")
    out_dir = Path("/tmp") / f"vm-bench-export-{os.getpid()}"
    out_dir.mkdir(mode=0o700)
    try:
        results = [measure(n, out_dir, copy=not args.no_copy and n == max(sizes)) for n in sizes]
    finally:
        for left in out_dir.iterdir():
            left.unlink()
        out_dir.rmdir()
    print(f"load average after: {os.getloadavg()}")
    heads = ("store", "file", "CLI wall", "CLI cpu", "daemon cpu", "CLI RSS", "daemon HWM")
    print(f"{'memories':>9} " + " ".join(f"{h:>9}" for h in heads) + " floor scan cpu")
    for r in results:
        cli = r["cli"]
        assert isinstance(cli, dict)
        cells = (
            f"{r['store_mib']:.1f}Mi",
            f"{r['export_mib']:.1f}Mi",
            f"{cli['wall_s']:.1f}s",
            f"{cli['cpu_s']:.1f}s",
            f"{r['daemon_cpu_s']:.1f}s",
            f"{cli['rss_mib']:.1f}Mi",
            f"{r['daemon_hwm_mib']:.1f}Mi",
        )
        print(
            f"{r['memories']:>9} "
            + " ".join(f"{c:>9}" for c in cells)
            + f" {r['floor_scan_cpu_s']:.1f}s"
        )
    if len(results) > 1:
        small, large = results[0], results[-1]
        peaks = (
            ("CLI", [float(x["cli"]["rss_mib"]) for x in (small, large)]),  # type: ignore[index]
            ("daemon", [float(str(x["daemon_hwm_mib"])) for x in (small, large)]),
        )
        for who, (a, b) in peaks:
            growth = b - a
            verdict = "ok" if growth < RSS_GROWTH_MIB else "OVER"
            print(
                f"{who} peak RSS {small['memories']} -> {large['memories']}: {a:.1f} -> {b:.1f}"
                f" MiB, growth {growth:+.1f} MiB (bound < {RSS_GROWTH_MIB:.0f} MiB): {verdict}"
            )
    for r in results:
        if "copy" in r:
            c = r["copy"]
            assert isinstance(c, dict)
            print(
                f"store copy of {r['memories']} memories to PostgreSQL: wall {c['wall_s']:.1f} s,"
                f" daemon cpu {c['daemon_cpu_s']:.1f} s, daemon HWM after {c['daemon_hwm_mib']:.1f}"
                f" MiB, CLI RSS {c['rss_mib']:.1f} MiB"
            )
    print(json.dumps({"python": sys.version.split()[0], "cores": os.cpu_count()}))


if __name__ == "__main__":
    main()
