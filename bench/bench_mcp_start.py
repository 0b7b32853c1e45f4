"""How fast ``venom-mem mcp`` is ready and gives its first tool result, what one costs in
memory, and how much of a harness's context it takes, beside the MCP reference server.

- Spawn to the ``initialize`` answer, to the ``tools/list`` answer and to the first tool
  result (``memory_dsearch``), median and p90 of 15 fresh spawns each, for the relay
  (``venom-mem mcp``, docs/adr/0038), the in-process adapter (``venom-mem mcp
  --in-process``) and the reference memory server (``@modelcontextprotocol/server-memory``,
  node, its ``search_nodes``), in one run: with no daemon running (each spawn starts one;
  the relay's first call tells its standby to go, and once more with
  ``daemon.mcp_standby = "off"``: "standby off"), and with a daemon that already serves
  (and has served an MCP session). Targets: the relay's
  first tool result at or below the reference server's, both ways; initialize and tools/list
  within 0.3 s (issue 12).
- Each adapter's RSS after its first tool result (target for the relay: under 20 MiB), and
  the daemon's RSS with no MCP session, then with 5 and with 20 relay sessions open.
- The ``tools/list`` answer's size for each principal (owner, client token, no token).
- What a cold daemon costs by itself: ``venom-mem memory search --json`` with no daemon
  running and with one, median of 15 (the relay's first result with no daemon is about that
  start: its first calls go over plain frames while the daemon loads the SDK, ADR 0038).

The reference server is installed from npm into bench/out/npm on first use.

Run: ``.venv/bin/python bench/bench_mcp_start.py`` (about 4 minutes on a quiet machine).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import VENOM_MEM, World, make_world, wait_gone
from tests.support.mcp_lines import McpProcess
from tests.support.processes import children

START_TARGET_S = 0.3
RELAY_RSS_TARGET_MIB = 20.0
RUNS = 15
STANDBY_OFF = "standby off"  # no daemon running, daemon.mcp_standby = "off"
REFERENCE = "@modelcontextprotocol/server-memory@2026.8.31"
NPM_DIR = Path(__file__).resolve().parent / "out" / "npm"
REFERENCE_JS = NPM_DIR / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist"

Argv = list[str]


def reference_server() -> Argv | None:
    """``node .../server-memory/dist/index.js``, installed into bench/out/npm if need be."""
    script = REFERENCE_JS / "index.js"
    if not script.exists():
        NPM_DIR.mkdir(parents=True, exist_ok=True)
        (NPM_DIR / "package.json").write_text('{"private":true}\n')
        installed = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", REFERENCE],
            cwd=NPM_DIR,
            capture_output=True,
            text=True,
            check=False,
        )
        if installed.returncode != 0 or not script.exists():
            print(f"could not install {REFERENCE}: {installed.stderr.strip()}")
            return None
    return ["node", str(script)]


def cpu_s(pid: int) -> float:
    """The process's user+sys CPU seconds so far (the figure a loaded machine can't skew)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Figures:
    def __init__(self) -> None:
        self.init: list[float] = []
        self.listed: list[float] = []
        self.first: list[float] = []
        self.rss: list[int] = []
        self.cpu: list[float] = []  # the adapter's, plus a daemon it started
        self.load: list[float] = []


