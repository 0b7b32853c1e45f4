"""The wire protocol with a raw socket: framing, hello, bad input, and a daemon that keeps
serving everyone else whatever one connection sends."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any

import pytest

from tests.support.daemon_env import World


class Raw:
    def __init__(self, world: World) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(world.socket))
        self.file = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, obj: Any) -> None:
        self.send(json.dumps(obj).encode() + b"\n")

    def reply(self) -> Any:
        line = self.file.readline()
        return json.loads(line) if line else None

    def is_closed(self) -> bool:
        """The daemon closed its end: EOF, or a reset because our bytes were left unread."""
        try:
            return self.file.readline() == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@pytest.fixture
def started(world: World) -> World:
    world.write_config(".{ .daemon = .{ .idle_timeout_ms = 60000 } }")
    assert world.ok("whoami")["principal"] == "unknown"
    return world


def still_serving(world: World) -> None:
    raw = Raw(world)
    raw.request({"id": 1, "verb": "hello", "params": {}})
    assert raw.reply()["ok"]["principal"] == "unknown"
    raw.request({"id": 2, "verb": "ping", "params": {}})
    assert raw.reply()["ok"]["pong"] is True
    raw.close()


def test_hello_then_verbs(started: World) -> None:
    raw = Raw(started)
    raw.request({"id": 1, "verb": "memory.list", "params": {}})
    assert raw.reply()["error"]["code"] == "denied.hello"
    raw.request({"id": 1, "verb": "hello"})  # no params, as any verb may: unknown
    assert raw.reply()["ok"]["principal"] == "unknown"
    raw.close()
    raw = Raw(started)
    raw.request({"id": 1, "verb": "hello", "params": {"client": "test"}})
    ok = raw.reply()
    assert ok["id"] == 1
    assert set(ok["ok"]) == {"principal", "server", "version", "source"}
    assert ok["ok"]["server"] == "venom-mem"
    raw.request({"id": 2, "verb": "memory.add", "params": {"space": "user", "content": "x"}})
    assert raw.reply()["error"]["code"] == "denied.write"
    raw.close()


def test_a_second_hello_is_refused_and_closes_the_connection(started: World) -> None:
    raw = Raw(started)
    raw.request({"id": 1, "verb": "hello", "params": {}})
    assert raw.reply()["ok"]["principal"] == "unknown"
    raw.request({"id": 2, "verb": "hello", "params": {"auth": {"token": "@owner"}}})
    reply = raw.reply()
    assert reply["id"] == 2
    assert reply["error"]["code"] == "denied.hello"
    assert "already" in reply["error"]["message"]
    assert raw.is_closed()
    raw.close()
    still_serving(started)


@pytest.mark.parametrize("frame", [b"[1, 2]\n", b'"hello"\n', b"42\n", b"null\n"])
def test_a_frame_that_is_not_an_object_closes_the_connection(started: World, frame: bytes) -> None:
    raw = Raw(started)
    raw.request({"id": 1, "verb": "hello", "params": {}})
    raw.reply()
    raw.send(frame)
    reply = raw.reply()
    assert reply["id"] is None
    assert reply["error"]["code"] == "invalid_params.frame"
    assert raw.is_closed()
    raw.close()
    still_serving(started)


def test_pipelined_requests_keep_their_ids(started: World) -> None:
    raw = Raw(started)
    frames = [{"id": 1, "verb": "hello", "params": {}}]
    frames += [{"id": f"r{n}", "verb": "ping", "params": {}} for n in range(50)]
    raw.send(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
    replies = [raw.reply() for _ in frames]
    assert {r["id"] for r in replies} == {1} | {f"r{n}" for n in range(50)}
    raw.close()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"not json\n", "invalid_params.frame"),
        (b"[" * 100_000 + b"\n", "invalid_params.frame"),
        (b'{"id": 1, "verb": "hello", "params": {}, "x": 1}\n', "invalid_params.frame"),
    ],
)
def test_bad_frames(started: World, frame: bytes, code: str) -> None:
    raw = Raw(started)
    raw.send(frame)
    reply = raw.reply()
    assert reply["error"]["code"] == code
    raw.close()
    still_serving(started)


def test_oversized_frame_closes_the_connection(started: World) -> None:
    raw = Raw(started)
    raw.request({"id": 1, "verb": "hello", "params": {}})
    raw.reply()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        raw.send(b'{"id":2,"verb":"ping","params":{"pad":"' + b"a" * 1_100_000 + b'"}}\n')
    reply = raw.reply()
    assert reply == {
        "id": None,
        "error": {
            "code": "invalid_params.frame",
            "message": "a frame is at most 1 MiB",
            "data": {"param": "frame"},
        },
    }
    assert raw.is_closed()
    raw.close()
    still_serving(started)


def test_unknown_verb_and_bad_params(started: World) -> None:
    raw = Raw(started)
    raw.request({"id": 1, "verb": "hello", "params": {}})
    raw.reply()
    cases: list[tuple[dict[str, Any], str, str | None]] = [
        ({"verb": "memory.fly", "params": {}}, "unsupported.verb", None),
        ({"verb": "memory.search", "params": {"query": 5}}, "invalid_params.type", "query"),
        ({"verb": "memory.search", "params": {"query": "x", "limit": 101}},
         "invalid_params.range", "limit"),
        ({"verb": "memory.search", "params": {"query": "x", "bogus": 1}},
         "invalid_params.unknown", "bogus"),
        ({"verb": "memory.get", "params": {}}, "invalid_params.missing", "id"),
        ({"verb": "memory.get", "params": {"id": "q1"}}, "invalid_params.type", "id"),
        ({"verb": "memory.search", "params": {"query": "x\ud800"}}, "invalid_params.type", "query"),
        ({"verb": "memory.search", "params": "nope"}, "invalid_params.type", "params"),
    ]  # fmt: skip
    for n, (req, code, param) in enumerate(cases, start=2):
        raw.request({"id": n, **req})
        reply = raw.reply()
        assert reply["id"] == n
        assert reply["error"]["code"] == code, (req, reply)
        if param is not None:
            assert reply["error"]["data"]["param"] == param
    raw.close()


def test_disconnect_mid_request_and_half_frames(started: World) -> None:
    stalled = Raw(started)
    stalled.send(b'{"id":1,"verb":"hel')  # half a frame, then nothing
    gone = Raw(started)
    gone.request({"id": 1, "verb": "hello", "params": {}})
    gone.request({"id": 2, "verb": "memory.search", "params": {"query": "anything"}})
    gone.close()  # before reading any reply
    time.sleep(0.1)
    still_serving(started)
    stalled.close()
    still_serving(started)


def test_an_open_connection_loses_its_rights_with_its_token(started: World) -> None:
    """RFC-0020 section 4: after client.remove (or grant.revoke, or the ttl) the token fails
    with denied.token, also on a connection that said hello before, as an MCP adapter's
    connection held for a whole harness session did."""
    grants = '[{"right":"write","scope":"space:user"}]'
    token = started.add_client("leaky", grants)
    brief = started.ok("client", "add", "--name", "brief", "--grants", grants, "--ttl", "1",
                       token="@owner")["token"]  # fmt: skip
    held = {}
    for name, secret in (("leaky", token), ("brief", brief)):
        raw = Raw(started)
        raw.request({"id": 1, "verb": "hello", "params": {"auth": {"token": secret}}})
        assert raw.reply()["ok"]["label"] == name
        raw.request({"id": 2, "verb": "memory.add", "params": {"space": "user", "content": name}})
        assert raw.reply()["ok"]["changed"] is True
        held[name] = raw
    started.ok("client", "remove", "--name", "leaky", token="@owner")
    time.sleep(1.1)
    for name, reason in (("leaky", "revoked"), ("brief", "expired")):
        raw = held[name]
        raw.request({"id": 3, "verb": "memory.add", "params": {"space": "user", "content": "x"}})
        error = raw.reply()["error"]
        assert (error["code"], error["data"]["reason"]) == ("denied.token", reason)
        raw.request({"id": 4, "verb": "memory.list", "params": {}})
        assert raw.reply()["error"]["code"] == "denied.token"
        raw.close()
    listed = started.ok("memory", "list", token="@owner")["memories"]
    assert [m["snippet"] for m in listed] == ["brief", "leaky"]
