"""The relay's own rules (docs/adr/0038) against scripted daemon sessions on socket pairs:
the replay of the harness's ``initialize`` on every new session, a lost connection failing
only what it had not answered and the next message reconnecting, a daemon that serves no MCP
session, and a line over 1 MiB. (The real daemon, real timeouts and the SDK's own client:
tests/integration/test_mcp_relay.py, test_mcp_stdio.py, test_harness_environments.py.)"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from venom_mem_adapters.mcp.front import Handover
from venom_mem_adapters.mcp.relay import Relay
from venom_mem_adapters.mcp.tools import build_catalog
from venom_mem_core.manifest import MANIFEST

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def call(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class FakeSession:
    """One daemon MCP session: records what it reads; ``answer`` says what to send back
    for each message (``None``: nothing); ``hang_up_on`` closes the connection instead."""

    def __init__(
        self,
        answer: Callable[[dict[str, Any]], dict[str, Any] | None],
        *,
        protocol: str | None = "mcp",
        hang_up_on: str | None = None,
    ) -> None:
        self.mine, theirs = socket.socketpair()
        self.read: list[dict[str, Any]] = []
        self.hello = {"principal": "g1", "version": "0.1.0"}
        if protocol is not None:
            self.hello["protocol"] = protocol
        self.path, self.pid, self.started = "/run/test.sock", 4242, False
        self._answer = answer
        self._hang_up_on = hang_up_on
        self._thread = threading.Thread(target=self._serve, args=(theirs,), daemon=True)
        self._thread.start()

    def _serve(self, sock: socket.socket) -> None:
        with sock, sock.makefile("rb") as reader:
            for raw in reader:
                message = json.loads(raw)
                self.read.append(message)
                if self._hang_up_on is not None and message.get("method") == self._hang_up_on:
                    sock.shutdown(socket.SHUT_RDWR)
                    return
                reply = self._answer(message)
                if reply is not None:
                    sock.sendall(line(reply))

    def detach(self) -> tuple[socket.socket, bytes]:
        return self.mine, b""

    def close(self) -> None:
        self.mine.close()

    def wait(self) -> None:
        self._thread.join(timeout=10)


def echo(message: dict[str, Any]) -> dict[str, Any] | None:
    """A session that answers every request with the method it was."""
    if "id" not in message:
        return None
    return {"jsonrpc": "2.0", "id": message["id"], "result": {"method": message["method"]}}


class GatedInput:
    """The harness's stdin: its messages, each one only once ``before`` (by its index)
    says the relay may read it."""

    def __init__(
        self, messages: list[dict[str, Any]], before: Callable[[int], None] | None
    ) -> None:
        self._messages = list(messages)
        self._before = before
        self._next = 0

    def readline(self) -> bytes:
        if self._next == len(self._messages):
            return b""
        if self._before is not None:
            self._before(self._next)
        self._next += 1
        return line(self._messages[self._next - 1])


def relay_run(
    harness: list[dict[str, Any]],
    sessions: list[FakeSession],
    before: Callable[[int], None] | None = None,
) -> list[Any]:
    """Run a relay past the front door's ``initialize`` over ``harness``'s messages, with
    each new session the next of ``sessions``; what the harness got back."""
    stdin: Any = GatedInput(harness, before)
    read_fd, write_fd = os.pipe()
    opened = iter(sessions)

    def connector(may_start: bool) -> FakeSession:
        return next(opened)

    with os.fdopen(write_fd, "wb") as stdout:
        relay = Relay(
            stdin,
            stdout,
            write_lock=threading.Lock(),
            connector=connector,
            catalog=build_catalog(MANIFEST, "client"),
            handover=Handover([line(INITIALIZE), line(INITIALIZED)], 0),
        )
        relay.run()
    for session in sessions:
        session.wait()
    with os.fdopen(read_fd, "rb") as answers:
        return [json.loads(raw) for raw in answers]


def test_each_new_session_is_given_the_harness_initialize_first() -> None:
    first, second = FakeSession(echo, hang_up_on="tools/list"), FakeSession(echo)
    harness = [call(1, "whoami"), {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
               call(3, "whoami")]  # fmt: skip

    def before(index: int) -> None:
        if index == 2:  # the first session is gone, and the relay has seen it go
            first.wait()
            time.sleep(0.2)

    answers = relay_run(harness, [first, second], before)
    for session in (first, second):
        replayed, initialized = session.read[:2]
        assert replayed["method"] == "initialize"
        assert replayed["params"] == INITIALIZE["params"]
        assert str(replayed["id"]).startswith("venom-mem-relay-")  # not an id of the harness's
        assert initialized == INITIALIZED
    assert [m.get("id") for m in first.read[2:]] == [1, 2]
    assert [m.get("id") for m in second.read[2:]] == [3]
    by_id = {answer["id"]: answer for answer in answers}
    assert set(by_id) == {1, 2, 3}  # the replays' answers never reach the harness
    assert by_id[1]["result"] == {"method": "tools/call"}
    # tools/list was sent when the connection went: lost, not resent, and said so.
    assert by_id[2]["error"]["data"]["code"] == "unavailable.connection"
    assert by_id[3]["result"] == {"method": "tools/call"}


def test_a_call_lost_with_its_connection_is_a_tool_error_and_the_next_reconnects() -> None:
    first = FakeSession(echo, hang_up_on="tools/call")
    first.started = True  # this session's connection launched the daemon
    second = FakeSession(echo)

    def before(index: int) -> None:
        if index == 1:  # the first connection is gone before the next call is read
            first.wait()
            time.sleep(0.2)

    answers = relay_run([call(1, "memory_dadd", space="user", content="x"), call(2, "whoami")],
                        [first, second], before)  # fmt: skip
    lost, after = answers
    assert lost["id"] == 1
    assert lost["result"]["isError"] is True
    error = json.loads(lost["result"]["content"][0]["text"])["error"]
    assert error["code"] == "unavailable.startup_result"  # RFC-0020 section 8, lost replies
    assert "may or may not have been applied" in error["message"]
    assert after == {"jsonrpc": "2.0", "id": 2, "result": {"method": "tools/call"}}
    assert [m["id"] for m in second.read if m.get("method") == "tools/call"] == [2]


def test_a_daemon_that_serves_no_mcp_session_says_restart() -> None:
    old = FakeSession(echo, protocol=None)
    [answer] = relay_run([call(1, "whoami")], [old])
    error = json.loads(answer["result"]["content"][0]["text"])["error"]
    assert error["code"] == "failed.protocol"
    assert "venom-mem restart" in error["data"]["fix"]


@pytest.mark.parametrize("offline", [True, False])
def test_a_line_over_1_mib_is_refused_without_the_daemon(offline: bool) -> None:
    sessions = [] if offline else [FakeSession(echo)]
    harness = [call(2, "memory_dadd", space="user", content="x" * (1 << 20))]
    if not offline:
        harness.insert(0, call(1, "whoami"))
    answers = {answer["id"]: answer for answer in relay_run(harness, sessions)}
    assert set(answers) == ({2} if offline else {1, 2})
    big = answers[2]
    error = json.loads(big["result"]["content"][0]["text"])["error"]
    assert (error["code"], error["data"]["param"]) == ("invalid_params.range", "params")
    for session in sessions:
        assert [m.get("id") for m in session.read[2:]] == [1]


def test_bad_arguments_with_no_session_start_nothing() -> None:
    answers = relay_run([call(1, "memory_dadd", space=5, content="x"), call(2, "nope_dnope"),
                         {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                         {"jsonrpc": "2.0", "id": 4, "method": "ping"}], [])  # fmt: skip
    codes = [json.loads(a["result"]["content"][0]["text"])["error"]["code"] for a in answers[:2]]
    assert codes == ["invalid_params.type", "unsupported.verb"]
    listed = [tool["name"] for tool in answers[2]["result"]["tools"]]
    assert listed == list(build_catalog(MANIFEST, "client"))
    assert answers[3] == {"jsonrpc": "2.0", "id": 4, "result": {}}


class FakeUpstream:
    """The bridge's plain-frame link: records each call; ``gate`` holds a call until set."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answered = threading.Semaphore(0)
        self.closed = False
        self._gate = gate

    def call(self, verb: str, params: Any) -> dict[str, Any]:
        self.calls.append((verb, dict(params)))
        if self._gate is not None:
            self._gate.wait(10)
        self.answered.release()
        return {"bridged": verb}

    def close(self) -> None:
        self.closed = True


