"""MEM-02 and MEM-06 through the real CLI and daemon: the whole life of a memory, kill -9,
purge leaving no bytes behind, and grants that hold whatever the params say."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.support.daemon_env import World, wait_gone

MARKER = "purge-marker-7f3a9c2e-this-text-must-vanish"


def test_delete_restore_list_history_purge(world: World) -> None:
    token = world.add_client("claude-code")
    first = world.ok("memory", "add", "--space", "user", "--content", "first note", token=token)
    second = world.ok("memory", "add", "--space", "user", "--content", MARKER, token=token)
    assert [m["id"] for m in world.ok("memory", "list")["memories"]] == ["m2", "m1"]

    deleted = world.ok("memory", "delete", "--id", "m2", "--revision", "1", token=token)
    assert deleted["id"] == "m2"
    assert deleted["revision"] == 2
    gone = world.run("memory", "get", "--id", "m2", "--json")
    assert gone.code == 3
    assert gone.json["error"]["code"] == "not_found.memory"
    shown = world.ok("memory", "get", "--id", "m2", "--include-deleted")
    assert shown["deleted"] == deleted["deleted"]
    assert [m["id"] for m in world.ok("memory", "list")["memories"]] == ["m1"]
    with_deleted = world.ok("memory", "list", "--include-deleted=true")["memories"]
    assert [m["id"] for m in with_deleted] == ["m2", "m1"]
    assert world.ok("memory", "search", "--query", "purge marker")["results"] == []

    assert world.ok("memory", "restore", "--id", "m2", token=token) == {"id": "m2", "revision": 3}
    assert [h["id"] for h in world.ok("memory", "search", "--query", MARKER)["results"]] == ["m2"]
    actions = [v["action"] for v in world.ok("memory", "history", "--id", "m2")["versions"]]
    assert actions == ["restore", "delete", "add"]
    old = world.ok("memory", "get", "--id", "m2", "--revision", "1")
    assert old["revision"] == 1
    assert old["content"] == MARKER

    # purge is the human's: a client is refused, the owner erases it for good.
    refused = world.run("memory", "purge", "--id", "m2", "--json", token=token)
    assert refused.code == 4
    assert refused.json["error"]["code"] == "denied.admin"
    assert world.ok("memory", "purge", "--id", "m2", token="@owner") == {"id": "m2"}
    again = world.run("memory", "purge", "--id", "m2", "--json", token="@owner")
    assert again.code == 3
    assert again.json["error"]["code"] == "not_found.memory"
    history = world.run("memory", "history", "--id", "m2", "--json")
    assert history.code == 3
    for path in (world.store, world.store.with_name("store.db-wal")):
        if path.exists():
            assert MARKER.encode() not in path.read_bytes(), path
    # IDs are never reused after a purge.
    assert world.ok("memory", "add", "--space", "user", "--content", "third", token=token)[
        "id"
    ] == ("m3")
    assert first["id"] == "m1"
    assert second["id"] == "m2"


def test_write_on_one_space_is_refused_on_another(world: World) -> None:
    grants = '[{"right":"read","scope":"*"},{"right":"write","scope":"space:project/a"}]'
    token = world.add_client("narrow", grants)
    ok = world.ok("memory", "add", "--space", "project/a", "--content", "mine", token=token)
    assert ok["changed"] is True
    refused = world.run(
        "memory", "add", "--space", "project/b", "--content", "not mine", "--json", token=token
    )
    assert refused.code == 4
    assert refused.json["error"] == {
        "code": "denied.write",
        "message": "principal g1 lacks 'write' on space:project/b",
        "data": {
            "right": "write",
            "resource": "space:project/b",
            "principal": "g1",
            # A client token: its own grants, and what the owner would add (ADR 0014).
            "fix": "venom-mem whoami  # this token's grants; the owner can add a client with "
            "--grant write:space:project/b",
        },
    }
    other = world.ok("memory", "add", "--space", "project/b", "--content", "b's", token="@owner")
    update = world.run("memory", "update", "--id", other["id"], "--revision", "1",
                       "--content", "hijacked", "--json", token=token)  # fmt: skip
    assert update.code == 4
    assert update.json["error"]["code"] == "denied.write"
    assert world.ok("memory", "get", "--id", other["id"])["content"] == "b's"


def test_author_cannot_be_set_through_params(world: World) -> None:
    token = world.add_client("claude-code")
    world.ok("whoami", token=token)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(world.socket))
    reader = sock.makefile("rb")
    try:
        frames = [
            {"id": 1, "verb": "hello", "params": {"auth": {"token": token}}},
            {
                "id": 2,
                "verb": "memory.add",
                "params": {
                    "space": "user",
                    "content": "forged?",
                    "author": {"principal": "owner", "label": "owner"},
                },
            },
            {"id": 3, "verb": "memory.add", "params": {"space": "user", "content": "honest"}},
        ]
        for frame in frames:
            sock.sendall(json.dumps(frame).encode() + b"\n")
        replies = {r["id"]: r for r in (json.loads(reader.readline()) for _ in frames)}
    finally:
        reader.close()
        sock.close()
    assert replies[2]["error"]["code"] == "invalid_params.unknown"
    assert replies[2]["error"]["data"] == {"param": "author"}
    memories = world.ok("memory", "list")["memories"]
    assert [m["author"] for m in memories] == [{"principal": "g1", "label": "claude-code"}]


WRITER = """
import sys
from venom_mem_adapters.client import connect
with connect() as conn:
    for n in range(100000):
        out = conn.call("memory.add", {"space": "user", "content": f"acked {n}"})
        print(out["id"], flush=True)
