"""MEM-09 and MEM-10 through real processes: durable clients across restarts, and the
on-demand daemon's start, race, idle exit and launcher rules."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.daemon_env import VENOM_MEM, World, pid_alive, wait_gone
from venom_mem_adapters.client import connect


def test_token_survives_restart_and_removal_survives_restart(world: World) -> None:
    token = world.add_client("claude-code")
    assert world.ok("whoami", token=token)["principal"] == "g1"
    assert world.ok("memory", "add", "--space", "user", "--content", "one", token=token)["id"]
    world.stop_daemon()
    assert world.daemon_pid() is None
    # A new daemon, the same token.
    assert world.ok("whoami", token=token) == {
        "principal": "g1",
        "label": "claude-code",
        "grants": [{"right": "read", "scope": "*"}, {"right": "write", "scope": "*"}],
    }
    removed = world.ok("client", "remove", "--name", "claude-code", token="@owner")
    assert removed == {"client": "claude-code", "principal": "g1"}
    refused = world.run("whoami", "--json", token=token)
    assert refused.code == 4
    assert refused.json["error"]["code"] == "denied.token"
    assert refused.json["error"]["data"]["reason"] == "revoked"
    world.stop_daemon()
    again = world.run("memory", "list", "--json", token=token)
    assert again.code == 4
    assert again.json["error"]["data"]["reason"] == "revoked"
    # The memory it wrote stays, with its provenance.
    listed = world.ok("memory", "list")["memories"]
    assert [m["author"] for m in listed] == [{"principal": "g1", "label": "claude-code"}]
    # A new client never reuses g1.
    assert (
        world.ok("client", "add", "--name", "codex", "--grants", "[]", token="@owner")["principal"]
        == "g2"
    )


def test_clients_cannot_mint_clients_or_hold_spawn(world: World) -> None:
    token = world.add_client("claude-code")
    denied = world.run(
        "client", "add", "--name", "evil", "--grants", '[{"right":"read","scope":"*"}]', "--json",
        token=token,
    )  # fmt: skip
    assert denied.code == 4
    assert denied.json["error"]["code"] == "denied.admin"
    spawn = world.run(
        "client", "add", "--name", "spawner", "--grants", '[{"right":"spawn","scope":"*"}]',
        "--json", token="@owner",
    )  # fmt: skip
    assert spawn.code == 2
    assert spawn.json["error"]["code"] == "invalid_params.client_right"
    assert spawn.json["error"]["data"] == {"param": "grants"}
    listed = world.ok("client", "list", token="@owner")["clients"]
    assert [c["client"] for c in listed] == ["claude-code"]
    assert "token" not in listed[0]
    assert "token_hash" not in listed[0]


def test_garbage_token_is_invalid(world: World) -> None:
    bad = world.run("whoami", "--json", token="vnt1.venom-mem.g1." + "A" * 43)
    assert bad.code == 4
    assert bad.json["error"]["code"] == "denied.token"
    assert bad.json["error"]["data"]["reason"] == "invalid"


def test_racing_first_calls_make_one_daemon(world: World) -> None:
    world.write_config(".{ .daemon = .{ .idle_timeout_ms = 60000 } }")

    def first_call(_: int) -> tuple[int, str]:
        result = world.run("whoami", "--json")
        return result.code, result.stdout

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(first_call, range(8)))
    assert [code for code, _ in results] == [0] * 8, results
    pids = {world.daemon_pid() for _ in range(3)}
    assert len(pids) == 1
    assert None not in pids
    # Exactly one daemon process serves this socket.
    out = subprocess.run(["pgrep", "-f", "venom_mem_cli serve --on-demand"], capture_output=True,
                         text=True, check=False)  # fmt: skip
    ours = [int(p) for p in out.stdout.split() if _serves(int(p), world)]
    assert ours == [pids.pop()]


def _serves(pid: int, world: World) -> bool:
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"VENOM_MEM_SOCKET={world.socket}".encode() in env


def test_idle_exit_not_while_connected_and_restart_after(world: World) -> None:
    world.write_config(".{ .daemon = .{ .idle_timeout_ms = 1000 } }")
    conn = connect(world.environ())
    pid = world.daemon_pid()
    assert pid is not None
    time.sleep(2.5)
    assert pid_alive(pid), "the daemon must not idle out while a connection is open"
    assert conn.call("ping")["pid"] == pid
    conn.close()
    assert wait_gone(pid, 5), "the daemon should exit after the idle timer with no clients"
    assert not world.socket.exists()
    # The next call starts a new one.
    assert world.ok("whoami")["principal"] == "unknown"
    new_pid = world.daemon_pid()
    assert new_pid is not None
    assert new_pid != pid


def test_owner_below_a_manager_launches_nothing(world: World) -> None:
    for marker in ({"VENOM_MANAGER": "1"}, {"VENOM_MEM_PRINCIPAL": "g4"}, {"VENOM_MANAGER": ""}):
        result = world.run("memory", "list", "--json", token="@owner", env_extra=marker)
        assert result.code == 4
        assert result.json["error"]["code"] == "denied.startup_context"
    assert not world.socket.exists()
    assert world.daemon_pid() is None


def test_daemon_cwd_is_root_and_env_has_no_token(world: World, tmp_path: Path) -> None:
    token = world.add_client("claude-code")
    world.stop_daemon()
    assert world.ok("whoami", token=token, cwd=str(tmp_path))["label"] == "claude-code"
    pid = world.daemon_pid()
    assert pid is not None
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert b"VENOM_MEM_TOKEN" not in environ
    assert token.encode() not in environ
    # setsid: the daemon leads its own session.
    assert os.getsid(pid) == pid


def test_explicit_startup_does_not_launch(world: World) -> None:
    world.write_config('.{ .daemon = .{ .startup = "explicit" } }')
    result = world.run("memory", "list", "--json")
    assert result.code == 6
    assert result.json["error"]["code"] == "unavailable.not_running"
    assert result.json["error"]["data"]["fix"] == "venom-mem serve"
    assert world.daemon_pid() is None


def test_ping_and_doctor_never_launch(world: World) -> None:
    for args in (("ping",), ("grant", "list")):
        result = world.run(*args, "--json", token="@owner")
        assert result.code == 6, (args, result)
        assert result.json["error"]["code"] == "unavailable.not_running"
    assert not world.socket.exists()


def test_second_daemon_on_another_socket_is_refused(world: World) -> None:
    assert world.ok("whoami")["principal"] == "unknown"
    other = world.environ(VENOM_MEM_SOCKET=str(world.root / "run" / "other.sock"))
    proc = subprocess.run([VENOM_MEM, "serve"], env=other, capture_output=True, text=True,
                          timeout=20, check=False)  # fmt: skip
    assert proc.returncode == 5
    assert "conflict.store_locked" in proc.stderr


def test_sigterm_answers_the_requests_in_flight_and_the_next_call_starts_a_new_daemon(
    world: World,
) -> None:
    """RFC-0020 section 8 (RFC-0009 section 4's shutdown): a stopping daemon drops its socket
    at once, answers what is in flight (a write held up by an outside lock here) within the
    2000 ms deadline, and a call made meanwhile starts the next daemon instead of failing."""
    import apsw

    assert world.ok("whoami")["principal"] == "unknown"
    pid = world.daemon_pid()
    assert pid is not None
    outside = apsw.Connection(str(world.store))
    outside.execute("BEGIN IMMEDIATE")  # the daemon's next write waits on busy_timeout
    with ThreadPoolExecutor(2) as pool, connect(world.environ("@owner")) as held:
        pending = pool.submit(held.call, "memory.add", {"space": "user", "content": "in flight"})
        time.sleep(0.5)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while world.socket.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not world.socket.exists(), "the socket goes as soon as the daemon stops"
        later = pool.submit(world.ok, "whoami")
        time.sleep(0.5)
        outside.execute("ROLLBACK")
        outside.close()
        assert pending.result(timeout=10)["changed"] is True  # answered, not cut off
        assert later.result(timeout=15)["principal"] == "unknown"
    assert wait_gone(pid, 5)
    assert world.daemon_pid() not in (None, pid)
    assert world.ok("memory", "list", token="@owner")["memories"][0]["snippet"] == "in flight"


def test_calls_across_the_idle_boundary_never_fail(world: World) -> None:
    world.write_config(".{ .daemon = .{ .idle_timeout_ms = 1000 } }")
    pids = set()
    for n in range(8):
        with connect(world.environ()) as conn:
            pids.add(conn.call("ping")["pid"])
        time.sleep(0.97 + 0.01 * n)  # around the moment the daemon decides to stop
    assert len(pids) >= 2, "the daemon should have idled out and been started again"


def test_a_file_at_the_socket_path_is_refused_not_deleted(world: World) -> None:
    world.socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    world.socket.write_text("somebody's notes\n")
    result = world.run("whoami", "--json")
    assert result.code == 1
    assert result.json["error"]["code"] == "failed.socket"
    assert "not a socket" in result.json["error"]["message"]
    assert world.socket.read_text() == "somebody's notes\n"
    served = subprocess.run([VENOM_MEM, "serve"], env=world.env, capture_output=True, text=True,
                            timeout=20, check=False)  # fmt: skip
    assert served.returncode == 1
    assert served.stderr.startswith("error: failed.socket:")
    assert "Traceback" not in served.stderr


def test_a_too_long_or_relative_socket_path(world: World, tmp_path: Path) -> None:
    long = world.environ(VENOM_MEM_SOCKET=str(tmp_path / ("s" * 120)))
    result = subprocess.run([VENOM_MEM, "whoami", "--json"], env=long, capture_output=True,
                            text=True, timeout=20, check=False)  # fmt: skip
    assert result.returncode == 1
    assert '"failed.socket"' in result.stdout
    # A relative override names the same file for the caller and the daemon (which runs in /).
    relative = world.environ(VENOM_MEM_SOCKET="rel.sock")
    result = subprocess.run([VENOM_MEM, "ping", "--json"], env=relative, cwd=tmp_path,
                            capture_output=True, text=True, timeout=20, check=False)  # fmt: skip
    assert '"unavailable.not_running"' in result.stdout  # ping never launches
    result = subprocess.run([VENOM_MEM, "whoami", "--json"], env=relative, cwd=tmp_path,
                            capture_output=True, text=True, timeout=20, check=False)  # fmt: skip
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "rel.sock").exists()
    assert not Path("/rel.sock").exists()
    pid = subprocess.run([VENOM_MEM, "ping", "--json"], env=relative, cwd=tmp_path,
                         capture_output=True, text=True, timeout=20, check=True).stdout  # fmt: skip
    os.kill(int(json.loads(pid)["pid"]), signal.SIGTERM)


def test_a_lost_reply_is_startup_result_only_for_the_call_that_started_the_daemon(
    world: World,
) -> None:
    """RFC-0020 section 8, Lost replies: never resent; unavailable.startup_result when the
    caller was starting the daemon, the ordinary transport error otherwise."""
    import apsw

    from venom_mem_core.errors import VenomError

    world.store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for warm in (False, True):
        assert world.daemon_pid() is None
        conn = connect(world.environ("@owner"))
        if warm:
            conn.call("ping")  # answered: the next loss is not the starting call's
        outside = apsw.Connection(str(world.store))
        outside.execute("BEGIN IMMEDIATE")  # holds the add below until the daemon dies
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(conn.call, "memory.add", {"space": "user", "content": "x"})
            time.sleep(0.5)
            pid = world.daemon_pid()
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            try:
                pending.result(timeout=10)
            except VenomError as error:
                code = error.code
        outside.execute("ROLLBACK")
        outside.close()
        conn.close()
        assert wait_gone(pid, 5)
        assert code == ("unavailable.connection" if warm else "unavailable.startup_result")