def bridged_run(
    harness: list[dict[str, Any]],
    session: FakeSession,
    upstream: FakeUpstream,
    before: Callable[[int], None] | None = None,
) -> list[Any]:
    """As :func:`relay_run`, with a bridge to ``upstream`` and one session."""
    stdin: Any = GatedInput(harness, before)
    read_fd, write_fd = os.pipe()
    with os.fdopen(write_fd, "wb") as stdout:
        Relay(
            stdin,
            stdout,
            write_lock=threading.Lock(),
            connector=lambda may_start: session,
            catalog=build_catalog(MANIFEST, "client"),
            handover=Handover([line(INITIALIZE), line(INITIALIZED)], 0),
            bridge=lambda: upstream,
        ).run()
    session.wait()
    with os.fdopen(read_fd, "rb") as answers:
        return [json.loads(raw) for raw in answers]


def test_tool_calls_go_over_the_bridge_until_the_session_answers_initialize() -> None:
    opened = threading.Event()

    def slow_to_open(message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("method") == "initialize":
            opened.wait(10)  # the daemon importing the SDK
        return echo(message)

    session, upstream = FakeSession(slow_to_open), FakeUpstream()
    harness = [call(1, "whoami"), call(2, "memory_dsearch", query="x"),
               {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
               call(4, "whoami")]  # fmt: skip

    def before(index: int) -> None:
        if index == 2:  # both calls answered over the bridge; now the session may open
            for _ in range(2):
                assert upstream.answered.acquire(timeout=10)
            opened.set()

    answers = {answer["id"]: answer for answer in bridged_run(harness, session, upstream, before)}
    assert [verb for verb, _ in upstream.calls] == ["whoami", "memory.search"]
    assert upstream.calls[1][1]["query"] == "x"  # checked params, defaults filled in
    assert upstream.closed  # one connection once the session serves
    for request_id, verb in ((1, "whoami"), (2, "memory.search")):
        result = answers[request_id]["result"]
        assert result["structuredContent"] == {"bridged": verb}
        assert json.loads(result["content"][0]["text"]) == {"bridged": verb}
        assert result["isError"] is False
    # What needs the session waited for it; the calls after it went to it, in order.
    assert [m.get("id") for m in session.read[2:]] == [3, 4]
    assert answers[3]["result"] == {"method": "resources/list"}
    assert answers[4]["result"] == {"method": "tools/call"}


def test_a_bridged_call_cancelled_is_never_answered() -> None:
    gate = threading.Event()
    session, upstream = FakeSession(echo), FakeUpstream(gate)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 1, "reason": "the user pressed escape"}}  # fmt: skip

    def before(index: int) -> None:
        if index == 2:  # the cancel was read while the call was in flight
            time.sleep(0.2)
            gate.set()

    answers = bridged_run([call(1, "whoami"), cancel, call(2, "whoami")], session, upstream, before)
    assert [answer["id"] for answer in answers] == [2]
