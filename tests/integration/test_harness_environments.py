"""Issue 12: the real world a harness launches ``venom-mem mcp`` into.

- Codex passes its MCP servers only HOME, LANG, PATH, SHELL, TERM (and the token it was
  given): no XDG_RUNTIME_DIR. That adapter and the user's own terminal must reach one
  daemon for one store, whichever starts it.
- Another local user can create files where we look for the daemon: nothing of ours (not
  the token, not the request) may reach a socket that isn't our own daemon's.
- A daemon that stops answering (SIGSTOP) must cost a caller a bounded wait, not a hang.
- The adapter says at ``initialize`` when its token is bad, and lists only what its
  principal could ever call.

Everything is real: the ``venom-mem`` executable, its daemon on a unix socket, and the mcp
SDK's own client speaking to ``venom-mem mcp`` launched with exactly the harness's
environment (``env -i``, so not even the SDK's default variables leak in).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from mcp import ClientSession
from mcp import types as mcp_types

from tests.support.daemon_env import ALL_RW, VENOM_MEM, Result, wait_gone
from tests.support.mcp_stdio import initialize_refusal, mcp_session
from tests.support.processes import waiting_standby
from venom_mem_adapters.mcp.tools import build_catalog
from venom_mem_core.manifest import MANIFEST

CODEX_VARIABLES = ("HOME", "LANG", "PATH", "SHELL", "TERM")
NOBODY = 65534
SCENARIO_TIMEOUT_S = 120


@attrs.define
class Machine:
    """One user's home on a shared machine: a terminal environment (XDG_RUNTIME_DIR set,
    XDG_DATA_HOME unset, as on a desktop), and a harness's filtered one."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def store(self) -> Path:
        return self.home / ".local" / "share" / "venom-mem" / "store.db"

    def terminal_env(self, token: str | None = None) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": str(self.root / "xdg-run"),
        }
        if token is not None:
            env["VENOM_MEM_TOKEN"] = token
        return env

    def codex_env(self, token: str | None = None) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SHELL": "/bin/bash",
            "TERM": "xterm-256color",
        }
        assert set(env) == set(CODEX_VARIABLES)
        if token is not None:
            env["VENOM_MEM_TOKEN"] = token
        return env

    def cli(self, *args: str, env: dict[str, str], timeout: float = 60) -> Result:
        proc = subprocess.run(
            [VENOM_MEM, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd=str(self.root),
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def record(self) -> dict[str, Any] | None:
        path = Path(f"{self.store}.daemon")
        return json.loads(path.read_text()) if path.exists() else None

    def daemon_pids(self) -> set[int]:
        """Every venom-mem daemon serving this home's store (by its command and cwd-free
        environment: the store path is in no argv, so look at each daemon's HOME), but for
        a relay's standby that no call has told to go (docs/adr/0038)."""
        pids = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
                if b"serve" not in cmd or not any(b"venom_mem_cli" in c for c in cmd):
                    continue
                if waiting_standby(int(entry.name)):  # binds nothing until a call needs it
                    continue
                environ = (entry / "environ").read_bytes().split(b"\0")
                if f"HOME={self.home}".encode() in environ:
                    pids.add(int(entry.name))
        return pids

    def stop_daemons(self) -> None:
        for pid in self.daemon_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGTERM)
            wait_gone(pid, 10)


@pytest.fixture
def machine() -> Iterator[Machine]:
    root = Path(tempfile.mkdtemp(prefix="vm-h-", dir="/tmp"))
    (root / "home").mkdir(mode=0o700)
    (root / "xdg-run").mkdir(mode=0o700)
    m = Machine(root)
    try:
        yield m
    finally:
        m.stop_daemons()
        shutil.rmtree(root, ignore_errors=True)


def run(scenario: Any) -> None:
    async def bounded() -> None:
        with anyio.fail_after(SCENARIO_TIMEOUT_S):
            await scenario()

    anyio.run(bounded)


async def call(session: ClientSession, tool: str, **arguments: Any) -> mcp_types.CallToolResult:
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, mcp_types.CallToolResult)
    return result


