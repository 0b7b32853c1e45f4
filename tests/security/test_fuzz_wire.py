"""Fuzzing the daemon's socket with hypothesis (derandomized, no example database, so every
run tries the same inputs): raw bytes, JSON frames of every shape, and params generated from
every verb's manifest types, as the owner (to reach every handler) and as ``unknown``.

For every input: the daemon answers each frame with an ok or an error whose code has one of
CONTRACT section 3's classes, never ``failed.internal``; its process stays alive; and another
connection still gets a ping answered. Also: a client that stalls halfway through a frame, or
never reads its replies, holds up nobody else; and 20,000 pipelined requests in one send are
all answered with the daemon's memory bounded.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability.support import (
    RawConnection,
    check_error_code,
    raw_connection,
    record,
    rss_kib,
)
from tests.security.strategies import FUZZED_VERBS, frame_bytes, params_for, request_frames
from tests.support.daemon_env import World, make_world, pid_alive
from venom_mem_core.manifest_types import Verb

FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def examples(n: int) -> settings:
    return settings(FUZZ, max_examples=n)


PIPELINED = 20_000


@attrs.define
class Served:
    world: World
    pid: int
    owner: RawConnection
    unknown: RawConnection
    watchdog: RawConnection
    next_id: int = 100
    tried: Counter[str] = attrs.field(factory=Counter)

    def take_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def alive(self) -> None:
        """The daemon process is there and another connection is served."""
        assert pid_alive(self.pid), "the daemon died"
        request_id = self.take_id()
        reply = self.watchdog.call(request_id, "ping")
        assert reply == {"id": request_id, "ok": reply["ok"]}
        assert reply["ok"]["pong"] is True


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with make_world() as world:
        world.write_config(".{ .daemon = .{ .idle_timeout_ms = 600000 } }")
        world.ok("memory", "add", "--space", "user", "--content", "seed memory", token="@owner")
        world.ok("session", "start", "--harness", "fuzz", token="@owner")
        pid = world.daemon_pid()
        assert pid is not None
        with contextlib.ExitStack() as stack:
            connections = [
                stack.enter_context(raw_connection(world.socket, token=token))
                for token in ("@owner", None, None)
            ]
            owner, unknown, watchdog = connections
            yield Served(world, pid, owner, unknown, watchdog)


def check_reply(reply: Any, request_id: Any = ...) -> str:
    """One reply: an object with the request's id and either ``ok`` or a documented error."""
    assert isinstance(reply, dict), reply
    if request_id is not ...:
        assert reply.get("id") == request_id, reply
    if "ok" in reply:
        assert set(reply) == {"id", "ok"}, reply
        assert isinstance(reply["ok"], dict), reply
        return "ok"
    assert set(reply) == {"id", "error"}, reply
    error = reply["error"]
    assert set(error) == {"code", "message", "data"}, error
    assert isinstance(error["message"], str), error
    assert isinstance(error["data"], dict), error
    return check_error_code(error["code"]).split(".", 1)[0]


