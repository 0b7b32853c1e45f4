"""``venom-mem mcp`` as a relay to the daemon's own MCP session (docs/adr/0038), against the
in-process adapter (``--in-process``) it replaces by default.

- The relay loads neither the SDK, pydantic nor anyio, whatever it relays; the daemon loads
  the SDK only when its first MCP session arrives.
- A session's errors, notifications and cancellation behave as with the in-process
  adapter, through the SDK's own client (``stdio_client`` + ``ClientSession``), and a
  cancelled request is never answered.
- The listing a relay gives before its daemon answers is the one the daemon's session gives
  after, sized to the same principal.

The front door's promises through the relay (``initialize`` at once, a bad token failing
it, a stopped daemon giving a tool error within the budget, reconnecting after a daemon
exit) are the tests of test_mcp_stdio.py, test_mcp_front.py and
test_harness_environments.py, which launch the relay, ``venom-mem mcp``'s default.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, MCPDeprecationWarning, MCPError
from mcp import types as mcp_types

from tests.support.daemon_env import World, make_world
from tests.support.mcp_stdio import mcp_session
from venom_mem_adapters.client import connect
from venom_mem_core.errors import VenomError

MODES = {"relay": (), "in-process": ("--in-process",)}
SCENARIO_TIMEOUT_S = 120
HEAVY = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio")


def run(scenario: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(SCENARIO_TIMEOUT_S):
            return await scenario()

    return anyio.run(bounded)


def outcome(result: mcp_types.CallToolResult) -> tuple[bool, Any]:
    """What a caller sees of a result: error or not, and the JSON of its one text."""
    [content] = result.content
    assert isinstance(content, mcp_types.TextContent)
    return bool(result.is_error), json.loads(content.text)


def _loaded_modules(importtime_stderr: str) -> set[str]:
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _heavy(names: set[str]) -> set[str]:
    return {name for name in names if name.split(".", 1)[0] in HEAVY}


def _relay_imports(world: World, token: str, flags: tuple[str, ...]) -> set[str]:
    """Every module ``venom-mem mcp`` imported over a session that starts the daemon,
    writes, searches and lists (``python -X importtime`` names each one on stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "venom_mem_cli", "mcp", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=world.environ(token),
        cwd=world.root,
    )
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "memory_dadd", "arguments": {"space": "user", "content": "relayed"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "memory_dsearch", "arguments": {"query": "relayed"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
    ]  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    answers: dict[int, Any] = {}
    while len(answers) < len(messages) - 1:  # all but the notification
        line = proc.stdout.readline()
        assert line, answers
        answer = json.loads(line)
        answers[answer["id"]] = answer
    proc.stdin.close()
    err = proc.stderr.read()
    proc.wait(timeout=10)
    proc.stdout.close()
    proc.stderr.close()
    assert answers[3]["result"]["structuredContent"]["results"], answers[3]
    return _loaded_modules(err.decode())


def test_the_relay_loads_no_sdk_pydantic_or_anyio(world: World) -> None:
    token = world.add_client("claude-code")
    world.stop_daemon()
    relayed = _relay_imports(world, token, ())
    assert "venom_mem_adapters.mcp.relay" in relayed  # the list is the relay's
    assert _heavy(relayed) == set()
    # The check can fail: the in-process adapter loads all of them.
    in_process = _heavy(_relay_imports(world, token, ("--in-process",)))
    assert {"mcp", "pydantic", "anyio"} <= in_process


def test_the_relay_answers_initialize_and_the_listing_without_the_configs_records(
    world: World,
) -> None:
    """With no daemon running and no config file, the relay's start (to the listing) loads
    neither attrs (the config's records: a client finds the default store's daemon record
    without them), dataclasses (with inspect) nor typing: together most of its start
    (docs/adr/0038)."""
    token = world.add_client("claude-code")
    world.stop_daemon()
    assert not world.config.exists()
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "venom_mem_cli", "mcp"],
        input=b"".join(json.dumps(m).encode() + b"\n" for m in messages),
        capture_output=True,
        env=world.environ(token),
        cwd=world.root,
        timeout=30,
        check=True,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [0, 1]
    assert answers[1]["result"]["tools"]
    loaded = _loaded_modules(proc.stderr.decode())
    assert "venom_mem_adapters.mcp.relay" in loaded
    roots = {name.split(".", 1)[0] for name in loaded}
    assert not roots & {"attr", "attrs", "dataclasses", "inspect", "typing"}, roots
    assert "venom_mem_core.config" not in loaded
    assert world.daemon_pid() is None  # nothing was started


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def test_the_daemon_loads_the_sdk_at_its_first_mcp_session(world: World) -> None:
    token = world.add_client("claude-code")
    world.ok("memory", "search", "--query", "anything", token=token)
    pid = world.daemon_pid()
    assert pid is not None
    assert "pydantic_core" not in _maps(pid)  # serving the CLI needs no SDK

    async def scenario() -> None:
        async with mcp_session(world.environ(token), world.root) as session:
            who = await session.call_tool("whoami", {})
            assert outcome(who)[1]["label"] == "claude-code"

    run(scenario)
    assert world.daemon_pid() == pid  # the session was that daemon's
    assert "pydantic_core" in _maps(pid)


