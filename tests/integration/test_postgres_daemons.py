"""Two machines, one team store: two real daemons, each on its own socket and data directory
(a "machine"), sharing one PostgreSQL database (docs/adr/0028).

MEM-04 across daemons: 16 racing processes split over both daemons give one update winner
(``conflict.memory_revision`` to the rest) and one row for racing adds (``changed: false`` to
the rest). Client tokens are read from the database: added through one daemon, a token works
on the other at once; removed through one, it is refused on the other at its next request,
on a new connection and on a held one. A grant.issue token is the one exception, by
RFC-0020's own rule: it lives and dies with the daemon that issued it. Sessions started at
once through both daemons get distinct IDs that are never given again. Section 1's
transcript runs with its two harnesses on the two daemons, and one daemon's events reach
the other's followers (LISTEN/NOTIFY).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.integration.test_cli_transcript import replay_section_1
from tests.support.daemon_env import World, make_world
from tests.support.postgres_server import PostgresServer, postgres_server
from venom_mem_adapters.client import connect
from venom_mem_core.errors import VenomError

__all__ = ["postgres_server"]  # the fixture, imported for pytest


@pytest.fixture
def machines(postgres_server: PostgresServer) -> Iterator[tuple[World, World]]:
    """Two worlds whose config names one database; the server is found through libpq's PG*
    variables, which the on-demand launcher forwards."""
    schema_url = postgres_server.fresh_url("team")
    options = schema_url.split("&options=", 1)[1]
    url = f"postgresql:///postgres?options={options}"
    with make_world() as a, make_world() as b:
        for world in (a, b):
            world.env.update(postgres_server.environ)
            world.write_config(f'.{{ .store = .{{ .url = "{url}" }} }}')
        yield a, b


def test_both_daemons_serve_one_store(machines: tuple[World, World]) -> None:
    a, b = machines
    token = a.add_client("claude-code")
    added = a.ok("memory", "add", "--space", "user", "--content", "shared text", token=token)
    assert added == {"id": "m1", "revision": 1, "changed": True}
    # A token added through one daemon works on the other at once.
    got = b.ok("memory", "get", "--id", "m1", token=token)
    assert got["content"] == "shared text"
    assert a.daemon_pid() != b.daemon_pid()
    assert a.socket != b.socket
    hits = b.ok("memory", "search", "--query", "shared", token=token)["results"]
    assert [h["id"] for h in hits] == ["m1"]


def test_section_1_with_the_two_harnesses_on_two_daemons(machines: tuple[World, World]) -> None:
    """RFC-0020 section 1's transcript: Claude Code's calls through one machine's daemon,
    Codex's and the unknown caller's through the other's, on one team store."""
    a, b = machines
    replay_section_1(a, b)
    assert a.daemon_pid() != b.daemon_pid()


def test_racing_updates_across_daemons_one_wins(machines: tuple[World, World]) -> None:
    a, b = machines
    token = a.add_client("claude-code")
    added = a.ok("memory", "add", "--space", "user", "--content", "base", token=token)
    b.ok("store", "status")  # both daemons up before the race (ping starts none)

    def update(n: int) -> tuple[int, Any]:
        world = (a, b)[n % 2]
        r = world.run("memory", "update", "--id", added["id"], "--revision", "1",
                      "--content", f"edit {n}", "--json", token=token)  # fmt: skip
        return r.code, r.json

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(update, range(16)))
    winners = [out for code, out in results if code == 0]
    assert len(winners) == 1, results
    assert winners[0]["revision"] == 2
    losers = [out for code, out in results if code != 0]
    assert len(losers) == 15
    assert all(
        code == 5 and out["error"]["code"] == "conflict.memory_revision"
        and out["error"]["data"] == {"current": 2}
        for code, out in results if code != 0
    )  # fmt: skip
    for world in (a, b):
        history = world.ok("memory", "history", "--id", added["id"], token=token)["versions"]
        assert [v["revision"] for v in history] == [2, 1]


