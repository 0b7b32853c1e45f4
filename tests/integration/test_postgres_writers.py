"""Several writers on one daemon, on a PostgreSQL store (docs/adr/0031).

The store declares ``ConcurrentWrites``, so the daemon runs its writes on ``writers`` threads
at once. RFC-0020's promises hold there as they do across daemons: racing updates of one
revision give one winner, racing adds of one content one row; and what follows each commit
(its events) keeps the commits' order, even when the code between a commit and its event
is slow: the events of a chain of updates of one memory show its revisions in seq order;
and another daemon gets them, through the bridge, in that order.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import pytest

from tests.support.daemon_env import World, make_world
from tests.support.postgres_server import PostgresServer, postgres_server
from venom_mem_adapters.client import connect
from venom_mem_adapters.daemon.event_log import EventLog
from venom_mem_adapters.daemon.writer import WriterThread
from venom_mem_core.clock import SystemClock
from venom_mem_core.errors import VenomError
from venom_mem_core.ports import ConcurrentWrites
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.principals import OWNER
from venom_mem_core.usecases.verbs import call

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[dev]')")

from venom_mem_adapters.postgres import PostgresStore
from venom_mem_adapters.postgres.notify import EventBridge

__all__ = ["postgres_server"]  # the fixture, imported for pytest


@pytest.fixture
def pg(postgres_server: PostgresServer) -> Iterator[PostgresStore]:
    store = PostgresStore.open(postgres_server.fresh_url("writers"))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def daemon(postgres_server: PostgresServer) -> Iterator[World]:
    options = postgres_server.fresh_url("writers").split("&options=", 1)[1]
    with make_world() as world:
        world.env.update(postgres_server.environ)
        world.write_config(
            f'.{{ .store = .{{ .url = "postgresql:///postgres?options={options}" }} }}'
        )
        yield world


class SlowFollowers:
    """The daemon's event log, reached after a random pause: the code between a commit and
    its event made slow, so a writer that committed first is often the last to emit."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._random = random.Random(24)
        self._lock = threading.Lock()

    def emit(self, type: str, resource: str, data: dict[str, Any]) -> None:
        with self._lock:
            pause = self._random.uniform(0, 0.004)
        time.sleep(pause)
        self.log.emit(type, resource, data)


def test_the_store_declares_concurrent_writes(pg: PostgresStore) -> None:
    assert isinstance(pg, ConcurrentWrites)
    assert pg.writers > 1


def test_events_keep_commit_order_on_several_writers(pg: PostgresStore) -> None:
    """8 callers update one memory through the daemon's writer threads, each reading the
    current revision and retrying on a conflict: the log's memory.updated events, in seq
    order, show revisions 2, 3, 4, ... with none out of place, missing or twice."""
    log = EventLog(SystemClock())
    app = App(store=pg, clock=SystemClock(), events=SlowFollowers(log))
    added = call(app, OWNER, "memory.add", {"space": "user", "content": "base"})
    writer = WriterThread(pg.writers, pg.write_job)
    rounds, callers = 10, 8

    def update(n: int) -> str | None:
        """None when the update was made, else the error's code."""
        current = call(app, OWNER, "memory.get", {"id": added["id"]})["revision"]
        edit = {"id": added["id"], "revision": current, "content": f"edit {n}"}
        try:
            call(app, OWNER, "memory.update", edit)
        except VenomError as error:
            return error.code
        return None

    async def caller(number: int) -> None:
        done = 0
        while done < rounds:
            failed = await writer.run(functools.partial(update, number * 1000 + done))
            assert failed in (None, "conflict.memory_revision")
            if failed is None:
                done += 1

    async def race() -> None:
        async with anyio.create_task_group() as group:
            for number in range(callers):
                group.start_soon(caller, number)

    try:
        anyio.run(race)
    finally:
        writer.close()
    updated = [e for e in log.after(0) if e["type"] == "memory.updated"]
    assert [e["seq"] for e in updated] == sorted(e["seq"] for e in updated)
    assert [e["data"]["revision"] for e in updated] == list(range(2, 2 + rounds * callers))


def test_racing_updates_on_one_daemon_one_wins(daemon: World) -> None:
    added = daemon.ok("memory", "add", "--space", "user", "--content", "base", token="@owner")

    def update(n: int) -> Any:
        with connect(daemon.environ("@owner")) as conn:
            try:
                edit = {"id": added["id"], "revision": 1, "content": f"edit {n}"}
                return conn.call("memory.update", edit)
            except VenomError as error:
                return error

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(update, range(16)))
    winners = [r for r in results if isinstance(r, dict)]
    assert len(winners) == 1, results
    assert winners[0]["revision"] == 2
    losers = [r for r in results if isinstance(r, VenomError)]
    assert len(losers) == 15
    assert all(r.code == "conflict.memory_revision" and r.data == {"current": 2} for r in losers), (
        losers
    )
    history = daemon.ok("memory", "history", "--id", added["id"], token="@owner")["versions"]
    assert [v["revision"] for v in history] == [2, 1]


def test_racing_adds_on_one_daemon_make_one_row(daemon: World) -> None:
    daemon.ok("store", "status", token="@owner")

    def add(_: int) -> Any:
        with connect(daemon.environ("@owner")) as conn:
            return conn.call("memory.add", {"space": "user", "content": "same text"})

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(add, range(16)))
    assert sum(1 for r in results if r["changed"]) == 1, results
    assert {r["id"] for r in results} == {"m1"}
    assert len(daemon.ok("memory", "list", token="@owner")["memories"]) == 1


def test_another_daemon_relays_the_events_in_seq_order(
    pg: PostgresStore, postgres_server: PostgresServer
) -> None:
    """300 events appended at once on one daemon's log, from 4 threads, reach the other's
    log once each and in the first's seq order (the publisher sends them off the write path,
    several per statement)."""
    url = postgres_server.url(schema=pg.url.split("search_path%3D", 1)[1])
    one, other = EventLog(SystemClock()), EventLog(SystemClock())
    bridges = [EventBridge(url, one), EventBridge(url, other)]
    for bridge in bridges:
        bridge.start()
    try:

        def append(thread: int) -> None:
            for n in range(75):
                one.emit("memory.added", "space:user", {"memory": f"m{thread * 100 + n}"})

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(append, range(4)))
        sent = [e["data"]["memory"] for e in one.after(0)]
        deadline = time.monotonic() + 20
        while len(other.after(0)) < len(sent) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [e["data"]["memory"] for e in other.after(0)] == sent
    finally:
        for bridge in bridges:
            bridge.close()
