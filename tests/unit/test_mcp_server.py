"""The MCP adapter without a subprocess or a daemon: the catalog and argument checks, the
SDK's in-memory client against the low-level server, and the daemon link's reconnect and
lost-reply rules with hand-written fake connections."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no py.typed
from mcp import Client
from mcp import types as mcp_types

from tests.support.mcp_stdio import EXCLUDED_VERBS
from venom_mem_adapters.mcp.link import DaemonLink
from venom_mem_adapters.mcp.server import ToolRunner, build_server, in_thread
from venom_mem_adapters.mcp.tools import build_catalog, tool_name, verb_name
from venom_mem_core.errors import VenomError
from venom_mem_core.grammar import GRANT_SCOPE_PATTERN, SECRET_PATTERN, SPACE_PATTERN
from venom_mem_core.manifest import MANIFEST, T1_SENTENCE

CATALOG = build_catalog(MANIFEST)


# --- catalog -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verb", "tool"),
    [
        ("memory.add", "memory_dadd"),
        ("memory.search", "memory_dsearch"),
        ("skill.install", "skill_dinstall"),
        ("whoami", "whoami"),
        ("a_b.c_d", "a_ub_dc_ud"),
    ],
)
def test_tool_names_follow_contract_section_7(verb: str, tool: str) -> None:
    assert tool_name(verb) == tool
    assert verb_name(tool) == verb


def test_one_tool_per_daemon_verb() -> None:
    expected = {v.name for v in MANIFEST.verbs if not v.local and v.name not in EXCLUDED_VERBS}
    assert {spec.verb.name for spec in CATALOG.values()} == expected
    assert "serve" not in CATALOG
    assert "mcp" not in CATALOG
    assert "hello" not in CATALOG


def test_schemas_are_valid_and_outputs_are_open() -> None:
    for spec in CATALOG.values():
        Draft202012Validator.check_schema(spec.input_schema)
        assert spec.description == spec.verb.summary
        if spec.output_schema is None:
            continue
        Draft202012Validator.check_schema(spec.output_schema)
        assert "additionalProperties" not in json.dumps(spec.output_schema)
    assert CATALOG["doctor"].output_schema is None
    assert CATALOG["events"].output_schema is None
    assert T1_SENTENCE in CATALOG["memory_dget"].description
    assert T1_SENTENCE in CATALOG["memory_dsearch"].description


def _listed_schemas() -> dict[str, dict[str, Any]]:
    """The input schemas as ``tools/list`` carries them, through the SDK's own client."""

    async def scenario() -> dict[str, dict[str, Any]]:
        async with Client(build_server(FakeUpstream(lambda verb, params: {}))) as client:
            listed = await client.list_tools()
            return {tool.name: tool.input_schema for tool in listed.tools}

    return anyio.run(scenario)


def test_listed_input_schemas_carry_the_rfc_grammars() -> None:
    """RFC-0020 sections 2, 3 and 7, as a harness reads them (ADR 0024)."""
    schemas = _listed_schemas()
    add = schemas["memory_dadd"]["properties"]
    assert add["space"]["pattern"] == SPACE_PATTERN
    assert add["kind"]["enum"] == ["fact", "decision", "procedure", "note"]
    assert add["title"]["maxLength"] == 200
    assert "at most 200 UTF-8 bytes" in add["title"]["description"]
    assert add["title"]["not"] == {"pattern": SECRET_PATTERN}
    assert add["content"]["minLength"] == 1
    assert add["content"]["not"] == {"pattern": SECRET_PATTERN}
    assert add["tags"]["maxItems"] == 16
    assert add["tags"]["uniqueItems"] is True
    assert add["tags"]["items"]["pattern"] == "^[a-z0-9][a-z0-9-]{0,63}$"
    assert add["session"]["pattern"] == "^s[1-9][0-9]{0,18}$"
    assert add["branches"]["items"]["maxLength"] == 128
    assert schemas["memory_dget"]["properties"]["id"]["pattern"] == "^m[1-9][0-9]{0,18}$"
    start = schemas["session_dstart"]
    assert start["properties"]["relation"]["enum"] == ["continue", "fork", "subagent"]
    assert start["dependentRequired"] == {"relation": ["parent"], "parent": ["relation"]}
    assert start["properties"]["harness"]["maxLength"] == 64
    assert start["properties"]["harness_session"]["maxLength"] == 256
    assert start["properties"]["cwd"]["maxLength"] == 4096
    assert start["properties"]["cwd"]["pattern"].startswith("^/")
    assert schemas["memory_dupdate"]["minProperties"] == 3  # id, revision and one change
    ttl = schemas["grant_dissue"]["properties"]["ttl"]
    assert (ttl["minimum"], ttl["maximum"]) == (1, 86_400)
    assert schemas["memory_dcontext"]["properties"]["spaces"]["minItems"] == 1
    assert schemas["client_dadd"]["properties"]["name"]["pattern"] == "^[a-z0-9][a-z0-9-]{0,63}$"
    client_grant = schemas["client_dadd"]["properties"]["grants"]["items"]["properties"]
    assert client_grant["right"]["enum"] == ["read", "write"]
    assert client_grant["scope"]["pattern"] == GRANT_SCOPE_PATTERN
    issued_grant = schemas["grant_dissue"]["properties"]["grants"]["items"]["properties"]
    assert issued_grant["right"]["enum"] == ["read", "write", "admin"]
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)