def test_racing_adds_across_daemons_make_one_row(machines: tuple[World, World]) -> None:
    a, b = machines
    token = a.add_client("claude-code")
    b.ok("store", "status")

    def add(n: int) -> Any:
        world = (a, b)[n % 2]
        return world.ok("memory", "add", "--space", "user", "--content", "same text", token=token)

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(add, range(16)))
    assert sum(1 for r in results if r["changed"]) == 1, results
    assert {r["id"] for r in results} == {"m1"}
    assert all(r["revision"] == 1 for r in results)
    for world in (a, b):
        assert len(world.ok("memory", "list", token=token)["memories"]) == 1


def test_a_removed_client_is_refused_on_the_other_daemon(machines: tuple[World, World]) -> None:
    a, b = machines
    token = a.add_client("codex")
    with connect(b.environ(token)) as held:
        assert held.call("whoami", {})["principal"] == "g1"
        a.ok("client", "remove", "--name", "codex", token="@owner")
        # The held connection on the other daemon: refused at its next request.
        with pytest.raises(VenomError) as caught:
            held.call("memory.list", {})
        assert caught.value.code == "denied.token"
    # A new connection on the other daemon: refused at hello.
    refused = b.run("memory", "list", "--json", token=token)
    assert refused.code == 4, refused
    assert refused.json["error"]["code"] == "denied.token"
    assert refused.json["error"]["data"]["reason"] == "revoked"


def test_racing_session_starts_across_daemons_get_distinct_ids(
    machines: tuple[World, World],
) -> None:
    """16 processes start sessions at once through both daemons: 16 IDs, none lost, all
    distinct; 8 more starting one harness session get one ID; a purged ID is not given again."""
    a, b = machines
    token = a.add_client("claude-code")
    b.ok("store", "status")

    def start(n: int, harness_session: str) -> str:
        world = (a, b)[n % 2]
        started = world.ok("session", "start", "--harness", "claude-code",
                           "--harness-session", harness_session, token=token)  # fmt: skip
        return str(started["session"])

    with ThreadPoolExecutor(16) as pool:
        ids = list(pool.map(start, range(16), [f"h{n}" for n in range(16)]))
        same = list(pool.map(start, range(8), ["shared"] * 8))
    assert len(set(ids)) == 16, ids
    assert sorted(int(i[1:]) for i in ids + same[:1]) == list(range(1, 18))
    assert len(set(same)) == 1, same
    for world in (a, b):
        listed = world.ok("session", "list", "--limit", "100", token=token)["sessions"]
        assert {s["session"] for s in listed} == {*ids, same[0]}
    a.ok("session", "purge", "--session", "s17", token="@owner")
    # An identity column only goes up: the next session is s18 on either daemon, never s17.
    assert start(1, "after-purge") == "s18"
    assert start(0, "after-purge-2") == "s19"


def test_an_issued_grant_token_is_valid_only_on_its_daemon(machines: tuple[World, World]) -> None:
    """RFC-0020 section 4: a grant.issue token "dies with the daemon", so it lives in that
    daemon's memory alone; another daemon on the same database has never heard of it and
    refuses it as any token it doesn't know (docs/adr/0028)."""
    a, b = machines
    a.add_client("claude-code")
    b.ok("store", "status")
    issued = a.ok("grant", "issue", "--grants", '[{"right":"read","scope":"*"}]',
                  "--label", "ci", token="@owner")  # fmt: skip
    assert a.ok("whoami", token=issued["token"])["principal"] == issued["principal"]
    refused = b.run("memory", "list", "--json", token=issued["token"])
    assert refused.code == 4, refused
    assert refused.json["error"]["code"] == "denied.token"
    # B's registry hasn't reloaded since before g2 was drawn, so g2 is a number it never saw.
    assert refused.json["error"]["data"]["reason"] == "invalid"
    # B doesn't list it either; A still does, and the token still works on A.
    principals = {p["principal"] for p in b.ok("grant", "list", token="@owner")["principals"]}
    assert issued["principal"] not in principals
    principals = {p["principal"] for p in a.ok("grant", "list", token="@owner")["principals"]}
    assert issued["principal"] in principals
    assert a.ok("memory", "list", token=issued["token"]) == {"memories": [], "next": None}