async def _errors(session: ClientSession) -> list[Any]:
    """What a session answers to mistakes, before and after a daemon serves it."""
    seen: list[Any] = []
    big = "x" * (1024 * 1024 + 10)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_dadd", {"space": 5, "content": "x"}),
        ("memory_dsearch", {"query": "x", "limit": 0}),
        ("memory_dfrobnicate", {}),
        ("memory_dadd", {"space": "user", "content": big}),
        ("memory_dadd", {"space": "user", "content": "the first write"}),
        ("memory_dupdate", {"id": "m1", "revision": 7, "content": "stale"}),
        ("memory_dget", {"id": "m99"}),
        ("client_dlist", {}),
        ("memory_dadd", {"space": 5, "content": "x"}),
        ("memory_dfrobnicate", {}),
    ]
    for name, arguments in calls:
        seen.append((name, outcome(await session.call_tool(name, arguments))))
    try:
        await session.list_resources()
    except MCPError as error:
        seen.append(("resources/list", error.error.code, error.error.message))
    else:
        seen.append(("resources/list", "answered"))
    return seen


def test_errors_are_the_in_process_adapters() -> None:
    by_mode: dict[str, list[Any]] = {}
    for mode, flags in MODES.items():
        with make_world() as world:  # each mode writes its m1 into a store of its own
            token = world.add_client("claude-code")
            world.stop_daemon()

            async def scenario(
                world: World = world, token: str = token, flags: tuple[str, ...] = flags
            ) -> list[Any]:
                async with mcp_session(world.environ(token), world.root, flags=flags) as session:
                    return await _errors(session)

            by_mode[mode] = run(scenario)
    relay = by_mode["relay"]
    assert relay == by_mode["in-process"]
    assert relay[4][1] == (False, {"id": "m1", "revision": 1, "changed": True})
    codes = [entry[1][1]["error"]["code"] for i, entry in enumerate(relay[:-1]) if i != 4]
    assert codes == [
        "invalid_params.type",
        "invalid_params.range",
        "unsupported.verb",
        "invalid_params.range",
        "conflict.memory_revision",
        "not_found.memory",
        "denied.admin",
        "invalid_params.type",
        "unsupported.verb",
    ]
    assert relay[-1][:2] == ("resources/list", -32601)  # the SDK's: no such method