def one_spawn(
    argv: Argv,
    env: dict[str, str],
    cwd: Path,
    call: tuple[str, dict[str, Any]],
    into: Figures,
    *,
    daemon: Callable[[], int | None] | None = None,
) -> None:
    before = daemon() if daemon is not None else None
    spawned = McpProcess(argv, env, cwd)
    try:
        initialized, listed, _ = spawned.start()
        result = spawned.request("tools/call", {"name": call[0], "arguments": call[1]})
        first = time.monotonic() - spawned.began
        # Read at once: the CPU spent to the first result, the daemon the adapter started
        # included. A relay's daemon goes on to load the SDK for the session it opens after
        # that result (ADR 0038); the time a ``venom-mem ping`` takes to find the daemon's
        # pid would count part of that load.
        cpu = cpu_s(spawned.proc.pid) + sum(cpu_s(child) for child in children(spawned.proc.pid))
        assert "result" in result, result
        assert not result["result"].get("isError"), result
        into.init.append(initialized)
        into.listed.append(listed)
        into.first.append(first)
        into.rss.append(rss_kib(spawned.proc.pid))
        if daemon is not None and before is None:
            assert children(spawned.proc.pid), "the spawn started no daemon of its own"
        into.cpu.append(cpu)
        into.load.append(os.getloadavg()[0])
    finally:
        spawned.close()


def stop_daemon(world: World) -> None:
    pid = world.daemon_pid()
    if pid is not None:
        world.run("stop", token="@owner")
        wait_gone(pid, 10)


def ours(world: World, token: str, *flags: str) -> tuple[Argv, dict[str, str]]:
    return [VENOM_MEM, "mcp", *flags], world.environ(token)


def measure(
    name: str, spawn: Callable[[Figures], None], before_each: Callable[[], None]
) -> Figures:
    figures = Figures()
    spawn(Figures())  # warm the file cache once, as a harness's second start is
    for _ in range(RUNS):
        before_each()
        spawn(figures)
    print(f"  measured {name}", file=sys.stderr)
    return figures


def _ms(values: list[float]) -> str:
    p50 = statistics.median(values)
    p90 = sorted(values)[int(len(values) * 0.9) - 1]
    return f"{p50 * 1000:5.0f} / {p90 * 1000:5.0f}"


@contextmanager
def sessions(world: World, token: str, count: int) -> Iterator[list[McpProcess]]:
    """``count`` relay sessions open at once, each past its first tool call."""
    with ExitStack() as stack:
        opened = []
        for _ in range(count):
            argv, env = ours(world, token)
            spawned = McpProcess(argv, env, world.root)
            stack.callback(spawned.close)
            spawned.start()
            spawned.request("tools/call", {"name": "whoami", "arguments": {}})
            # The first call went over the relay's bridge; a listing asked for now is the
            # daemon's session's, so the session is open (the SDK loaded) once it answers.
            spawned.request("tools/list")
            opened.append(spawned)
        yield opened