def test_events_is_one_shot() -> None:
    events = CATALOG["events"]
    assert "follow" not in events.input_schema["properties"]
    original = MANIFEST.verb("events")
    assert original is not None
    assert [p.name for p in events.verb.params] == [
        p.name for p in original.params if p.name != "follow"
    ]
    for attribute in ("name", "summary", "result", "right", "resource", "starts_daemon"):
        assert getattr(events.verb, attribute) == getattr(original, attribute)
    # Every other tool carries the manifest's own verb.
    for spec in CATALOG.values():
        if spec.name != "events":
            assert spec.verb is MANIFEST.verb(spec.verb.name)
    with pytest.raises(VenomError) as caught:
        events.check({"follow": True})
    assert caught.value.code == "invalid_params.unknown"


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "param"),
    [
        ("memory_dadd", {"space": 5, "content": "x"}, "type", "space"),
        ("memory_dadd", {"space": "user", "content": "x", "kind": "rumour"}, "type", "kind"),
        ("memory_dadd", {"space": "user", "content": "x", "author": "g9"}, "unknown", "author"),
        ("memory_dadd", {"space": "user"}, "missing", "content"),
        ("memory_dsearch", {"query": "x", "limit": 101}, "range", "limit"),
        ("memory_dsearch", {"query": "x", "limit": True}, "type", "limit"),
        ("memory_dupdate", {"id": "m1", "revision": 1.0}, "type", "revision"),  # 2020-12 says int
        ("client_dadd", {"name": "x", "grants": [{"right": "read"}]}, "missing", "grants"),
        ("client_dadd", {"name": "x", "grants": {}}, "type", "grants"),
        ("session_dstart", {"harness": "x", "relation": "sibling"}, "relation", "relation"),
        ("memory_dadd", {"space": "user", "content": "\ud800"}, "type", "content"),
    ],
)
def test_bad_arguments_get_the_specific_code(
    tool: str, arguments: dict[str, Any], code: str, param: str
) -> None:
    with pytest.raises(VenomError) as caught:
        CATALOG[tool].check(arguments)
    assert caught.value.code == f"invalid_params.{code}"
    assert caught.value.data == {"param": param}


def test_good_arguments_get_defaults() -> None:
    assert CATALOG["memory_dsearch"].check({"query": "zig"}) == {
        "query": "zig",
        "lineage": False,
        "mode": "auto",
        "limit": 10,
    }
    assert CATALOG["whoami"].check(None) == {}


# --- the server through the SDK's in-memory client ----------------------------------------