async def notify(session: ClientSession) -> None:
    """Notifications a client sends a server: the cancellation of a request that was never
    made, and the two that mcp 2.3 deprecates but harnesses of today still send (roots
    changed, progress for a token nobody knows)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await session.send_roots_list_changed()
        await session.send_progress_notification("no-such-token", 0.5)
    cancel = mcp_types.CancelledNotificationParams(request_id=999, reason="never sent")
    await session.send_notification(mcp_types.CancelledNotification(params=cancel))


@pytest.mark.parametrize("mode", MODES)
def test_notifications_from_the_harness_keep_the_session(world: World, mode: str) -> None:
    token = world.add_client("claude-code")
    world.stop_daemon()

    async def scenario() -> None:
        async with mcp_session(world.environ(token), world.root, flags=MODES[mode]) as session:
            # Before any daemon serves it (the relay has no session to pass these to) ...
            await notify(session)
            assert outcome(await session.call_tool("whoami", {}))[1]["label"] == "claude-code"
            # ... and after.
            await notify(session)
            assert outcome(await session.call_tool("whoami", {}))[1]["label"] == "claude-code"
            await session.send_ping()

    run(scenario)


@pytest.mark.parametrize("mode", MODES)
def test_a_cancelled_call_leaves_the_session_working(world: World, mode: str) -> None:
    token = world.add_client("claude-code")

    async def scenario() -> None:
        async with mcp_session(world.environ(token), world.root, flags=MODES[mode]) as session:
            first = outcome(await session.call_tool("events", {"limit": 1}))
            cursor = first[1]["cursor"]
            with anyio.move_on_after(0.5) as waited:  # the SDK sends notifications/cancelled
                await session.call_tool("events", {"after": cursor, "wait_ms": 3000})
            assert waited.cancelled_caught
            added = await session.call_tool("memory_dadd", {"space": "user", "content": "after"})
            assert outcome(added) == (False, {"id": "m1", "revision": 1, "changed": True})
            found = outcome(await session.call_tool("memory_dsearch", {"query": "after"}))
            assert [hit["id"] for hit in found[1]["results"]] == ["m1"]

    run(scenario)


@pytest.mark.parametrize("mode", MODES)
def test_a_call_cancelled_over_the_bridge_leaves_the_session_working(
    world: World, mode: str
) -> None:
    token = world.add_client("claude-code")
    world.stop_daemon()  # no connection at initialize: the daemon loads the SDK only later

    async def scenario() -> None:
        async with mcp_session(world.environ(token), world.root, flags=MODES[mode]) as session:
            # memory.add starts the daemon; the relay opens its session only after it, and
            # the daemon's import of the SDK is over a second of CPU: this events call and
            # the long poll after it, cancelled at 0.5 s, go over the bridge.
            await session.call_tool("memory_dadd", {"space": "user", "content": "before"})
            first = outcome(await session.call_tool("events", {"limit": 1}))
            with anyio.move_on_after(0.5) as waited:
                await session.call_tool("events", {"after": first[1]["cursor"], "wait_ms": 3000})
            assert waited.cancelled_caught
            added = await session.call_tool("memory_dadd", {"space": "user", "content": "after"})
            assert outcome(added) == (False, {"id": "m2", "revision": 1, "changed": True})
            found = outcome(await session.call_tool("memory_dsearch", {"query": "after"}))
            assert [hit["id"] for hit in found[1]["results"]] == ["m2"]
            await anyio.sleep(3)  # past the long poll's end: its late answer is dropped
            assert outcome(await session.call_tool("whoami", {}))[1]["label"] == "claude-code"

    run(scenario)


def _raw_answers(world: World, token: str, flags: tuple[str, ...], settle_s: float) -> list[Any]:
    """Every line the adapter writes for a cancelled long poll and a call after it, read
    until ``settle_s`` after the long poll would have ended."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "venom_mem_cli", "mcp", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=world.environ(token),
        cwd=world.root,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    answers: list[Any] = []
    buffer = b""

    def read_until(deadline: float, want: Any = None) -> None:
        nonlocal buffer
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], deadline - time.monotonic())
            if not ready:
                return
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                answers.append(json.loads(line))
                if want is not None and answers[-1].get("id") == want:
                    return

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}})  # fmt: skip
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "events", "arguments": {"limit": 1}}})  # fmt: skip
        read_until(time.monotonic() + 30, want=1)
        cursor = json.loads(answers[-1]["result"]["content"][0]["text"])["cursor"]
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "events", "arguments": {"after": cursor, "wait_ms": 2000}},
            }
        )
        time.sleep(0.3)
        send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 2, "reason": "the user pressed escape"}})  # fmt: skip
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "whoami", "arguments": {}}})  # fmt: skip
        read_until(time.monotonic() + 30, want=3)
        read_until(time.monotonic() + 2.0 + settle_s)
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
        proc.stdout.close()
    return answers


