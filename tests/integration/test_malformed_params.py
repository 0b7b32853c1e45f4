"""Malformed params reach a use case neither through a real daemon nor through LocalClient:
both answer the same ``invalid_params.*`` with ``data.param``, never a traceback, since
both check params against the manifest and then structure the verb's command with the one
converter (docs/adr/0029)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon_env import World
from venom_mem_adapters.client import Connection, connect
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.clock import SystemClock
from venom_mem_core.errors import VenomError
from venom_mem_core.local import LocalClient
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.principals import OWNER

TOO_BIG = "m" + "9" * 19  # above 2^63-1: no record can have it
BIG_SCOPE = f"memory:{TOO_BIG}"  # the selector's shape, so only its number is refused

MALFORMED: list[tuple[str, Any, str, str]] = [
    ("memory.add", {"space": "user"}, "missing", "content"),
    ("memory.add", {"space": "user", "content": "x", "colour": "red"}, "unknown", "colour"),
    ("memory.add", {"space": "user", "content": ["x"]}, "type", "content"),
    ("memory.add", {"space": "user", "content": "x", "tags": "a,b"}, "type", "tags"),
    ("memory.add", {"space": "user", "content": "x", "session": "m3"}, "type", "session"),
    ("memory.add", {"space": "User Space", "content": "x"}, "space", "space"),
    ("memory.get", {"id": "12"}, "type", "id"),
    ("memory.get", {"id": TOO_BIG}, "type", "id"),
    ("memory.get", {"id": "m1", "revision": True}, "type", "revision"),
    ("memory.get", {"id": "m1", "revision": "2"}, "type", "revision"),
    ("memory.update", {"id": "m1", "revision": 1}, "missing", "content"),
    ("memory.list", {"after": "s1"}, "type", "after"),
    ("memory.list", {"limit": 0}, "range", "limit"),
    ("memory.context", {"spaces": "user"}, "type", "spaces"),
    ("session.list", {"parent": "s0"}, "type", "parent"),
    ("session.start", {"harness": "codex", "relation": "fork"}, "relation", "relation"),
    ("grant.issue", {"grants": [{"right": "read"}]}, "missing", "grants"),
    ("grant.issue", {"grants": [{"right": "read", "scope": "*", "x": 1}]}, "unknown", "grants"),
    ("grant.issue", {"grants": [{"right": "read", "scope": BIG_SCOPE}]}, "grant_scope", "grants"),
    ("grant.revoke", {"principal": "s1"}, "type", "principal"),
    ("whoami", {"who": "me"}, "unknown", "who"),
]


@pytest.fixture
def daemon(world: World) -> Iterator[Connection]:
    world.write_config(".{ .daemon = .{ .idle_timeout_ms = 60000 } }")
    with connect(world.environ("@owner")) as conn:
        yield conn


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalClient]:
    home = tmp_path / "store"
    home.mkdir(mode=0o700)
    store = SqliteStore.open(home / "store.db")
    try:
        yield LocalClient(App(store=store, clock=SystemClock()), OWNER)
    finally:
        store.close()


def _refusal(call: Any, verb: str, params: Any) -> tuple[str, Any]:
    with pytest.raises(VenomError) as raised:
        call(verb, params)
    assert "Traceback" not in raised.value.message
    return raised.value.code, raised.value.data.get("param")


def test_the_daemon_and_local_client_refuse_malformed_params_alike(
    daemon: Connection, local: LocalClient
) -> None:
    for verb, params, code, param in MALFORMED:
        expected = (f"invalid_params.{code}", param)
        assert _refusal(daemon.call, verb, params) == expected, (verb, params)
        assert _refusal(local.call, verb, params) == expected, (verb, params)
    # params that aren't an object: the socket client sends them as they are (its reply
    # budget reads wait_ms only from an object) and the daemon refuses them as LocalClient does
    for not_an_object in (["m1"], "m1", 7):
        expected = ("invalid_params.type", "params")
        assert _refusal(daemon.call, "memory.get", not_an_object) == expected, not_an_object
        assert _refusal(local.call, "memory.get", not_an_object) == expected, not_an_object
    # and both still serve: nothing above reached a use case
    assert daemon.call("memory.add", {"space": "user", "content": "x"})["id"] == "m1"
    assert local.call("memory.add", {"space": "user", "content": "x"})["id"] == "m1"