class FakeUpstream:
    """Answers from a function; records calls and how many ran at once."""

    def __init__(self, answer: Callable[[str, Mapping[str, Any]], dict[str, Any]]) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.active = 0
        self.most_active = 0
        self.closed = False
        self._guard = threading.Lock()

    def call(self, verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
        with self._guard:
            self.active += 1
            self.most_active = max(self.most_active, self.active)
            self.calls.append((verb, dict(params)))
        try:
            return self.answer(verb, params)
        finally:
            with self._guard:
                self.active -= 1

    def close(self) -> None:
        self.closed = True


def test_in_memory_listing_and_results() -> None:
    def answer(verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if verb == "memory.add":
            return {"id": "m1", "revision": 1, "changed": True}
        raise VenomError("conflict.memory_revision", "m1 is at revision 2", {"current": 2})

    upstream = FakeUpstream(answer)

    async def scenario() -> None:
        async with Client(build_server(upstream)) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == list(CATALOG)
            assert not upstream.calls  # listing never reaches the daemon

            added = await client.call_tool("memory_dadd", {"space": "user", "content": "x"})
            assert not added.is_error
            assert added.structured_content == {"id": "m1", "revision": 1, "changed": True}
            [text] = added.content
            assert isinstance(text, mcp_types.TextContent)
            assert json.loads(text.text) == added.structured_content

            stale = await client.call_tool(
                "memory_dupdate", {"id": "m1", "revision": 1, "content": "y"}
            )
            assert stale.is_error
            [text] = stale.content
            assert isinstance(text, mcp_types.TextContent)
            assert json.loads(text.text) == {
                "error": {
                    "code": "conflict.memory_revision",
                    "message": "m1 is at revision 2",
                    "data": {"current": 2},
                }
            }

            bad = await client.call_tool("memory_dadd", {"space": "user"})
            assert bad.is_error
            unknown = await client.call_tool("nope", {})
            assert unknown.is_error

    anyio.run(scenario)
    # Checked params, defaults filled in, reach the daemon; bad calls never do.
    assert upstream.calls == [
        ("memory.add", {"space": "user", "content": "x", "kind": "note"}),
        ("memory.update", {"id": "m1", "revision": 1, "content": "y"}),
    ]


def test_a_bug_is_an_error_result_not_a_crash() -> None:
    def answer(verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    async def scenario() -> None:
        async with Client(build_server(FakeUpstream(answer))) as client:
            result = await client.call_tool("whoami", {})
            assert result.is_error
            [text] = result.content
            assert isinstance(text, mcp_types.TextContent)
            assert json.loads(text.text)["error"]["code"] == "failed.internal"

    anyio.run(scenario)


def test_calls_are_serialized_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []

    def answer(verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
        threads.append(threading.get_ident())
        time.sleep(0.02)
        return {"pong": True, "source": "s", "pid": 1}

    upstream = FakeUpstream(answer)
    runner = ToolRunner(in_thread(upstream), CATALOG)

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(runner.run, "ping", {})

    anyio.run(scenario)
    assert len(upstream.calls) == 8
    assert upstream.most_active == 1
    assert loop_thread not in threads


# --- the daemon link ----------------------------------------------------------------------

Reply = dict[str, Any] | BaseException | Callable[[int], dict[str, Any]]


class FakeWire:
    """A connection: ``send`` numbers requests from 2 as the real one does; ``receive`` plays
    the scripted replies (a callable gets the last request id)."""

    def __init__(self, replies: list[Reply] | None = None, *, refuse: bool = False) -> None:
        self.replies = list(replies or [])
        self.refuse = refuse
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.closed = False
        self.started = False

    def send(
        self, verb: str, params: Mapping[str, Any] | None = None, *, deadline: float | None = None
    ) -> int:
        if self.refuse:
            raise BrokenPipeError(32, "Broken pipe")
        self.sent.append((verb, dict(params or {})))
        return len(self.sent) + 1

    def receive(self, *, deadline: float | None = None, verb: str = "") -> dict[str, Any]:
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(len(self.sent) + 1)
        return reply

    def close(self) -> None:
        self.closed = True


def ok_reply(ok: dict[str, Any]) -> Callable[[int], dict[str, Any]]:
    return lambda request_id: {"id": request_id, "ok": ok}


class Connector:
    def __init__(self, *wires: FakeWire | BaseException) -> None:
        self.wires = list(wires)
        self.opened = 0
        self.may_start: list[bool] = []

    def __call__(self, may_start: bool) -> FakeWire:
        self.opened += 1
        self.may_start.append(may_start)
        wire = self.wires.pop(0)
        if isinstance(wire, BaseException):
            raise wire
        return wire


def test_link_connects_lazily_and_holds_the_connection() -> None:
    wire = FakeWire([ok_reply({"a": 1}), ok_reply({"b": 2})])
    connector = Connector(wire)
    link = DaemonLink(connector)
    assert connector.opened == 0
    assert link.call("whoami", {}) == {"a": 1}
    assert link.call("whoami", {}) == {"b": 2}
    assert connector.opened == 1
    assert link.connected
    link.close()
    assert wire.closed


def test_link_reconnects_once_when_the_daemon_went_away_between_calls() -> None:
    held = FakeWire([ok_reply({"first": True})])
    fresh = FakeWire([ok_reply({"second": True})])
    connector = Connector(held, fresh)
    link = DaemonLink(connector)
    assert link.call("ping", {}) == {"first": True}
    held.refuse = True  # the daemon exited: the held socket refuses the next frame
    assert link.call("memory.search", {"query": "x"}) == {"second": True}
    assert connector.opened == 2
    assert held.closed
    assert fresh.sent == [("memory.search", {"query": "x"})]


def test_link_gives_up_when_the_new_connection_refuses_too() -> None:
    connector = Connector(FakeWire(refuse=True), FakeWire(refuse=True))
    link = DaemonLink(connector)
    with pytest.raises(VenomError) as caught:
        link.call("ping", {})
    assert caught.value.code == "unavailable.connection"
    assert connector.opened == 2
    assert not link.connected


@pytest.mark.parametrize(
    "failure",
    [
        VenomError("unavailable.connection", "the daemon closed the connection"),
        ConnectionResetError(104, "Connection reset by peer"),
    ],
)
def test_link_never_resends_after_the_frame_was_accepted(failure: BaseException) -> None:
    broken = FakeWire([failure])
    later = FakeWire([ok_reply({"later": True})])
    connector = Connector(broken, later)
    link = DaemonLink(connector)
    with pytest.raises(VenomError) as caught:
        link.call("memory.add", {"space": "user", "content": "x"})
    assert caught.value.code == "unavailable.connection"
    assert "not resent" in caught.value.message
    assert broken.sent == [("memory.add", {"space": "user", "content": "x"})]
    assert later.sent == []  # not resent on the new connection either
    assert not link.connected
    # The next call reconnects.
    assert link.call("ping", {}) == {"later": True}
    assert connector.opened == 2


def test_link_passes_daemon_errors_and_keeps_the_connection() -> None:
    def denied(request_id: int) -> dict[str, Any]:
        return {
            "id": request_id,
            "error": {"code": "denied.write", "message": "no", "data": {"right": "write"}},
        }

    wire = FakeWire([denied, ok_reply({"fine": True})])
    link = DaemonLink(Connector(wire))
    with pytest.raises(VenomError) as caught:
        link.call("memory.add", {})
    assert (caught.value.code, caught.value.data) == ("denied.write", {"right": "write"})
    assert link.connected
    assert link.call("ping", {}) == {"fine": True}


def test_link_drops_the_connection_after_a_refused_frame() -> None:
    wire = FakeWire(
        [{"id": None, "error": {"code": "invalid_params.frame", "message": "x", "data": {}}}]
    )
    link = DaemonLink(Connector(wire))
    with pytest.raises(VenomError) as caught:
        link.call("ping", {})
    assert caught.value.code == "invalid_params.frame"
    assert not link.connected
    assert wire.closed


def test_link_reports_connect_failures_and_tries_again_next_call() -> None:
    token_error = VenomError("denied.token", "bad token", {"reason": "invalid"})
    connector = Connector(token_error, FakeWire([ok_reply({"ok": 1})]))
    link = DaemonLink(connector)
    with pytest.raises(VenomError) as caught:
        link.call("whoami", {})
    assert caught.value.code == "denied.token"
    assert link.call("whoami", {}) == {"ok": 1}


# --- import cost ---------------------------------------------------------------------------


def test_only_the_server_module_imports_mcp() -> None:
    code = (
        "import sys\n"
        "import venom_mem_adapters.mcp_server, venom_mem_adapters.mcp.tools, "
        "venom_mem_adapters.mcp.link, venom_mem_cli.entry\n"
        "assert 'mcp' not in sys.modules, 'mcp imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_link_starts_the_daemon_only_for_verbs_that_may() -> None:
    """RFC-0020 section 8's table: ping, doctor, events, config.*, grant.* and audit never
    start a daemon, over MCP as on the CLI."""
    for verb, may_start in (("ping", False), ("doctor", False), ("grant.list", False),
                            ("memory.add", True), ("whoami", True)):  # fmt: skip
        connector = Connector(FakeWire([ok_reply({})]))
        DaemonLink(connector).call(verb, {})
        assert connector.may_start == [may_start], verb


def test_a_lost_reply_on_the_call_that_started_the_daemon_is_startup_result() -> None:
    starting = FakeWire([BrokenPipeError(32, "Broken pipe")])
    starting.started = True
    with pytest.raises(VenomError) as caught:
        DaemonLink(Connector(starting)).call("memory.purge", {"id": "m1"})
    assert caught.value.code == "unavailable.startup_result"
    assert "may or may not have been applied" in caught.value.message
    held = FakeWire([BrokenPipeError(32, "Broken pipe")])
    with pytest.raises(VenomError) as caught:
        DaemonLink(Connector(held)).call("memory.purge", {"id": "m1"})
    assert caught.value.code == "unavailable.connection"