@pytest.mark.parametrize("mode", MODES)
def test_a_cancelled_request_is_never_answered(world: World, mode: str) -> None:
    token = world.add_client("claude-code")
    answers = _raw_answers(world, token, MODES[mode], settle_s=1.0)
    ids = [answer.get("id") for answer in answers]
    assert ids == [0, 1, 3], answers
    assert not answers[-1]["result"].get("isError"), answers[-1]


def test_the_listing_before_and_after_the_daemon_answers_is_one(world: World) -> None:
    token = world.add_client("claude-code")
    world.stop_daemon()

    async def scenario() -> None:
        async with mcp_session(world.environ(token), world.root) as session:
            before = await session.list_tools()  # the relay's, from the manifest
            assert world.daemon_pid() is None
            await session.call_tool("whoami", {})
            after = await session.list_tools()  # the daemon's session's
            assert [t.model_dump() for t in before.tools] == [t.model_dump() for t in after.tools]
            names = {tool.name for tool in after.tools}
            assert "memory_dadd" in names
            assert "client_dlist" not in names  # a client token's listing

    run(scenario)


def test_hello_names_only_the_protocols_the_manifest_has(world: World) -> None:
    token = world.add_client("claude-code")
    with pytest.raises(VenomError) as refused:
        connect(world.environ(token), may_start=False, protocol="smtp")
    assert refused.value.code == "invalid_params.type"
    assert refused.value.data["param"] == "protocol"
    with connect(world.environ(token), may_start=False, protocol="venom") as plain:
        assert "protocol" not in plain.hello  # a venom-mem connection, as without the param
        assert plain.call("whoami")["label"] == "claude-code"
    with connect(world.environ(token), may_start=False, protocol="mcp") as session:
        assert session.hello["protocol"] == "mcp"


def _first_results(world: World, token: str, flags: tuple[str, ...], version: str) -> list[Any]:
    """The raw answers to a fresh adapter's first tool calls (the relay's go over its
    bridge: no MCP session is open before them), at protocol ``version``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "venom_mem_cli", "mcp", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=world.environ(token),
        cwd=world.root,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    calls = [("whoami", {}), ("memory_dget", {"id": "m1"}), ("memory_dget", {"id": "m99"}),
             ("memory_dsearch", {"query": "zig"})]  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": version, "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]  # fmt: skip
    for i, (name, arguments) in enumerate(calls, 1):
        params = {"name": name, "arguments": arguments}
        messages.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    answers: list[Any] = []
    while len(answers) < len(calls):  # stdin stays open: the SDK's stdio would end the calls
        raw = proc.stdout.readline()
        assert raw, answers
        answer = json.loads(raw)
        if answer.get("id") != 0:
            answers.append(answer)
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()
    return answers


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_the_bridges_results_are_the_sdks_on_the_wire(world: World, version: str) -> None:
    token = world.add_client("claude-code")
    world.ok("memory", "add", "--space", "user", "--content", "The build pins zig 0.17.",
             token=token)  # fmt: skip
    world.stop_daemon()  # the relay's calls go over the bridge while the daemon loads the SDK
    relayed = _first_results(world, token, MODES["relay"], version)
    in_process = _first_results(world, token, MODES["in-process"], version)
    assert relayed == in_process
    assert [answer["result"]["isError"] for answer in relayed] == [False, False, True, False]
