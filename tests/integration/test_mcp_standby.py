"""``venom-mem mcp``'s standby (docs/adr/0038, client/_launcher.py): a relay that finds no
daemon at its start spawns a launch candidate that loads the daemon's modules and waits. It
is no daemon (no socket, no lock, no store) until the first call that needs one tells it to
go, when it becomes that call's daemon; it leaves with its relay, when a daemon answers
without it, after ``daemon.idle_timeout_ms``, and at once when the config turns it off or
makes starts explicit. Real relays, real daemons, real processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.daemon_env import VENOM_MEM, World, pid_alive, wait_gone, wait_until
from tests.support.mcp_lines import INITIALIZE, McpProcess
from tests.support.processes import (
    STANDBY_FLAG,
    argv,
    children,
    environ,
    settled,
    waiting_standby,
)


@contextmanager
def relay(world: World, token: str | None, **extra: str) -> Iterator[McpProcess]:
    opened = McpProcess([VENOM_MEM, "mcp"], world.environ(token, **extra), world.root)
    try:
        yield opened
    finally:
        opened.close()


def standbys(relay_pid: int) -> list[int]:
    """The relay's children launched as standbys, still running (a zombie is gone)."""
    return [
        child for child in children(relay_pid) if STANDBY_FLAG in argv(child) and pid_alive(child)
    ]