def exchange(served: Served, data: bytes, *, hello: bool) -> list[Any]:
    """Send ``data`` and a newline on a new connection, close our side, read every reply."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(str(served.world.socket))
    try:
        if hello:
            sock.sendall(b'{"id":0,"verb":"hello","params":{"auth":{"token":"@owner"}}}\n')
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(data + b"\n")
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    finally:
        sock.close()
    return [json.loads(line) for line in b"".join(chunks).splitlines()]


@examples(250)
@given(data=frame_bytes, hello=st.booleans())
def test_random_bytes(served: Served, data: bytes, hello: bool) -> None:
    for reply in exchange(served, data, hello=hello):
        served.tried["reply_" + check_reply(reply)] += 1
    served.tried["inputs"] += 1
    served.alive()
    record("security", "fuzz_wire_random_bytes", inputs=1)


@examples(300)
@given(frame=request_frames(), hello=st.booleans())
def test_json_frames(served: Served, frame: bytes, hello: bool) -> None:
    replies = exchange(served, frame, hello=hello)
    assert replies, "every frame gets an answer"
    for reply in replies:
        check_reply(reply)
    served.alive()
    record("security", "fuzz_wire_json_frames", inputs=1, frame_bytes=len(frame))


def _fuzz_verb(served: Served, verb: Verb, params: Any, as_owner: bool) -> str:
    conn = served.owner if as_owner else served.unknown
    request_id = served.take_id()
    conn.request({"id": request_id, "verb": verb.name, "params": params})
    outcome = check_reply(conn.reply(), request_id)
    served.alive()
    return outcome


@pytest.mark.parametrize("verb", FUZZED_VERBS, ids=[v.name for v in FUZZED_VERBS])
def test_manifest_params(served: Served, verb: Verb) -> None:
    outcomes: Counter[str] = Counter()

    @examples(30)
    @given(params=params_for(verb), as_owner=st.booleans())
    def fuzz(params: Any, as_owner: bool) -> None:
        outcomes[_fuzz_verb(served, verb, params, as_owner)] += 1

    fuzz()
    record(
        "security",
        "fuzz_manifest_params",
        verbs=1,
        inputs=sum(outcomes.values()),
        **{f"answered_{k}": v for k, v in sorted(outcomes.items())},
    )


def test_a_stalled_half_frame_does_not_block_others(served: Served) -> None:
    with raw_connection(served.world.socket, token="@owner") as slow:
        slow.send(b'{"id":7,"verb":"memory.search","params":{"query":"se')
        started = time.monotonic()
        for n in range(30):
            request_id = served.take_id()
            served.owner.request(
                {
                    "id": request_id,
                    "verb": "memory.add",
                    "params": {"space": "user", "content": f"while one client stalls {n}"},
                }
            )
            assert check_reply(served.owner.reply(), request_id) == "ok"
            served.alive()
        assert time.monotonic() - started < 10
        slow.send(b'ed"}}\n')  # the stalled client finishes and is answered
        assert check_reply(slow.reply(), 7) == "ok"
    record("security", "slow_client", requests_served_while_stalled=30)


def test_a_client_that_never_reads_does_not_block_others(served: Served) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(served.world.socket))
    sock.settimeout(20)
    try:
        sock.sendall(b'{"id":0,"verb":"hello","params":{}}\n')
        frame = b'{"id":1,"verb":"memory.search","params":{"query":"memory","limit":100}}\n'
        sent = 0
        sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            for _ in range(20_000):  # until its socket buffer and the daemon's are full
                sock.send(frame)
                sent += 1
        started = time.monotonic()
        for _ in range(20):
            served.alive()
        assert time.monotonic() - started < 5
    finally:
        sock.close()
    served.alive()
    record("security", "non_reading_client", requests_left_unread=sent)


def test_thousands_of_pipelined_requests_in_bounded_memory(served: Served) -> None:
    served.alive()
    before = rss_kib(served.pid)
    with raw_connection(served.world.socket) as conn:
        burst = b"".join(
            b'{"id":%d,"verb":"ping","params":{}}\n' % n for n in range(2, PIPELINED + 2)
        )
        sender = threading.Thread(target=conn.send, args=(burst,))
        sender.start()
        seen: set[int] = set()
        peak = before
        for count in range(PIPELINED):
            reply = conn.reply()
            assert reply is not None, "the daemon closed the connection"
            assert reply["ok"]["pong"] is True, reply
            seen.add(reply["id"])
            if count % 2000 == 0:
                peak = max(peak, rss_kib(served.pid))
        sender.join(timeout=30)
        assert seen == set(range(2, PIPELINED + 2))
    after = rss_kib(served.pid)
    served.alive()
    record(
        "security",
        "pipelined_requests",
        requests=PIPELINED,
        frame_bytes=len(burst),
        daemon_rss_kib_before=before,
        daemon_rss_kib_peak=peak,
        daemon_rss_kib_after=after,
    )
    assert peak - before < 16 * 1024, f"RSS grew from {before} KiB to {peak} KiB"