def main() -> None:
    reference = reference_server()
    table: dict[tuple[str, str], Figures] = {}
    with make_world() as world:
        token = world.add_client("bench")
        world.ok("memory", "add", "--space", "user", "--content", "The build pins zig 0.17.",
                 token=token)  # fmt: skip
        search = {"query": "zig"}

        def keep() -> None:
            pass

        def cold() -> None:
            stop_daemon(world)

        for mode, flags in (("relay", ()), ("in-process", ("--in-process",))):
            argv, env = ours(world, token, *flags)

            def spawn(into: Figures, argv: Argv = argv, env: dict[str, str] = env) -> None:
                one_spawn(argv, env, world.root, ("memory_dsearch", search), into,
                          daemon=world.daemon_pid)  # fmt: skip

            table[(mode, "no daemon")] = measure(f"{mode}, no daemon", spawn, cold)
            if mode == "relay":  # the same spawns with the standby switched off (ADR 0038)
                world.write_config('.{ .daemon = .{ .mcp_standby = "off" } }')
                table[("relay", STANDBY_OFF)] = measure("relay, standby off", spawn, cold)
                world.config.unlink()
            table[(mode, "daemon up")] = measure(f"{mode}, daemon up", spawn, keep)
        if reference is not None:
            memory_file = world.root / "reference-memory.jsonl"
            ref_env = {"PATH": world.env["PATH"], "HOME": world.env["HOME"],
                       "MEMORY_FILE_PATH": str(memory_file)}  # fmt: skip

            def spawn_reference(into: Figures) -> None:
                one_spawn(reference, ref_env, world.root, ("search_nodes", search), into)

            table[("reference", "")] = measure("reference", spawn_reference, keep)

        cli: dict[str, list[float]] = {"no daemon": [], "daemon up": []}
        for _ in range(RUNS):
            for daemon, prepare in (("no daemon", cold), ("daemon up", keep)):
                prepare()
                began = time.monotonic()
                world.ok("memory", "search", "--query", "zig", token=token)
                cli[daemon].append(time.monotonic() - began)
        # A daemon that has served no MCP session: the SDK not imported yet.
        stop_daemon(world)
        world.ok("memory", "search", "--query", "zig", token=token)
        pid = world.daemon_pid()
        assert pid is not None
        daemon_rss = {0: rss_kib(pid)}
        for count in (5, 20):
            with sessions(world, token, count):
                daemon_rss[count] = rss_kib(pid)
        sizes = {}
        for who, principal_token in (("owner", "@owner"), ("client token", token),
                                     ("no token", None)):  # fmt: skip
            spawned = McpProcess([VENOM_MEM, "mcp"], world.environ(principal_token), world.root)
            try:
                sizes[who] = len(json.dumps(spawned.start()[2], separators=(",", ":")))
            finally:
                spawned.close()

    print(
        f"MCP start-up, {RUNS} fresh spawns each, one run: median / p90 in ms; CPU: the "
        "adapter's user+sys to its first result, plus the daemon's when it started one"
    )
    print(f"  {'server':<12} {'daemon':<12} {'initialize':>13} {'tools/list':>13} "
          f"{'first result':>13} {'CPU ms':>7} {'RSS MiB':>8} {'load':>5}")  # fmt: skip
    for (mode, daemon), f in table.items():
        rss = statistics.median(f.rss) / 1024
        cpu = statistics.median(f.cpu) * 1000
        load = statistics.median(f.load)
        print(f"  {mode:<12} {daemon:<12} {_ms(f.init):>13} {_ms(f.listed):>13} "
              f"{_ms(f.first):>13} {cpu:7.0f} {rss:8.1f} {load:5.1f}")  # fmt: skip
    if reference is not None:
        floor = statistics.median(table[("reference", "")].first)
        for daemon in ("no daemon", "daemon up", STANDBY_OFF):
            mine = statistics.median(table[("relay", daemon)].first)
            verdict = "ok" if mine <= floor else "OVER"
            print(f"  relay first result, {daemon}: {mine * 1000:.0f} ms against the reference "
                  f"server's {floor * 1000:.0f} ms  {verdict}")  # fmt: skip
    relay_rss = statistics.median(table[("relay", "daemon up")].rss) / 1024
    verdict = "ok" if relay_rss < RELAY_RSS_TARGET_MIB else "OVER"
    print(f"  relay RSS per session {relay_rss:.1f} MiB (target under "
          f"{RELAY_RSS_TARGET_MIB:.0f} MiB)  {verdict}")  # fmt: skip
    for name in ("relay", "in-process"):
        p50 = statistics.median(table[(name, "daemon up")].listed)
        verdict = "ok" if p50 <= START_TARGET_S else "OVER"
        print(f"  {name} tools/list p50 {p50 * 1000:.0f} ms (target "
              f"{START_TARGET_S * 1000:.0f} ms)  {verdict}")  # fmt: skip
    print("venom-mem memory search --json, median / p90 in ms")
    for daemon, values in cli.items():
        print(f"  {daemon:<12} {_ms(values)}")
    print("daemon RSS by open relay sessions")
    for count, kib in daemon_rss.items():
        print(f"  {count:>2} sessions  {kib / 1024:6.1f} MiB")
    print("tools/list size by principal")
    for who, size in sizes.items():
        print(f"  {who:<13} {size / 1000:5.1f} KB")


if __name__ == "__main__":
    main()
