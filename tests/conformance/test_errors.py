"""RFC-0020 section 9's error table, code by code, with its exit code and ``data``, on every
store with a default config; CONTRACT section 2's generic parameter errors beside it.

A code raised at ``serve`` (the store's file, its lock, its schema, the config's URL) needs a
daemon, so the in-memory store, which none serves, checks only what its library path can
raise. Not here: ``failed.store_migration`` (a migration that fails; tests/reliability and
tests/integration/test_upgrade_from_v1.py break one) and ``unavailable.store_busy`` on
PostgreSQL (tests/integration/test_postgres_daemons.py).
"""

from __future__ import annotations

import time
from typing import Any

import apsw
import pytest

from tests.conformance.harness import Rfc
from venom_mem_core.config import Config
from venom_mem_core.errors import VenomError

GRANTS = '[{"right":"read","scope":"*"},{"right":"write","scope":"*"}]'


Data = dict[str, Any] | set[str]
Case = tuple[tuple[str, ...], str | None, str, int, Data]


def expect(rfc: Rfc, case: Case) -> None:
    """The call fails with ``code`` and ``exit_code``; ``data`` is the whole object, or (a
    set) the keys it must have."""
    argv, token, code, exit_code, data = case
    got_exit, error = rfc.error(*argv, token=token)
    assert (error["code"], got_exit) == (code, exit_code), (argv, error)
    if isinstance(data, set):
        assert data <= set(error["data"]), error
    else:
        assert error["data"] == data, error


def test_each_code_a_caller_can_meet(rfc: Rfc) -> None:
    g1 = str(rfc.ok("client", "add", "--name", "claude-code", "--grants", GRANTS,
                    token="@owner")["token"])  # fmt: skip
    rfc.ok("memory", "add", "--space", "user", "--content", "one", token=g1)
    rfc.ok("memory", "add", "--space", "user", "--content", "two", token=g1)
    rfc.ok("memory", "update", "--id", "m1", "--revision", "1", "--content", "uno", token=g1)
    rfc.ok("session", "start", "--harness", "codex", token=g1)
    cases: list[Case] = [
        (("memory", "add", "--space", "A", "--content", "x"), g1,
         "invalid_params.space", 2, {"param": "space"}),
        (("memory", "add", "--space", "user", "--content", "x", "--tags", '["A"]'), g1,
         "invalid_params.tag", 2, {"param"}),
        (("memory", "search", "--query", " "), None, "invalid_params.query", 2, {"param"}),
        (("session", "start", "--harness", "codex", "--parent", "s1", "--relation", "twin"),
         g1, "invalid_params.relation", 2, {"param"}),
        (("memory", "add", "--space", "user", "--content", "vnt1.venom-mem.g1." + "A" * 43),
         g1, "invalid_params.secret_content", 2, {"param": "content"}),
        (("client", "add", "--name", "x", "--grants", '[{"right":"admin","scope":"*"}]'),
         "@owner", "invalid_params.client_right", 2, {"param"}),
        (("memory", "get", "--id", "m9"), None, "not_found.memory", 3, {}),
        (("memory", "get", "--id", "m1", "--revision", "7"), None,
         "not_found.memory_revision", 3, {}),
        (("session", "get", "--session", "s9"), None, "not_found.session", 3, {}),
        (("client", "remove", "--name", "nobody"), "@owner", "not_found.client", 3, {}),
        (("memory", "update", "--id", "m1", "--revision", "1", "--content", "x"), g1,
         "conflict.memory_revision", 5, {"current": 2}),
        (("memory", "update", "--id", "m2", "--revision", "1", "--content", "uno"), g1,
         "conflict.memory_duplicate", 5, {"id": "m1"}),
        (("client", "add", "--name", "claude-code", "--grants", GRANTS), "@owner",
         "conflict.client_exists", 5, {}),
        (("memory", "search", "--query", "x", "--mode", "vector"), None,
         "unsupported.embeddings_off", 10, {}),
        # CONTRACT section 2: the generic parameter errors, data.param naming the parameter.
        (("memory", "add", "--space", "user"), g1, "invalid_params.missing", 2, {"param"}),
        (("memory", "search", "--query", "x", "--limit", "many"), None,
         "invalid_params.type", 2, {"param": "limit"}),
        (("memory", "search", "--query", "x", "--limit", "101"), None,
         "invalid_params.range", 2, {"param": "limit"}),
        (("memory", "add", "--space", "user", "--content", "x", "--author", "g9"), g1,
         "invalid_params.unknown", 2, {"param"}),
    ]  # fmt: skip
    for case in cases:
        expect(rfc, case)
    assert [m["id"] for m in rfc.ok("memory", "list")["memories"]] == ["m2", "m1"]


def test_a_remote_plain_http_url_is_refused(rfc: Rfc) -> None:
    bad = {"provider": "http", "base_url": "http://10.0.0.1/v1", "model": "m", "dimensions": 3}
    with pytest.raises(VenomError) as caught:
        Config.from_mapping({"embeddings": bad})
    assert caught.value.code == "invalid_params.embeddings_url"
    assert caught.value.exit_code == 2
    assert caught.value.data["param"] == "embeddings.base_url"
    if rfc.daemon is None:
        return  # no serve to stop
    rfc.embeddings_on("http://10.0.0.1/v1", "m", 3)
    code, error = rfc.error("memory", "list")
    assert (code, error["code"]) == (2, "invalid_params.embeddings_url")
    assert error["data"]["param"] == "embeddings.base_url"
    assert rfc.daemon.daemon_pid() is None


def test_a_second_daemon_on_the_store_is_store_locked(rfc: Rfc) -> None:
    world = rfc.daemon
    if world is None:
        pytest.skip("the in-memory store has no daemon, so no store lock")
    rfc.ok("memory", "list")  # the first daemon, on demand
    other = world.root / "run" / "other.sock"
    second = world.run("serve", VENOM_MEM_SOCKET=str(other))
    assert second.code == 5, second
    assert "conflict.store_locked" in second.stderr


def test_serve_refuses_a_store_it_cannot_use(rfc: Rfc) -> None:
    world = rfc.daemon
    if world is None or rfc.store != "sqlite":
        pytest.skip("a store file's schema and bytes: SQLite's")
    rfc.ok("memory", "list")
    world.stop_daemon()
    with apsw.Connection(str(world.store)) as db:
        db.pragma("user_version", 99)
    code, error = rfc.error("memory", "list")
    assert (code, error["code"]) == (10, "unsupported.store_schema")
    assert (error["data"]["found"], error["data"]["supported"]) == (99, 3)
    world.store.write_bytes(b"this is not a database " * 200)
    for sidecar in ("-wal", "-shm"):
        world.store.with_name(world.store.name + sidecar).unlink(missing_ok=True)
    code, error = rfc.error("memory", "list")
    assert (code, error["code"]) == (1, "failed.store")


def test_an_external_writer_makes_the_store_busy(rfc: Rfc) -> None:
    world = rfc.daemon
    if world is None or rfc.store != "sqlite":
        pytest.skip("an external writer on the file: SQLite's busy_timeout")
    rfc.ok("memory", "add", "--space", "user", "--content", "x", token="@owner")
    holder = apsw.Connection(str(world.store))
    try:
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        add = ("memory", "add", "--space", "user", "--content", "y")
        expect(rfc, (add, "@owner", "unavailable.store_busy", 6, set()))  # data.path: additive
        assert time.monotonic() - started >= 4.5  # busy_timeout = 5000
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rfc.ok("memory", "add", "--space", "user", "--content", "y", token="@owner")["changed"]
