"""MEM-04 through real processes: racing writers are totally ordered, and reads go on while
a write is held."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import apsw

from tests.support.daemon_env import World
from venom_mem_adapters.client import connect
from venom_mem_core.errors import VenomError


def test_racing_updates_one_wins(world: World) -> None:
    token = world.add_client("claude-code")
    added = world.ok("memory", "add", "--space", "user", "--content", "base", token=token)

    def update(n: int) -> tuple[int, dict[str, Any]]:
        r = world.run("memory", "update", "--id", added["id"], "--revision", "1",
                      "--content", f"edit {n}", "--json", token=token)  # fmt: skip
        return r.code, r.json

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(update, range(16)))
    winners = [out for code, out in results if code == 0]
    losers = [out for code, out in results if code != 0]
    assert len(winners) == 1
    assert winners[0]["revision"] == 2
    assert len(losers) == 15
    assert all(
        code == 5 and out["error"]["code"] == "conflict.memory_revision"
        and out["error"]["data"] == {"current": 2}
        for code, out in results if code != 0
    )  # fmt: skip
    history = world.ok("memory", "history", "--id", added["id"])["versions"]
    assert [v["revision"] for v in history] == [2, 1]


def test_racing_adds_make_one_row(world: World) -> None:
    token = world.add_client("claude-code")

    def add(_: int) -> dict[str, Any]:
        out: dict[str, Any] = world.ok(
            "memory", "add", "--space", "user", "--content", "same text", token=token
        )
        return out

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(add, range(16)))
    assert sum(1 for r in results if r["changed"]) == 1
    assert {r["id"] for r in results} == {"m1"}
    assert len(world.ok("memory", "list")["memories"]) == 1


def test_reads_answer_while_a_write_is_held(world: World) -> None:
    token = world.add_client("claude-code")
    world.ok("memory", "add", "--space", "user", "--content", "readable text", token=token)
    # An outside writer holds the write lock; the daemon's next write has to wait for it.
    outside = apsw.Connection(str(world.store))
    outside.execute("PRAGMA busy_timeout = 5000")
    outside.execute("BEGIN IMMEDIATE")
    writer_done = threading.Event()
    outcome: dict[str, object] = {}

    def write() -> None:
        with connect(world.environ(token)) as conn:
            try:
                outcome["ok"] = conn.call("memory.add", {"space": "user", "content": "held"})
            except VenomError as exc:
                outcome["error"] = exc.code
        writer_done.set()

    thread = threading.Thread(target=write)
    thread.start()
    time.sleep(0.3)
    assert not writer_done.is_set(), "the write should be waiting on the held lock"
    started = time.monotonic()
    with connect(world.environ()) as reader:
        hits = reader.call("memory.search", {"query": "readable"})["results"]
    elapsed = time.monotonic() - started
    assert [h["id"] for h in hits] == ["m1"]
    assert elapsed < 2.0, f"a read took {elapsed:.2f}s while a write was held"
    assert not writer_done.is_set()
    outside.execute("COMMIT")
    outside.close()
    thread.join(10)
    assert outcome == {"ok": {"id": "m2", "revision": 1, "changed": True}}