def test_a_password_in_store_url_is_refused(machines: tuple[World, World]) -> None:
    a, _ = machines
    a.write_config('.{ .store = .{ .url = "postgresql://team:hunter2@db.example/mem" } }')
    result = a.run("memory", "list", "--json")
    assert result.code == 2, result
    error = result.json["error"]
    assert error["code"] == "invalid_params.store_url"
    assert "hunter2" not in result.stdout + result.stderr


def test_doctor_warns_about_purge_and_names_no_credentials(
    machines: tuple[World, World],
) -> None:
    a, _ = machines
    token = a.add_client("claude-code")
    a.ok("memory", "add", "--space", "user", "--content", "to purge", token=token)
    a.ok("memory", "purge", "--id", "m1", token="@owner")
    result = a.run("doctor", "--json", token="@owner")
    report = result.json
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["store.open"]["status"] == "ok", checks
    assert checks["store.schema"]["status"] == "ok"
    assert checks["store.postgres"]["status"] == "ok"
    assert checks["store.purge"]["status"] == "warn"
    assert "VACUUM" in checks["store.purge"]["message"]
    assert report["status"] == 1
    status = a.ok("store", "status", token="@owner")
    assert status["path"].startswith("postgresql:///postgres?options=")
    assert status["schema_version"] == 3
    # RFC-0020's field stays, and says none; the engine and its version are beside it, and
    # doctor names the same version.
    assert status["sqlite_version"] == "none"
    engine, version = status["engine"].split(" ")
    assert engine == "postgresql"
    assert int(version.split(".")[0]) >= 13
    assert checks["store.postgres"]["message"] == f"PostgreSQL {version}"
    gone = a.run("memory", "get", "--id", "m1", "--json", token=token)
    assert gone.json["error"]["code"] == "not_found.memory"


def test_events_of_one_daemon_reach_the_other(machines: tuple[World, World]) -> None:
    a, b = machines
    token = a.add_client("claude-code")
    with connect(b.environ("@owner")) as follower:
        cursor = follower.call("events", {"limit": 1000})["cursor"]
        a.ok("memory", "add", "--space", "user", "--content", "seen elsewhere", token=token)
        got = follower.call("events", {"after": cursor, "wait_ms": 5000})
        added = [e for e in got["events"] if e["type"] == "memory.added"]
        assert [e["data"]["memory"] for e in added] == ["m1"], got
        assert added[0]["source"] == got["cursor"].split(":")[0]  # the stream's own source
    # Each write is one event on every daemon's stream: relayed once, never echoed back.
    with connect(a.environ("@owner")) as on_a, connect(b.environ("@owner")) as on_b:
        cursors = [c.call("events", {"limit": 1000})["cursor"] for c in (on_a, on_b)]
        b.ok("memory", "add", "--space", "user", "--content", "written on b", token=token)
        for conn, cursor in zip((on_a, on_b), cursors, strict=True):
            conn.call("events", {"after": cursor, "wait_ms": 5000})
        time.sleep(0.5)  # room for a duplicate to arrive, if there were one
        for conn, cursor in zip((on_a, on_b), cursors, strict=True):
            got = conn.call("events", {"after": cursor, "limit": 1000})["events"]
            assert [e["data"]["memory"] for e in got if e["type"] == "memory.added"] == ["m2"]


def test_an_unreachable_server_is_failed_store_without_credentials() -> None:
    with make_world() as world:
        world.env.update(PGHOST=str(world.root / "no-server"), PGPORT="5432", PGUSER="ann")
        world.write_config('.{ .store = .{ .url = "postgresql://ann@/team?connect_timeout=2" } }')
        result = world.run("store", "status", "--json", token="@owner")
        assert result.code == 1, result
        error = result.json["error"]
        assert error["code"] == "failed.store", error
        assert "postgresql:///team?connect_timeout=2" in error["message"]
        assert "ann@" not in result.stdout
