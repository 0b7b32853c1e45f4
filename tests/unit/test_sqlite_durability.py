"""What must hold on disk: purged text is gone from every file, and acknowledged writes
survive kill -9 (MEM-02)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import attrs
import pytest

from venom_mem_adapters.sqlite import SqliteStore, StoreLock, open_connection
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.records import Memory, Provenance, Version

OWNER = Provenance(principal="owner", label="owner")
TS = "2026-11-09T10:00:00.000Z"
MARKER = "qzxvmarker7731secret"


def memory(content: str, *, title: str = "", tags: tuple[str, ...] = ()) -> Memory:
    return Memory(
        id=0,
        space="user",
        kind="note",
        title=title,
        content=content,
        content_sha256=hashlib.sha256(content.encode()).digest(),
        tags=tags,
        author=OWNER,
        updated_by=OWNER,
        created=TS,
        updated=TS,
    )


def traces(path: Path) -> dict[str, list[bytes]]:
    """Files still holding the marker, or the tail FTS5 keeps after prefix compression."""
    needles = [MARKER.encode(), MARKER[-10:].encode()]
    found: dict[str, list[bytes]] = {}
    for name in (path, Path(f"{path}-wal")):
        if name.exists():
            data = name.read_bytes()
            hits = [n for n in needles if n in data]
            if hits:
                found[name.name] = hits
    return found


def fts_integrity_check(store: SqliteStore) -> None:
    """FTS5's own check that the index matches the content table (raises if not)."""
    with store.write() as tx:
        tx._run("INSERT INTO memory_fts (memory_fts, rank) VALUES ('integrity-check', 1)")


@pytest.mark.parametrize("checkpoint_first", [False, True], ids=["in-wal", "in-db-file"])
@pytest.mark.parametrize("soft_delete_first", [False, True], ids=["live", "tombstone"])
def test_purged_text_is_in_neither_the_database_nor_the_wal(
    tmp_path: Path, checkpoint_first: bool, soft_delete_first: bool
) -> None:
    path = tmp_path / "store" / "store.db"
    with SqliteStore.open(path) as store:
        with store.write() as tx:
            for n in range(30):
                tx.insert_memory(memory(f"neighbour note {n} about ordinary things " * 3))
            secret = memory(f"the password is {MARKER} ok", title=MARKER, tags=(MARKER,))
            mid = tx.insert_memory(secret)
            kept = Version(
                memory=mid,
                revision=1,
                action="add",
                kind="note",
                title=MARKER,
                content=secret.content,
                tags=(MARKER,),
                by=OWNER,
                ts=TS,
            )
            tx.insert_version(kept)
            for n in range(30):
                tx.insert_memory(memory(f"later note {n} about other things " * 3))
        if checkpoint_first:
            store.erase_traces()
        assert traces(path)  # the check can see the marker while it is stored
        if soft_delete_first:
            with store.write() as tx:
                tx.replace_memory(attrs.evolve(secret, id=mid, deleted=TS))
        with store.write() as tx:
            tx.delete_memory(mid)
        store.erase_traces()
        assert traces(path) == {}
        assert Path(f"{path}-wal").stat().st_size == 0
        with store.read() as tx:
            assert tx.get_memory(mid) is None
            everything = MemoryFilter(access=Access(everything=True))
            assert tx.rank_text([MARKER], everything, 10) == []
            assert tx.counts().memories == 60
        fts_integrity_check(store)
    assert traces(path) == {}


CHILD = textwrap.dedent(
    """
    import hashlib, sys
    from venom_mem_adapters.sqlite import SqliteStore, StoreLock
    from venom_mem_core.records import Memory, Provenance

    who = Provenance(principal="owner", label="owner")
    ts = "2026-11-09T10:00:00.000Z"
    path = sys.argv[1]
    with StoreLock(path), SqliteStore.open(path) as store:
        print("ready", flush=True)
        n = 0
        while True:
            text = f"memory number {n} " + "x" * (n % 500)
            m = Memory(
                id=0, space="user", kind="note", content=text,
                content_sha256=hashlib.sha256(text.encode()).digest(),
                author=who, updated_by=who, created=ts, updated=ts,
            )
            with store.write() as tx:
                mid = tx.insert_memory(m)
            print(mid, flush=True)  # acknowledged: the commit has returned
            n += 1
    """
)


def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "store" / "store.db"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    acknowledged: list[int] = []
    try:
        assert child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 10
        while len(acknowledged) < 300 and time.monotonic() < deadline:
            acknowledged.append(int(child.stdout.readline()))
        os.kill(child.pid, signal.SIGKILL)
        rest, _ = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    acknowledged += [int(line) for line in rest.split()]
    assert child.returncode == -signal.SIGKILL
    assert len(acknowledged) >= 300
    assert Path(f"{path}-wal").exists()  # it died with its WAL, not after a clean close

    with StoreLock(path), SqliteStore.open(path) as store:  # the kernel dropped the lock
        with store.read() as tx:
            for mid in acknowledged:
                got = tx.get_memory(mid)
                assert got is not None, f"acknowledged m{mid} was lost"
                assert got.content.startswith(f"memory number {mid - 1} ")
        fts_integrity_check(store)
    checker = open_connection(path, readonly=True)
    try:
        assert checker.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        checker.close()
