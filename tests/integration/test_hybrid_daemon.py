"""Hybrid search end to end: the real ``venom-mem`` daemon embedding through a real stub
HTTP server on loopback, searched with the real CLI (MEM-07 through the product)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.integration.test_hybrid_search import DIMS, M1, M2, M3, QUERY, section_5_stub
from tests.support.daemon_env import World
from tests.support.embed_stub import EmbedStub

KEY = "sk-daemon-test-key"


@pytest.fixture
def stub() -> Iterator[EmbedStub]:
    with section_5_stub() as s:
        yield s


def configure(world: World, stub: EmbedStub, model: str = "stub-model") -> None:
    world.write_config(
        ".{ .embeddings = .{ "
        f'.provider = "http", .base_url = "{stub.base_url}", .model = "{model}", '
        f'.dimensions = {DIMS}, .api_key = "{KEY}", .query_timeout_ms = 500 }} }}'
    )


def add(world: World, memory: dict[str, str]) -> str:
    args = [arg for key, value in memory.items() for arg in (f"--{key}", value)]
    return str(world.ok("memory", "add", *args, token="@owner")["id"])


def wait_ready(world: World, *ids: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = {world.ok("memory", "get", "--id", i)["embedding"] for i in ids}
        if states == {"ready"}:
            return
        time.sleep(0.1)
    pytest.fail(f"memories {ids} were not embedded in {timeout}s")


def test_section_5_fixture_through_the_daemon(world: World, stub: EmbedStub) -> None:
    configure(world, stub)
    m1, m2, m3 = add(world, M1), add(world, M2), add(world, M3)
    wait_ready(world, m1, m2, m3)
    # A default config is RFC-0020's fusion (docs/adr/0032): the fixture exactly, with or
    # without --fusion rrf; convex (docs/adr/0016) keeps the full-text winner first.
    result = world.ok("memory", "search", "--query", QUERY)
    assert result["mode"] == "hybrid"
    assert [(h["id"], h.get("fts_rank"), h.get("vector_rank")) for h in result["results"]] == [
        (m2, 1, 2),
        (m3, None, 1),
        (m1, 2, None),
    ]
    assert [h["score"] for h in result["results"]] == [1 / 61 + 1 / 62, 1 / 61, 1 / 62]
    assert world.ok("memory", "search", "--query", QUERY, "--fusion", "rrf") == result
    convex = world.ok("memory", "search", "--query", QUERY, "--fusion", "convex")
    assert convex["mode"] == "hybrid"
    assert convex["results"][0]["id"] == m2
    assert convex["results"][0]["score"] == 0.8
    assert {h["id"] for h in convex["results"]} == {m1, m2, m3}
    fts = world.ok("memory", "search", "--query", QUERY, "--mode", "fts")
    assert fts["mode"] == "fts"
    assert [h["id"] for h in fts["results"]] == [m2, m1]
    status = world.ok("store", "status")
    assert status["embeddings"] == "stub-model"
    assert status["vectors"] == 3
    assert status["pending"] == 0
    checks = {c["id"]: c for c in world.ok("doctor")["checks"]}
    assert checks["embeddings.provider"]["status"] == "ok"
    assert "stub-model" in checks["embeddings.provider"]["message"]
    assert checks["embeddings.remote"]["status"] == "ok"
    # The key is sent to the configured endpoint and nowhere shown.
    auth = {h for r in stub.recorded() for h in r.header("Authorization")}
    assert auth == {f"Bearer {KEY}"}
    assert KEY not in world.run("config", "get", "--json", token="@owner").stdout


def test_a_failing_provider_falls_back_and_writes_never_wait(world: World, stub: EmbedStub) -> None:
    configure(world, stub)
    m2 = add(world, M2)
    wait_ready(world, m2)
    stub.mode = "fail"
    result = world.ok("memory", "search", "--query", QUERY)
    assert result["mode"] == "fts"
    assert result["fallback"] == "embedding_unavailable"
    vector = world.run("memory", "search", "--query", QUERY, "--mode", "vector", "--json")
    assert vector.code == 6
    assert vector.json["error"]["code"] == "unavailable.embeddings"
    stub.mode = "hang"
    started = time.monotonic()
    m3 = add(world, M3)
    assert time.monotonic() - started < 2.0, "memory.add must not wait on the provider"
    assert world.ok("memory", "get", "--id", m3)["embedding"] == "pending"
    hung = world.ok("memory", "search", "--query", QUERY)
    assert hung["fallback"] == "embedding_unavailable"
    stub.release()
    stub.mode = "ok"


def test_vector_mode_with_embeddings_off_is_unsupported(world: World) -> None:
    result = world.run("memory", "search", "--query", "x", "--mode", "vector", "--json")
    assert result.code == 10
    assert result.json["error"]["code"] == "unsupported.embeddings_off"
    assert world.ok("memory", "search", "--query", "x")["mode"] == "fts"


def test_a_plain_http_remote_base_url_stops_serve(world: World) -> None:
    world.write_config(
        '.{ .embeddings = .{ .provider = "http", .base_url = "http://10.0.0.1/v1", '
        '.model = "m", .dimensions = 3 } }'
    )
    result = world.run("memory", "list", "--json")
    assert result.code == 2
    assert result.json["error"]["code"] == "invalid_params.embeddings_url"
    assert world.daemon_pid() is None


def test_searches_waiting_on_a_hung_provider_hold_no_reader(world: World, stub: EmbedStub) -> None:
    """The daemon embeds a search's query before the search takes one of its READERS: more
    searches than readers stuck on the provider leave reads answering at once."""
    from concurrent.futures import ThreadPoolExecutor

    from venom_mem_adapters.client import connect
    from venom_mem_adapters.daemon.server import READERS

    world.write_config(
        ".{ .embeddings = .{ "
        f'.provider = "http", .base_url = "{stub.base_url}", .model = "stub-model", '
        f".dimensions = {DIMS}, .query_timeout_ms = 4000 }} }}"
    )
    m2 = add(world, M2)
    wait_ready(world, m2)
    stub.mode = "hang"
    env = world.environ("@owner")
    before = len(stub.recorded())

    def search() -> dict[str, object]:
        with connect(env) as conn:
            return dict(conn.call("memory.search", {"query": QUERY}))

    with ThreadPoolExecutor(READERS + 2) as pool:
        searches = [pool.submit(search) for _ in range(READERS + 2)]
        deadline = time.monotonic() + 2  # well within query_timeout_ms
        while len(stub.recorded()) - before < READERS + 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        waiting = len(stub.recorded()) - before  # searches now waiting on the provider
        with connect(env) as conn:
            started = time.monotonic()
            got = conn.call("memory.get", {"id": m2})
            took = time.monotonic() - started
        stub.release()
        stub.mode = "ok"
        results = [s.result(timeout=10) for s in searches]
    assert waiting == READERS + 2
    assert got["id"] == m2
    assert took < 1.0, f"memory.get waited {took:.2f}s behind searches stuck on the provider"
    assert {r["mode"] for r in results} == {"hybrid"}  # released in time: embedded after all
