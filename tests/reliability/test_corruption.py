"""Corruption at rest, met by the real daemon (on-demand launches of ``venom-mem serve`` by
the CLI, and ``venom-mem serve`` in the foreground).

- Flipped bytes in a page (the b-tree header of the memories table's root page): found by
  the first statement that reads the page. The request gets ``failed.store`` with the path,
  writes stop until a restart, the daemon keeps serving what it can read.
- Flipped bytes in the database header, and a file of random bytes at the store path: found
  at serve, before the socket exists. Every CLI call gets ``failed.store`` with the path
  (relayed by the launcher), ``serve`` exits 1 saying so, and ``doctor`` says to run serve.
- A truncated ``-wal``: what a crash in the middle of an append leaves. SQLite keeps every
  commit whose frames are intact; there is no error to report, and nothing can tell the cut
  commits from an unfinished append, so the test pins what does hold: the intact prefix is
  served, integrity_check passes, nothing fails.

In every case the daemon never deletes, moves, rewrites or "repairs" the files: each file's
inode, size and SHA-256 are the same after the daemon met them (after it stopped, for the
corrupt ones; while it serves, for the truncated WAL, whose intact prefix SQLite's ordinary
checkpoint folds in at a clean stop, as after any crash).
"""

from __future__ import annotations

import os
import random
import signal
import struct
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from tests.reliability.support import file_facts, record
from tests.support.daemon_env import Result, World, make_world, wait_gone

SEED = 20261109
MEMORIES = 6
# Files a daemon may create or remove beside the store while it runs normally.
SIDECARS = {"store.db-wal", "store.db-shm", "store.db.lock", "store.db.audit.jsonl"}


@pytest.fixture
def world() -> Iterator[World]:
    with make_world() as w:
        w.write_config(".{ .daemon = .{ .idle_timeout_ms = 60000 } }")
        yield w


def fill(world: World, count: int = MEMORIES, prefix: str = "corruption fixture") -> list[str]:
    return [
        world.ok("memory", "add", "--space", "user", "--content", f"{prefix} {n}", token="@owner")[
            "id"
        ]
        for n in range(count)
    ]