"""


def test_kill_9_mid_stream_loses_no_acknowledged_add(world: World) -> None:
    token = world.add_client("claude-code")
    world.ok("whoami", token=token)
    pid = world.daemon_pid()
    assert pid is not None
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER],
        env=world.environ(token),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert writer.stdout is not None
    acked: list[str] = []
    deadline = time.monotonic() + 20
    while len(acked) < 300 and time.monotonic() < deadline:
        line = writer.stdout.readline()
        if not line:
            break
        acked.append(line.strip())
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    acked.extend(line.strip() for line in writer.stdout)  # replies already in flight
    writer.wait(10)
    writer.stdout.close()
    assert len(acked) >= 300
    # The next call starts a new daemon on the same store.
    stored: set[str] = set()
    after = None
    while True:
        args = ["memory", "list", "--limit", "200"] + (["--after", after] if after else [])
        page = world.ok(*args)
        stored.update(m["id"] for m in page["memories"])
        after = page["next"]
        if after is None:
            break
    assert set(acked) <= stored
    assert world.daemon_pid() not in (None, pid)


def test_serve_sweeps_tombstones_older_than_tombstone_days(world: World) -> None:
    """Tombstones and their versions go after memory.tombstone_days, at serve (RFC-0020
    section 2); a recent one stays. The old ones are made with a clock in 2020."""
    from datetime import UTC, datetime

    from venom_mem_adapters.sqlite import SqliteStore
    from venom_mem_core.clock import FixedClock
    from venom_mem_core.local import LocalClient
    from venom_mem_core.usecases.app import App
    from venom_mem_core.usecases.principals import OWNER

    world.store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = SqliteStore.open(world.store)
    try:
        old = App(store=store, clock=FixedClock(datetime(2020, 1, 1, tzinfo=UTC)))
        then = LocalClient(old, OWNER)
        gone = then.call("memory.add", {"space": "user", "content": "deleted long ago"})["id"]
        then.call("memory.delete", {"id": gone, "revision": 1})
        today = LocalClient(App(store=store, clock=FixedClock(datetime.now(UTC))), OWNER)
        kept = today.call("memory.add", {"space": "user", "content": "deleted today"})["id"]
        today.call("memory.delete", {"id": kept, "revision": 1})
    finally:
        store.close()
    swept = world.run("memory", "get", "--id", gone, "--include-deleted", "--json")
    assert swept.code == 3
    assert swept.json["error"]["code"] == "not_found.memory"
    assert world.run("memory", "history", "--id", gone, "--json").code == 3
    assert world.ok("memory", "get", "--id", kept, "--include-deleted")["deleted"]


def test_a_serving_daemon_sweeps_tombstones_on_its_timer(tmp_path: Path) -> None:
    """The daily re-sweep, with its interval shortened: it runs on the daemon's writer while
    the daemon serves, and removes only tombstones past memory.tombstone_days."""
    from datetime import UTC, datetime, timedelta

    import anyio

    from venom_mem_adapters.daemon.context import DaemonPaths
    from venom_mem_adapters.sqlite import SqliteStore
    from venom_mem_cli.bootstrap import build_daemon
    from venom_mem_core.clock import FixedClock
    from venom_mem_core.config import Config
    from venom_mem_core.errors import VenomError
    from venom_mem_core.local import LocalClient
    from venom_mem_core.usecases.principals import OWNER

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    store = SqliteStore.open(data / "store.db")
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    paths = DaemonPaths(socket=tmp_path / "d.sock", store=data / "store.db", config=tmp_path)
    daemon = build_daemon(store, Config(), paths, on_demand=False, clock=clock)
    me = LocalClient(daemon.app, OWNER)
    gone = me.call("memory.add", {"space": "user", "content": "deleted long ago"})["id"]
    me.call("memory.delete", {"id": gone, "revision": 1})
    clock.advance(timedelta(days=29))
    kept = me.call("memory.add", {"space": "user", "content": "deleted later"})["id"]
    me.call("memory.delete", {"id": kept, "revision": 1})

    def exists(id: str) -> bool:
        try:
            me.call("memory.get", {"id": id, "include_deleted": True})
        except VenomError as error:
            if error.code == "not_found.memory":
                return False
            raise
        return True

    async def serve_a_while() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(daemon.sweep_tombstones_every, 0.05)
            await anyio.sleep(0.3)
            assert exists(gone)  # 29 days after its delete: not yet
            clock.advance(timedelta(days=2))
            with anyio.fail_after(10):
                while exists(gone):
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()

    try:
        anyio.run(serve_a_while)
        assert exists(kept)
    finally:
        daemon.close()
        store.close()


def test_a_purge_whose_checkpoint_was_busy_is_erased_at_the_next_serve(world: World) -> None:
    """RFC-0020 section 2: purge answers unavailable.store_busy when a reader keeps the WAL
    frames alive; the memory is gone, and the checkpoint happens at the next serve, even
    after the daemon was killed."""
    import apsw

    world.ok("memory", "add", "--space", "user", "--content", MARKER, token="@owner")
    reader = apsw.Connection(str(world.store), flags=apsw.SQLITE_OPEN_READONLY)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchall()  # holds its snapshot
    busy = world.run("memory", "purge", "--id", "m1", "--json", token="@owner")
    assert busy.code == 6
    assert busy.json["error"]["code"] == "unavailable.store_busy"
    pid = world.daemon_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 5)
    reader.execute("COMMIT")
    reader.close()
    assert world.run("memory", "get", "--id", "m1", "--json").code == 3  # starts a new daemon
    wal = world.store.with_name("store.db-wal")
    for path in (world.store, wal):
        if path.exists():
            assert MARKER.encode() not in path.read_bytes(), path