def world_standbys(world: World) -> list[int]:
    """Every standby process waiting for this world's socket, whoever spawned it."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and STANDBY_FLAG in argv(int(entry.name)):
            try:
                socket = environ(int(entry.name)).get("VENOM_MEM_SOCKET")
            except OSError:
                continue
            if socket == str(world.socket) and pid_alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def spawned_standby(relay_pid: int) -> int:
    assert wait_until(lambda: bool(standbys(relay_pid)), 10), "the relay spawned no standby"
    [pid] = standbys(relay_pid)
    return pid


def test_a_cold_relay_spawns_a_standby_that_becomes_the_first_calls_daemon(world: World) -> None:
    token = world.add_client("codex")
    world.ok("memory", "add", "--space", "user", "--content", "The build pins zig 0.17.",
             token=token)  # fmt: skip
    world.stop_daemon()
    with relay(world, token) as harness:
        standby = spawned_standby(harness.proc.pid)
        harness.start()
        # The launcher's rules hold for it (RFC-0020 section 8): its own session, / as its
        # cwd, no token or principal in its environment.
        assert os.getsid(standby) == standby
        assert os.readlink(f"/proc/{standby}/cwd") == "/"
        launched_with = environ(standby)
        assert "VENOM_MEM_TOKEN" not in launched_with
        assert launched_with["VENOM_MEM_SOCKET"] == str(world.socket)
        # No daemon before the first call that needs one: nothing binds the socket.
        assert waiting_standby(standby)
        assert not world.socket.exists()
        ping = world.run("ping", "--json")
        assert ping.code == 6, ping
        assert ping.json["error"]["code"] == "unavailable.not_running"
        failed, found = harness.call("memory_dsearch", {"query": "zig"})
        assert not failed, found
        assert [hit["id"] for hit in found["results"]] == ["m1"]
        assert world.daemon_pid() == standby  # the standby is the daemon the call started
        assert not waiting_standby(standby)
        assert standbys(harness.proc.pid) == [standby]
        # The daemon outlives its relay as any on-demand daemon does.
    assert pid_alive(standby)
    assert world.daemon_pid() == standby


def test_a_standby_leaves_with_its_relay_and_starts_nothing(world: World) -> None:
    token = world.add_client("codex")
    world.stop_daemon()
    with relay(world, token) as harness:
        harness.start()
        standby = spawned_standby(harness.proc.pid)
    assert wait_gone(standby, 10), "the standby outlived its relay"
    assert world.run("ping", "--json").code == 6
    assert not world.socket.exists()
    # A relay killed outright takes its standby too: the pipe's end is the standby's end.
    with relay(world, token) as killed:
        killed.start()
        standby = spawned_standby(killed.proc.pid)
        killed.proc.send_signal(signal.SIGKILL)
        killed.proc.wait(timeout=10)
    assert wait_gone(standby, 10), "the standby outlived its killed relay"
    assert world.run("ping", "--json").code == 6


def test_no_standby_where_a_daemon_serves(world: World) -> None:
    token = world.add_client("codex")
    daemon = world.daemon_pid()  # client add started it
    assert daemon is not None
    with relay(world, token) as harness:
        harness.start()
        failed, found = harness.call("whoami", {})
        assert not failed, found
        assert standbys(harness.proc.pid) == []
        assert children(harness.proc.pid) == []
    assert world.daemon_pid() == daemon


def test_a_standby_goes_once_a_daemon_answers_without_it(world: World) -> None:
    token = world.add_client("codex")
    world.stop_daemon()
    with relay(world, token) as harness:
        harness.start()
        standby = spawned_standby(harness.proc.pid)
        world.ok("whoami", token=token)  # a CLI call starts the daemon meanwhile
        daemon = world.daemon_pid()
        assert daemon is not None
        assert daemon != standby
        failed, found = harness.call("whoami", {})
        assert not failed, found
        assert wait_gone(standby, 10), "the standby stayed after the relay found a daemon"
        assert world.daemon_pid() == daemon


def test_off_and_explicit_in_the_config_leave_no_standby(world: World) -> None:
    token = world.add_client("codex")
    world.stop_daemon()
    world.write_config('.{ .daemon = .{ .mcp_standby = "off" } }')
    with relay(world, token) as harness:
        harness.start()
        spawned = children(harness.proc.pid)
        assert wait_until(lambda: not standbys(harness.proc.pid), 10)
        failed, found = harness.call("whoami", {})
        assert not failed, found  # the first call launches as it did before standbys
        daemon = world.daemon_pid()
        assert daemon is not None
        assert daemon not in spawned
        assert STANDBY_FLAG not in argv(daemon)
    world.stop_daemon()
    world.write_config('.{ .daemon = .{ .startup = "explicit" } }')
    with relay(world, token) as harness:
        harness.start()
        assert wait_until(lambda: not standbys(harness.proc.pid), 10)
        failed, found = harness.call("whoami", {})
        assert failed
        assert found["error"]["code"] == "unavailable.not_running"
        assert world.run("ping", "--json").code == 6


def test_a_standby_leaves_after_the_idle_timeout_and_the_call_still_launches(
    world: World,
) -> None:
    token = world.add_client("codex")
    world.stop_daemon()
    world.write_config(".{ .daemon = .{ .idle_timeout_ms = 1000 } }")
    with relay(world, token) as harness:
        harness.start()
        standby = spawned_standby(harness.proc.pid)
        assert wait_gone(standby, 10), "the standby outlived daemon.idle_timeout_ms"
        assert world.run("ping", "--json").code == 6
        failed, found = harness.call("whoami", {})  # told to go too late: launched anew
        assert not failed, found
        daemon = world.daemon_pid()
        assert daemon is not None
        assert daemon != standby


def test_owner_below_a_manager_or_a_malformed_token_gets_no_standby(world: World) -> None:
    world.stop_daemon()
    for token, extra, code in (("@owner", {"VENOM_MANAGER": "1"}, "denied.startup_context"),
                               ("not-a-token", {}, "denied.token")):  # fmt: skip
        with relay(world, token, **extra) as harness:
            harness.send(INITIALIZE)
            refused = harness.answer(0)
            assert code in refused["error"]["message"], refused
            # The relay spawns its standby before it reads initialize: none was.
            assert world_standbys(world) == []
    assert world.run("ping", "--json").code == 6


def test_starts_made_explicit_while_a_standby_waits_start_nothing(world: World) -> None:
    token = world.add_client("codex")
    world.stop_daemon()
    with relay(world, token) as harness:
        harness.start()
        standby = spawned_standby(harness.proc.pid)
        assert settled(standby, 20)  # it read the config that let it stay, and waits
        world.write_config('.{ .daemon = .{ .startup = "explicit" } }')
        failed, found = harness.call("whoami", {})
        assert failed
        assert found["error"]["code"] == "unavailable.not_running"
        assert wait_gone(standby, 10), "a standby told to go served an explicit store"
        assert world.run("ping", "--json").code == 6
        assert not world.socket.exists()


# The daemon's entry, run so that SIGUSR1 makes it name on stderr every module it has
# loaded (sys.modules: what import statements and importlib.import_module both fill).
_NAMING_MODULES = (
    "import os, runpy, signal, sys\n"
    "def named(signum, frame):\n"
    "    os.write(2, ('modules ' + ' '.join(sorted(sys.modules)) + '\\n').encode())\n"
    "signal.signal(signal.SIGUSR1, named)\n"
    "runpy.run_module('venom_mem_cli', run_name='__main__')\n"
)


def _loaded(proc: subprocess.Popen[bytes], log: Path, count: int) -> set[str]:
    """What the daemon has loaded now: its ``count``-th answer to SIGUSR1."""
    proc.send_signal(signal.SIGUSR1)

    def answers() -> list[str]:
        return [line for line in log.read_text().splitlines() if line.startswith("modules ")]

    assert wait_until(lambda: len(answers()) >= count, 10), "the daemon named no modules"
    return set(answers()[count - 1].split()[1:])


def _imports_of_a_daemon(world: World, token: str, *, standby: bool) -> tuple[set[str], set[str]]:
    """The modules a launched daemon has loaded when it is told to go (a standby; none for
    a plain launch) and those it loads from then on through ``ready`` and a first search."""
    status_read, status_write = os.pipe()
    go_read, go_write = os.pipe()
    argv_ = [sys.executable, "-c", _NAMING_MODULES, "serve", "--on-demand"]
    argv_ += ["--status-fd", str(status_write)]
    passed = [status_write]
    if standby:
        argv_ += [STANDBY_FLAG, str(go_read)]
        passed.append(go_read)
    log = world.root / f"modules-{standby}.txt"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(argv_, env=world.environ(), cwd="/", pass_fds=passed, stderr=stderr)
    os.close(status_write)
    os.close(go_read)
    try:
        before: set[str] = set()
        if standby:
            assert settled(proc.pid, 30)
            before = _loaded(proc, log, 1)
            os.write(go_write, b"go\n")
        assert os.read(status_read, 100) == b"ready\n"
        world.ok("memory", "search", "--query", "zig", token=token)
        after = _loaded(proc, log, 2 if standby else 1)
    finally:
        os.close(go_write)
        os.close(status_read)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    return before, after - before


def test_a_standby_loads_what_a_daemon_needs_through_its_first_search_and_no_more(
    world: World,
) -> None:
    """bootstrap._DAEMON_MODULES against the daemon itself: a module missing from it costs
    the first call its import after go; one too many costs a first call that comes at once
    (a harness's first call right after tools/list) the wait for it."""
    token = world.add_client("codex")
    world.stop_daemon()
    _, plain = _imports_of_a_daemon(world, token, standby=False)
    before_go, after_go = _imports_of_a_daemon(world, token, standby=True)
    assert "venom_mem_adapters.daemon.server" in plain  # the log is the daemon's
    assert after_go == set(), "loaded only once told to go: add them to _DAEMON_MODULES"
    assert before_go - plain == set(), "a daemon doesn't need these by its first result"