def layout(path: Path) -> tuple[int, dict[str, int]]:
    """Page size and each table's root page, read without creating or changing a file."""
    connection = apsw.Connection(
        f"file:{path}?immutable=1", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    try:
        page_size = int(connection.pragma("page_size"))
        rows = connection.execute("SELECT name, rootpage FROM sqlite_schema").fetchall()
    finally:
        connection.close()
    return page_size, {str(name): int(str(root)) for name, root in rows if root}


def flip_page(path: Path) -> str:
    page_size, roots = layout(path)
    offset = (roots["memories"] - 1) * page_size
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF  # the page type byte: no b-tree page has this type
    data[offset + 3] ^= 0xFF  # and the cell count
    path.write_bytes(bytes(data))
    return f"page {roots['memories']} (memories root), bytes {offset} and {offset + 3}"


def flip_header(path: Path) -> str:
    data = bytearray(path.read_bytes())
    for i in range(16):  # "SQLite format 3\0"
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    return "bytes 0-15 (the file format string)"


def garbage(path: Path) -> str:
    size = path.stat().st_size
    path.write_bytes(random.Random(SEED).randbytes(size))
    return f"{size} random bytes"


def expect_failed_store(result: Result, store: Path) -> dict[str, object]:
    assert result.code == 1, result
    error = result.json["error"]
    assert error["code"] == "failed.store", error
    assert error["data"]["path"] == str(store), error
    assert str(store) in error["message"]
    return dict(error)


def files(directory: Path) -> dict[str, tuple[int, int, str] | None]:
    return {p.name: file_facts(p) for p in sorted(directory.iterdir())}


def assert_untouched(before: dict[str, tuple[int, int, str] | None], directory: Path) -> None:
    after = files(directory)
    assert after["store.db"] == before["store.db"], "the store file was changed"
    assert set(after) - set(before) <= SIDECARS, f"new files: {set(after) - set(before)}"
    assert set(before) - set(after) <= SIDECARS - {"store.db"}, "a file went missing"


def test_a_flipped_page_is_failed_store_on_first_use_and_never_repaired(world: World) -> None:
    fill(world)
    world.stop_daemon()
    store = world.store
    where = flip_page(store)
    before = files(store.parent)

    first = expect_failed_store(
        world.run("memory", "search", "--query", "fixture", "--json"), store
    )
    assert "malformed" in str(first["message"])
    expect_failed_store(
        world.run("memory", "add", "--space", "user", "--content", "new", "--json", token="@owner"),
        store,
    )
    latched = expect_failed_store(
        world.run(
            "memory", "add", "--space", "user", "--content", "newer", "--json", token="@owner"
        ),
        store,
    )
    assert "writes are stopped" in str(latched["message"])
    assert world.ok("session", "list")["sessions"] == []  # what it can read, it serves
    assert world.ok("ping")["pong"] is True
    world.stop_daemon()
    assert_untouched(before, store.parent)
    record(
        "reliability",
        "corruption_flipped_page",
        cases=1,
        corrupted=where,
        failed_store_answers=3,
        file_unchanged=1,
    )


def test_doctor_says_what_to_do_about_a_corrupt_page(world: World) -> None:
    fill(world)
    world.stop_daemon()
    flip_page(world.store)
    world.run("memory", "search", "--query", "fixture", "--json")  # meets the corruption
    report = world.run("doctor", "--json").json
    failing = [c for c in report["checks"] if c["status"] == "fail"]
    assert report["status"] == 2
    assert any(str(world.store) in c["message"] and c["fix"] for c in failing), report


@pytest.mark.parametrize("corrupt", [flip_header, garbage], ids=["flipped-header", "garbage"])
def test_a_store_that_is_not_a_database_is_refused_at_serve_and_left_alone(
    world: World, corrupt: Callable[[Path], str]
) -> None:
    fill(world)
    world.stop_daemon()
    store = world.store
    corrupt(store)
    before = files(store.parent)

    for args in (
        ("memory", "search", "--query", "fixture"),
        ("memory", "add", "--space", "user", "--content", "new"),
        ("whoami",),
    ):
        expect_failed_store(world.run(*args, "--json", token="@owner"), store)
    assert world.daemon_pid() is None  # it stopped at serve: nothing listens

    served = world.run("serve", timeout=30)
    assert served.code == 1, served
    assert f"error: failed.store: {store}" in served.stderr

    doctor = world.run("doctor", "--json")
    assert doctor.code == 6
    assert doctor.json["error"]["code"] == "unavailable.not_running"
    assert doctor.json["error"]["data"]["fix"] == "venom-mem serve"  # which names the file
    assert_untouched(before, store.parent)
    record(
        "reliability",
        "corruption_not_a_database",
        cases=1,
        failed_store_answers=4,
        file_unchanged=1,
    )


def wal_commits(wal: Path) -> list[int]:
    """The end offset of each commit frame in a WAL (frame header bytes 4-8 nonzero)."""
    data = wal.read_bytes()
    page_size = struct.unpack(">I", data[8:12])[0]
    ends, offset = [], 32
    while offset + 24 + page_size <= len(data):
        if struct.unpack(">I", data[offset + 4 : offset + 8])[0]:
            ends.append(offset + 24 + page_size)
        offset += 24 + page_size
    return ends


def test_a_truncated_wal_serves_its_intact_prefix_and_is_not_touched(world: World) -> None:
    base = fill(world, prefix="checkpointed")
    world.stop_daemon()  # a clean stop: everything is in the database file, the WAL is gone
    in_wal = fill(world, prefix="in the wal")
    pid = world.daemon_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # a crash: the last commits live only in the WAL
    assert wait_gone(pid, 10)
    store = world.store
    wal = Path(f"{store}-wal")
    commits = wal_commits(wal)
    assert len(commits) >= len(in_wal)
    cut = commits[-1] - 100  # inside the last commit's frame
    with wal.open("r+b") as handle:
        handle.truncate(cut)
    before = files(store.parent)

    listed = world.ok("memory", "list", "--limit", "200")["memories"]
    ids = {m["id"] for m in listed}
    survivors = base + in_wal[: len(in_wal) - 1]
    assert ids == set(survivors), "the intact prefix is served, the cut commit is gone"
    assert world.ok("memory", "get", "--id", in_wal[-2])["content"] == "in the wal 4"
    during = files(store.parent)
    assert during["store.db"] == before["store.db"]
    assert during["store.db-wal"] == before["store.db-wal"]

    pid = world.daemon_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    checker = apsw.Connection(str(store), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert checker.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        checker.close()
    record(
        "reliability",
        "corruption_truncated_wal",
        cases=1,
        wal_commits=len(commits),
        bytes_cut=commits[-1] - cut,
        commits_served=len(survivors),
        files_unchanged=1,
    )
