"""Hybrid search on a team store: two real daemons ("machines"), each with embeddings on
through one real stub provider, sharing one PostgreSQL database (docs/adr/0028).

Each daemon's vector index is its own; the other daemon's writes reach it through the relayed
events (LISTEN/NOTIFY): a memory added through A is found by hybrid search on B with a vector
rank; updated on A, B ranks it by the new text's vector; deleted on A, B no longer finds it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.integration.test_hybrid_daemon import KEY
from tests.integration.test_hybrid_search import DIMS, M1, M2, M3, QUERY, section_5_stub, text
from tests.support.daemon_env import World, make_world
from tests.support.embed_stub import EmbedStub
from tests.support.postgres_server import PostgresServer, postgres_server

__all__ = ["postgres_server"]  # the fixture, imported for pytest

TIMEOUT_S = 20.0


@pytest.fixture
def stub() -> Iterator[EmbedStub]:
    with section_5_stub() as s:
        yield s


@pytest.fixture
def machines(postgres_server: PostgresServer, stub: EmbedStub) -> Iterator[tuple[World, World]]:
    """Two worlds whose config names one database and one embeddings provider."""
    schema_url = postgres_server.fresh_url("vectors")
    options = schema_url.split("&options=", 1)[1]
    url = f"postgresql:///postgres?options={options}"
    with make_world() as a, make_world() as b:
        for world in (a, b):
            world.env.update(postgres_server.environ)
            world.write_config(
                f'.{{ .store = .{{ .url = "{url}" }}, .embeddings = .{{ .provider = "http", '
                f'.base_url = "{stub.base_url}", .model = "stub-model", .dimensions = {DIMS}, '
                f'.api_key = "{KEY}", .query_timeout_ms = 2000 }} }}'
            )
        yield a, b


def add(world: World, memory: dict[str, str]) -> str:
    args = [arg for key, value in memory.items() for arg in (f"--{key}", value)]
    return str(world.ok("memory", "add", *args, token="@owner")["id"])


def search(world: World) -> list[dict[str, Any]]:
    result = world.ok("memory", "search", "--query", QUERY, "--fusion", "rrf")
    assert result["mode"] == "hybrid", result
    hits: list[dict[str, Any]] = result["results"]
    return hits


def ranks(hits: list[dict[str, Any]]) -> list[tuple[str, int | None, int | None]]:
    return [(h["id"], h.get("fts_rank"), h.get("vector_rank")) for h in hits]


def eventually(check: Callable[[], Any], what: str) -> Any:
    """``check()`` once it is truthy; fails after TIMEOUT_S (the relay and the worker are
    asynchronous: the end state is asserted, not how soon it comes)."""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {TIMEOUT_S}s (last: {got!r})")
        time.sleep(0.1)


def test_another_daemons_memories_are_in_this_daemons_index(
    machines: tuple[World, World], stub: EmbedStub
) -> None:
    a, b = machines
    b.ok("store", "status")  # B is up (and listening) before A writes
    m1, m2, m3 = add(a, M1), add(a, M2), add(a, M3)

    def indexed(world: World) -> bool:
        return {world.ok("memory", "get", "--id", i)["embedding"] for i in (m1, m2, m3)} == {
            "ready"
        }

    for world in (a, b):  # each daemon's own index holds the three vectors
        eventually(functools.partial(indexed, world), f"{world.root.name} indexed m1-m3")
    # The section 5 fixture, searched on the daemon that wrote none of it.
    assert ranks(search(b)) == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]
    assert ranks(search(a)) == ranks(search(b))

    # Updated on A: B ranks m3 by the new text's vector, not the stale one.
    updated = {**M3, "content": "Upgrade the compiler toolchain slowly."}
    stub.set(text(updated), [0.6, 0.8, 0.0, 0.0])  # similarity 0.6, below m2's 0.707
    a.ok("memory", "update", "--id", m3, "--revision", "1", "--content", updated["content"],
         token="@owner")  # fmt: skip

    def m3_by_new_vector() -> bool:
        hits = {h["id"]: h for h in search(b)}
        return m3 in hits and hits[m3].get("similarity") == pytest.approx(0.6, abs=1e-6)

    eventually(m3_by_new_vector, "B ranks m3 by its new vector")
    assert ranks(search(b)) == [(m2, 1, 1), (m3, None, 2), (m1, 2, None)]
    assert b.ok("memory", "get", "--id", m3)["embedding"] == "ready"

    # Deleted on A: gone from B's hybrid results, and from its index.
    a.ok("memory", "delete", "--id", m2, "--revision", "1", token="@owner")
    eventually(lambda: m2 not in {h["id"] for h in search(b)}, "m2 gone from B's results")
    assert ranks(search(b)) == [(m3, None, 1), (m1, 1, None)]
    status = b.ok("store", "status")
    assert status["vectors"] == 2
    assert status["pending"] == 0


def test_doctor_counts_pending_memories_in_the_database(
    postgres_server: PostgresServer, stub: EmbedStub
) -> None:
    """RFC-0020 section 11's embeddings.pending on a team store: a memory pending since 2020
    warns once the provider fails, counted in PostgreSQL as on SQLite (doctor had no store
    count there and always said ok)."""
    from datetime import UTC, datetime

    from venom_mem_adapters.postgres import PostgresStore
    from venom_mem_core.clock import FixedClock
    from venom_mem_core.local import LocalClient
    from venom_mem_core.usecases.app import App
    from venom_mem_core.usecases.principals import OWNER

    schema_url = postgres_server.fresh_url("doctor")
    with PostgresStore.open(schema_url) as store:  # written with embeddings off, in 2020
        old = App(store=store, clock=FixedClock(datetime(2020, 1, 1, tzinfo=UTC)))
        LocalClient(old, OWNER).call("memory.add", {"space": "user", "content": "since 2020"})
    options = schema_url.split("&options=", 1)[1]
    stub.mode = "fail"
    with make_world() as world:
        world.env.update(postgres_server.environ)
        world.write_config(
            f'.{{ .store = .{{ .url = "postgresql:///postgres?options={options}" }}, '
            f'.embeddings = .{{ .provider = "http", .base_url = "{stub.base_url}", '
            f'.model = "stub-model", .dimensions = {DIMS}, .api_key = "{KEY}" }} }}'
        )

        world.ok("store", "status")  # starts the daemon (doctor only asks a running one)

        def checks() -> dict[str, dict[str, str]]:
            return {c["id"]: c for c in world.ok("doctor")["checks"]}

        eventually(lambda: checks()["embeddings.health"]["status"] == "warn", "provider failed")
        pending = checks()["embeddings.pending"]
    assert pending["status"] == "warn", pending
    assert pending["message"].startswith("1 memories"), pending
