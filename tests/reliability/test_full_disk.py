"""A full disk is not corruption (issue 13, item 3).

The store lives on a small tmpfs (the tests run as root and mount one; where mounting is
refused the test skips and says why; it is always unmounted). Through the real daemon:
writes until the disk is full get ``failed.store`` with ``data.reason = "disk_full"`` while
reads go on; once space is freed, writes resume within 5 s with no restart. Then a daemon
started on a full disk (after a clean stop removed the ``-shm`` file) serves reads, refuses
writes as disk full, and takes them again once there is room. Every acknowledged memory is
there at the end and the store passes its integrity checks.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.support import integrity_problems, record
from tests.support.daemon_env import World, make_world

OWNER = "@owner"
TMPFS_SIZE = "6m"
RESUME_WITHIN_S = 5.0


@pytest.fixture
def tmpfs() -> Iterator[Path]:
    mount_point = Path(tempfile.mkdtemp(prefix="vm-full-", dir="/tmp"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        mount_point.rmdir()
        reason = f"can't mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}"
        print(reason)
        pytest.skip(reason)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
        with contextlib.suppress(OSError):
            mount_point.rmdir()


def _fill(path: Path) -> int:
    """Write ``path`` until the disk is full; returns how many bytes went in."""
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        chunk = b"\0" * 4096
        while True:
            try:
                written += os.write(fd, chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                return written
    finally:
        os.close(fd)


def _add(world: World, n: int) -> tuple[int, dict[str, Any]]:
    result = world.run(
        "memory", "add", "--space", "disk", "--content", f"note {n} " + "words " * 200,
        "--json", token=OWNER,
    )  # fmt: skip
    return result.code, json.loads(result.stdout)


def _fill_until_writes_fail(
    world: World, filler: Path, acknowledged: dict[str, int]
) -> dict[str, Any]:
    _fill(filler)
    for n in range(len(acknowledged), len(acknowledged) + 2000):
        code, out = _add(world, n)
        if code == 0:  # room left in pages the store already had
            acknowledged[str(out["id"])] = n
            continue
        assert code == 1, out
        error: dict[str, Any] = out["error"]
        return error
    raise AssertionError("writes never failed on a full disk")


def _resume(world: World, filler: Path, acknowledged: dict[str, int]) -> float:
    filler.unlink()
    freed = time.monotonic()
    while True:
        code, out = _add(world, len(acknowledged))
        if code == 0:
            acknowledged[str(out["id"])] = len(acknowledged)
            return time.monotonic() - freed
        assert out["error"]["data"]["reason"] == "disk_full", out
        assert time.monotonic() - freed < RESUME_WITHIN_S, "writes did not resume"
        time.sleep(0.05)


def _check_disk_full_error(error: Any, store: Path) -> None:
    assert error["code"] == "failed.store", error
    assert error["data"]["reason"] == "disk_full", error
    assert error["data"]["path"] == str(store)
    assert "disk is full" in error["message"]
    assert "free space" in error["data"]["fix"]


def test_a_full_disk_stops_writes_only_until_there_is_room(tmpfs: Path) -> None:
    store = tmpfs / "store" / "store.db"
    filler = tmpfs / "filler"
    acknowledged: dict[str, int] = {}
    with make_world() as world:
        world.write_config(
            f'.{{ .store = .{{ .path = "{store}" }}, .daemon = .{{ .idle_timeout_ms = 600000 }} }}'
        )
        for n in range(5):
            code, out = _add(world, n)
            assert code == 0, out
            acknowledged[str(out["id"])] = n
        pid = world.daemon_pid()
        error = _fill_until_writes_fail(world, filler, acknowledged)
        _check_disk_full_error(error, store)
        code, again = _add(world, 10_000)  # refused at once, not retried against the disk
        assert code == 1
        _check_disk_full_error(again["error"], store)
        some = next(iter(acknowledged))
        assert world.ok("memory", "get", "--id", some, token=OWNER)["id"] == some  # reads go on
        assert world.ok("memory", "search", "--query", "note", token=OWNER)["results"]
        doctor = {c["id"]: c for c in world.run("doctor", "--json").json["checks"]}
        assert doctor["store.open"]["status"] == "warn"
        assert "full" in doctor["store.open"]["message"]
        resumed_after = _resume(world, filler, acknowledged)
        assert world.daemon_pid() == pid  # no restart

        # A daemon started on a full disk: a clean stop removed the -shm file.
        world.stop_daemon()
        assert not Path(f"{store}-shm").exists()
        _fill(filler)
        assert world.ok("memory", "get", "--id", some, token=OWNER)["id"] == some
        listed = world.ok("memory", "list", "--limit", "200", token=OWNER)["memories"]
        assert len(listed) == min(len(acknowledged), 200)
        code, out = _add(world, 20_000)
        assert code == 1, out
        _check_disk_full_error(out["error"], store)
        restarted_pid = world.daemon_pid()
        resumed_after_start = _resume(world, filler, acknowledged)
        assert world.daemon_pid() == restarted_pid
        for id_, n in acknowledged.items():
            got = world.ok("memory", "get", "--id", id_, token=OWNER)
            assert got["content"].startswith(f"note {n} ")
        world.stop_daemon()
    assert integrity_problems(store) == []
    record(
        "reliability",
        "full_disk",
        tmpfs=TMPFS_SIZE,
        acknowledged=len(acknowledged),
        writes_resumed_after_s=round(resumed_after, 2),
        started_on_a_full_disk_and_read=1,
        resumed_after_start_s=round(resumed_after_start, 2),
    )
    assert resumed_after < RESUME_WITHIN_S