def ok(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error_of(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert result.is_error, result
    [content] = result.content
    assert isinstance(content, mcp_types.TextContent)
    body: dict[str, Any] = json.loads(content.text)["error"]
    return body


def add_client(machine: Machine, name: str) -> str:
    result = machine.cli(
        "client", "add", "--name", name, "--grants", ALL_RW, "--json",
        env=machine.terminal_env("@owner"),
    )  # fmt: skip
    assert result.code == 0, result
    return str(result.json["token"])


def json_error(result: Result) -> dict[str, Any]:
    body: dict[str, Any] = result.json["error"]
    return body


# -- one store, one daemon, whatever the environment ------------------------------------------


@pytest.mark.parametrize("first", ["terminal", "adapter"])
def test_a_codex_launched_adapter_and_the_terminal_share_one_daemon(
    machine: Machine, first: str
) -> None:
    token = add_client(machine, "codex")  # the terminal starts a daemon on its socket
    if first == "adapter":
        machine.stop_daemons()
        assert machine.record() is None  # removed at the clean stop
    outputs: list[str] = []

    async def scenario() -> None:
        async with mcp_session(machine.codex_env(token), machine.root, exact=True) as codex:
            added = ok(await call(codex, "memory_dadd", space="user", content="Codex was here."))
            found = await anyio.to_thread.run_sync(
                lambda: machine.cli(
                    "memory", "search", "--query", "Codex", "--json", env=machine.terminal_env()
                )
            )
            outputs.append(found.stdout + found.stderr)
            assert found.code == 0, found
            [hit] = found.json["results"]
            assert hit["id"] == added["id"]
            assert hit["author"] == {"principal": "g1", "label": "codex"}
            mine = await anyio.to_thread.run_sync(
                lambda: machine.cli(
                    "memory", "add", "--space", "user", "--content", "The terminal wrote this.",
                    "--json", env=machine.terminal_env("@owner"),
                )
            )  # fmt: skip
            outputs.append(mine.stdout + mine.stderr)
            assert mine.code == 0, mine
            seen = ok(await call(codex, "memory_dsearch", query="terminal"))
            assert [h["id"] for h in seen["results"]] == [mine.json["id"]]
            assert len(machine.daemon_pids()) == 1

    run(scenario)
    assert not any("store_locked" in text for text in outputs)
    record = machine.record()
    assert record is not None
    assert machine.daemon_pids() == {record["pid"]}
    xdg_socket = str(machine.root / "xdg-run" / "venom-mem" / "daemon.sock")
    if first == "terminal":
        assert record["socket"] == xdg_socket
    else:  # Codex had no XDG_RUNTIME_DIR: its daemon listens inside the store's directory
        assert record["socket"] == str(machine.store.parent / "run" / "daemon.sock")
        assert not record["socket"].startswith("/tmp/venom-mem-")


def test_without_any_runtime_directory_nothing_goes_to_tmp(machine: Machine) -> None:
    env = machine.codex_env("@owner")
    result = machine.cli("memory", "add", "--space", "user", "--content", "x", "--json", env=env)
    assert result.code == 0, result
    record = machine.record()
    assert record is not None
    assert record["socket"] == str(machine.store.parent / "run" / "daemon.sock")
    run_dir = machine.store.parent / "run"
    assert (run_dir.stat().st_mode & 0o777, run_dir.stat().st_uid) == (0o700, os.getuid())


# -- a fake daemon run by another user gets nothing -----------------------------------------

FAKE_DAEMON = r"""
import os, socket, sys
path, log = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o777)
server.listen(16)
print("listening", flush=True)
while True:
    conn, _ = server.accept()
    conn.settimeout(2)
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            with open(log, "ab") as f:
                f.write(data)
            for line in data.splitlines():
                conn.sendall(b'{"id":1,"ok":{"principal":"owner","label":"owner"}}\n')
                conn.sendall(b'{"id":2,"ok":{"id":"m1","revision":1,"changed":true}}\n')
    except OSError:
        pass
    conn.close()
"""
FAKE_TOKEN = "vnt1.venom-mem.g1." + "A" * 43


def system_python() -> str:
    """A python another user may run (ours may live under root's private home)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.skip("no system python3 for a process of uid 65534 to run")


@contextlib.contextmanager
def fake_daemon(directory: Path) -> Iterator[tuple[Path, Path]]:
    """A socket served by uid 65534 in ``directory`` (made theirs), logging every byte."""
    directory.mkdir(mode=0o777, exist_ok=True)
    os.chmod(directory, 0o777)
    os.chown(directory, NOBODY, NOBODY)
    sock, log = directory / "daemon.sock", directory / "fake.log"
    proc = subprocess.Popen(
        [system_python(), "-c", FAKE_DAEMON, str(sock), str(log)],
        user=NOBODY,
        group=NOBODY,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "listening"
        yield sock, log
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def assert_refused(result: Result, path: Path) -> None:
    assert result.code == 1, result
    error = json_error(result)
    assert error["code"] == "failed.socket", error
    assert error["data"]["path"] == str(path)
    assert error["data"]["owner"] == NOBODY
    assert "65534" in error["message"]


def logged(log: Path) -> bytes:
    return log.read_bytes() if log.exists() else b""


@pytest.fixture
def shared_machine(machine: Machine) -> Machine:
    if os.getuid() != 0:
        pytest.skip("needs root to run a process as uid 65534")
    os.chmod(machine.root, 0o711)  # another user may pass through, as /tmp lets them
    return machine


def test_a_stranger_behind_venom_mem_socket_gets_no_byte(shared_machine: Machine) -> None:
    m = shared_machine
    with fake_daemon(m.root / "theirs") as (sock, log):
        # In their directory: refused on the directory's owner.
        env = {**m.terminal_env(FAKE_TOKEN), "VENOM_MEM_SOCKET": str(sock)}
        add = m.cli("memory", "add", "--space", "user", "--content", "secret", "--json", env=env)
        assert_refused(add, sock)
        # Moved into a directory of ours: the directory passes, SO_PEERCRED does not.
        mine = m.root / "mine"
        mine.mkdir(mode=0o700)
        moved = mine / "d.sock"
        os.rename(sock, moved)
        env["VENOM_MEM_SOCKET"] = str(moved)
        add = m.cli("memory", "add", "--space", "user", "--content", "secret", "--json", env=env)
        assert_refused(add, moved)
        assert "runs as uid 65534" in json_error(add)["message"]

        async def scenario() -> None:
            refusal = await initialize_refusal(env, m.root, exact=True)
            assert "failed.socket" in refusal
            no_token = {k: v for k, v in env.items() if k != "VENOM_MEM_TOKEN"}
            async with mcp_session(no_token, m.root, exact=True) as session:
                result = await call(session, "memory_dsearch", query="secret")
                assert error_of(result)["code"] == "failed.socket"

        run(scenario)
        assert logged(log) == b""


def test_a_planted_runtime_directory_gets_no_byte(shared_machine: Machine) -> None:
    m = shared_machine
    shared = m.root / "shared-run"  # a runtime base anyone may write, like /tmp
    shared.mkdir()
    os.chmod(shared, 0o1777)
    with fake_daemon(shared / "venom-mem") as (sock, log):
        env = {**m.terminal_env(FAKE_TOKEN), "XDG_RUNTIME_DIR": str(shared)}
        add = m.cli("memory", "add", "--space", "user", "--content", "secret", "--json", env=env)
        assert_refused(add, sock)
        ping = m.cli("ping", "--json", env=env)
        assert_refused(ping, sock)

        async def scenario() -> None:
            assert "failed.socket" in await initialize_refusal(env, m.root, exact=True)

        run(scenario)
        assert logged(log) == b""
    assert m.daemon_pids() == set()  # nothing was launched behind the refusal either


# -- a daemon that stops answering ----------------------------------------------------------


def test_a_stopped_daemon_gives_timeouts_then_recovers(machine: Machine) -> None:
    token = add_client(machine, "claude-code")

    def cli_timed(*args: str) -> tuple[Result, float]:
        began = time.monotonic()
        result = machine.cli(*args, "--json", env=machine.terminal_env(token))
        return result, time.monotonic() - began

    async def scenario() -> None:
        async with mcp_session(machine.codex_env(token), machine.root, exact=True) as held:
            ok(await call(held, "memory_dadd", space="user", content="Written before the stop."))
            [pid] = machine.daemon_pids()
            os.kill(pid, signal.SIGSTOP)
            try:
                ping, took = await anyio.to_thread.run_sync(lambda: cli_timed("ping"))
                assert ping.code == 6, ping
                assert json_error(ping)["code"] == "unavailable.daemon_timeout"
                assert f"kill -CONT {pid}" in json_error(ping)["data"]["fix"]
                assert took < 10
                search, took = await anyio.to_thread.run_sync(
                    lambda: cli_timed("memory", "search", "--query", "stop")
                )
                assert json_error(search)["code"] == "unavailable.daemon_timeout", search
                assert took < 15
                began = time.monotonic()
                result = await call(held, "memory_dsearch", query="stop")
                assert error_of(result)["code"] == "unavailable.daemon_timeout"
                assert time.monotonic() - began < 15
                began = time.monotonic()
                async with mcp_session(machine.codex_env(token), machine.root, exact=True) as new:
                    assert time.monotonic() - began < 8  # initialize doesn't wait it out
                    result = await call(new, "memory_dsearch", query="stop")
                    assert error_of(result)["code"] == "unavailable.daemon_timeout"
            finally:
                os.kill(pid, signal.SIGCONT)
            found = ok(await call(held, "memory_dsearch", query="stop"))
            assert len(found["results"]) == 1
        ping, _ = cli_timed("ping")
        assert ping.code == 0, ping
        assert ping.json["pid"] == pid

    run(scenario)


# -- the adapter says early when its token is bad --------------------------------------------


def test_a_malformed_token_fails_initialize_and_starts_nothing(machine: Machine) -> None:
    async def scenario() -> None:
        env = machine.codex_env("not-a-token")
        refusal = await initialize_refusal(env, machine.root, exact=True)
        assert "denied.token" in refusal

    run(scenario)
    assert machine.daemon_pids() == set()
    assert machine.record() is None


def test_a_refused_token_fails_initialize_when_a_daemon_serves(machine: Machine) -> None:
    add_client(machine, "claude-code")  # a daemon is running now

    async def scenario() -> None:
        env = machine.codex_env(FAKE_TOKEN)  # well-formed, but not a secret the store knows
        refusal = await initialize_refusal(env, machine.root, exact=True)
        assert "denied.token" in refusal

    run(scenario)


def test_a_good_token_starts_no_daemon_before_the_first_tool_call(machine: Machine) -> None:
    token = add_client(machine, "claude-code")
    machine.stop_daemons()

    async def scenario() -> None:
        async with mcp_session(machine.codex_env(token), machine.root, exact=True) as session:
            await session.list_tools()
            assert machine.daemon_pids() == set()
            ok(await call(session, "memory_dlist"))
            assert len(machine.daemon_pids()) == 1

    run(scenario)


# -- a catalog sized to the caller -----------------------------------------------------------


def test_each_principal_is_listed_only_the_tools_it_could_call(machine: Machine) -> None:
    token = add_client(machine, "claude-code")
    machine.stop_daemons()
    listed: dict[str, set[str]] = {}

    async def scenario() -> None:
        for who, secret in (("owner", "@owner"), ("client", token), ("unknown", None)):
            env = machine.codex_env(secret)
            async with mcp_session(env, machine.root, exact=True) as session:
                listed[who] = {tool.name for tool in (await session.list_tools()).tools}

    run(scenario)
    rights = {spec.name: spec.verb.right for spec in build_catalog(MANIFEST).values()}
    assert listed["owner"] == set(rights)
    assert {rights[name] for name in listed["client"]} == {None, "read", "write"}
    assert listed["client"] == {n for n, r in rights.items() if r in (None, "read", "write")}
    assert listed["unknown"] == {n for n, r in rights.items() if r in (None, "read")}
    for never in ("client_dadd", "grant_dissue", "config_dset", "memory_dpurge", "audit"):
        assert never not in listed["client"]
    assert "memory_dadd" in listed["client"]
    assert "memory_dadd" not in listed["unknown"]


def test_a_launch_that_meets_the_store_locked_waits_for_the_record(machine: Machine) -> None:
    """The daemon of another environment holds the store but has not written its record
    yet (it is still starting): the launch this caller makes fails with
    conflict.store_locked, and the caller waits for the record instead of failing."""
    add_client(machine, "claude-code")  # a daemon on the terminal's socket
    record_path = Path(f"{machine.store}.daemon")
    saved = record_path.read_text()
    record_path.unlink()  # as if that daemon had not written it yet

    def write_back_later() -> None:
        time.sleep(1.0)
        tmp = record_path.with_suffix(".tmp")
        tmp.write_text(saved)
        os.chmod(tmp, 0o600)
        os.replace(tmp, record_path)

    writer = threading.Thread(target=write_back_later)
    writer.start()
    began = time.monotonic()
    result = machine.cli("memory", "list", "--json", env=machine.codex_env())
    writer.join()
    assert result.code == 0, result
    assert time.monotonic() - began >= 1.0  # it waited for the record, then connected
    # The launch that lost the lock reported store_locked and is on its way out; on a
    # loaded machine it may take a moment to exit, but it must.
    settle = time.monotonic() + 10
    while len(machine.daemon_pids()) > 1 and time.monotonic() < settle:
        time.sleep(0.1)
    assert len(machine.daemon_pids()) == 1
    assert "store_locked" not in result.stdout + result.stderr
