"""``venom-mem mcp`` as a real subprocess, driven by the official SDK's own client
(``stdio_client`` + ``ClientSession``), against a real on-demand daemon in an isolated world.

Covers CONTRACT section 7 and the MCP halves of RFC-0020 MEM-02, MEM-10 and MEM-11. The
SDK's client validates every structured result against the tool's listed output schema, so
each successful call below also checks the result shape.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no py.typed
from mcp import ClientSession
from mcp import types as mcp_types

from tests.support.daemon_env import World, pid_alive, wait_gone
from tests.support.mcp_stdio import EXCLUDED_VERBS, initialize_refusal, mcp_session
from venom_mem_core.manifest import MANIFEST, T1_SENTENCE
from venom_mem_core.params import json_schema

HARNESS_CLIS = ("claude", "codex", "opencode")
DOC_VENOM_MEM = "/home/you/.local/bin/venom-mem"
IDLE_1S = ".{ .daemon = .{ .idle_timeout_ms = 1000 } }\n"
MAX_CONTENT = 65536
SCENARIO_TIMEOUT_S = 90


def expected_tool_names() -> dict[str, str]:
    """Tool name to verb, written out from CONTRACT section 7 rather than imported."""
    names = {}
    for verb in MANIFEST.verbs:
        if verb.local or verb.name in EXCLUDED_VERBS:
            continue
        names[verb.name.replace("_", "_u").replace(".", "_d")] = verb.name
    return names


@contextlib.asynccontextmanager
async def adapter(
    world: World, token: str | None = None, **extra: str
) -> AsyncIterator[ClientSession]:
    """Start ``venom-mem mcp`` with ``token`` (or none) and ``extra`` in its environment, and
    an initialized session to it."""
    log_path = world.root / f"mcp-{time.monotonic_ns()}.stderr"
    try:
        async with mcp_session(
            world.environ(token, **extra), world.root, stderr_to=log_path
        ) as session:
            yield session
    finally:
        text = log_path.read_text() if log_path.exists() else ""
        if text.strip():
            sys.stderr.write(f"--- venom-mem mcp stderr ---\n{text}")


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(SCENARIO_TIMEOUT_S):
            await scenario()

    anyio.run(bounded)


async def ok(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, mcp_types.CallToolResult)
    assert not result.is_error, (tool, result.content)
    [content] = result.content
    assert isinstance(content, mcp_types.TextContent)
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert json.loads(content.text) == structured
    return structured


async def error(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, mcp_types.CallToolResult)
    assert result.is_error, (tool, result)
    [content] = result.content
    assert isinstance(content, mcp_types.TextContent)
    body = json.loads(content.text)
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "data"}
    assert isinstance(body["error"]["data"], dict)
    err: dict[str, Any] = body["error"]
    return err


def assert_closed_shape(verb: str, value: dict[str, Any]) -> None:
    """The daemon's ok object matches the manifest's closed result shape exactly."""
    found = MANIFEST.verb(verb)
    assert found is not None
    Draft202012Validator(json_schema(found.result)).validate(value)


def test_tools_list_is_the_manifest_and_starts_nothing(world: World) -> None:
    async def scenario() -> None:
        async with adapter(world, "@owner") as session:  # the owner is shown every tool
            listed = await session.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            expected = expected_tool_names()
            assert set(tools) == set(expected)
            assert len(listed.tools) == len(expected)
            for name, tool in tools.items():
                verb = MANIFEST.verb(expected[name])
                assert verb is not None
                assert tool.description == verb.summary
                Draft202012Validator.check_schema(tool.input_schema)
                assert tool.input_schema["type"] == "object"
                assert tool.input_schema["additionalProperties"] is False
                params = {p.name for p in verb.params} - ({"follow"} if name == "events" else set())
                assert set(tool.input_schema["properties"]) == params
                required = {p.name for p in verb.params if p.required}
                assert set(tool.input_schema["required"]) == required
                if tool.output_schema is not None:
                    Draft202012Validator.check_schema(tool.output_schema)
                    assert tool.output_schema["type"] == "object"
            for name in ("memory_dadd", "memory_dsearch", "memory_dget", "skill_dinstall"):
                assert name in tools
            assert T1_SENTENCE in (tools["memory_dget"].description or "")
            assert T1_SENTENCE in (tools["memory_dsearch"].description or "")
            limit = tools["memory_dsearch"].input_schema["properties"]["limit"]
            assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 100, 10)
            kind = tools["memory_dadd"].input_schema["properties"]["kind"]
            assert kind["enum"] == ["fact", "decision", "procedure", "note"]
            assert tools["memory_dadd"].output_schema is not None
            assert tools["doctor"].output_schema is None  # an open result
            assert tools["memory_dsearch"].annotations is not None
            assert tools["memory_dsearch"].annotations.read_only_hint is True
            assert tools["memory_dadd"].annotations is not None
            assert tools["memory_dadd"].annotations.read_only_hint is False
        # Listing tools never connects: no daemon was started.
        assert world.daemon_pid() is None
        assert not world.socket.exists()

    run(scenario)


def test_add_search_and_a_stale_update(world: World) -> None:
    token = world.add_client("claude-code")
    text = "venom-std pins Zig with .zigversion; check it before upgrading."

    async def scenario() -> None:
        async with adapter(world, token) as session:
            add = {"space": "project/venom-std", "kind": "fact", "title": "Zig pin",
                   "content": text, "tags": ["zig", "build"]}  # fmt: skip
            first = await ok(session, "memory_dadd", **add)
            assert first == {"id": "m1", "revision": 1, "changed": True}
            assert_closed_shape("memory.add", first)
            again = await ok(session, "memory_dadd", **add)
            assert again == {"id": "m1", "revision": 1, "changed": False}

            found = await ok(
                session, "memory_dsearch", query="which zig version",
                spaces=["project/venom-std"], limit=3,
            )  # fmt: skip
            assert_closed_shape("memory.search", found)
            assert found["mode"] == "fts"
            [hit] = found["results"]
            assert hit["id"] == "m1"
            assert hit["snippet"] == text
            assert hit["author"] == {"principal": "g1", "label": "claude-code"}

            got = await ok(session, "memory_dget", id="m1")
            assert_closed_shape("memory.get", got)
            assert got["content"] == text

            updated = await ok(
                session, "memory_dupdate", id="m1", revision=1,
                content="venom-std pins Zig 0.17 with .zigversion.",
            )  # fmt: skip
            assert updated == {"id": "m1", "revision": 2, "changed": True}
            stale = await error(session, "memory_dupdate", id="m1", revision=1, content="stale")
            assert stale == {
                "code": "conflict.memory_revision",
                "message": "m1 is at revision 2",
                "data": {"current": 2},
            }
            history = await ok(session, "memory_dhistory", id="m1")
            assert_closed_shape("memory.history", history)
            assert [v["revision"] for v in history["versions"]] == [2, 1]

    run(scenario)


def test_no_token_searches_but_is_denied_write(world: World) -> None:
    world.ok("memory", "add", "--space", "user", "--content", "Prefers small PRs.", token="@owner")

    async def scenario() -> None:
        async with adapter(world) as session:
            who = await ok(session, "whoami")
            assert who["principal"] == "unknown"
            found = await ok(session, "memory_dsearch", query="small PRs")
            assert [hit["snippet"] for hit in found["results"]] == ["Prefers small PRs."]
            denied = await error(session, "memory_dadd", space="user", content="hello")
            assert denied == {
                "code": "denied.write",
                "message": "principal unknown lacks 'write' on space:user",
                "data": {
                    "right": "write",
                    "resource": "space:user",
                    "principal": "unknown",
                    "fix": "venom-mem whoami --json  # set VENOM_MEM_TOKEN to a client token",
                },
            }
            # Verbs the caller lacks rights for are listed; the daemon decides.
            admin = await error(session, "client_dlist")
            assert admin["code"] == "denied.admin"
            # The connection is still good after errors.
            assert (await ok(session, "memory_dsearch", query="small PRs"))["results"]

    run(scenario)


def test_mem_11_one_harness_stores_another_finds_it_in_a_new_session(world: World) -> None:
    """The P4 exit criterion: no venom running, no embeddings configured."""
    world.write_config(IDLE_1S)
    claude = world.add_client("claude-code")
    codex = world.add_client("codex")
    assert "VENOM_MANAGER" not in world.env
    text = "The proto tests need a writable XDG_RUNTIME_DIR."

    async def store_as_claude() -> None:
        async with adapter(world, claude) as a:
            stored = await ok(
                a, "memory_dadd", space="project/venom-std", content=text, tags=["tests"]
            )
            assert stored == {"id": "m1", "revision": 1, "changed": True}

    async def find_as_codex() -> dict[str, Any]:
        async with adapter(world, codex) as b:
            who = await ok(b, "whoami")
            assert who["label"] == "codex"
            status = await ok(b, "store_dstatus")
            assert status["embeddings"] == "off"
            return await ok(b, "memory_dsearch", query="proto tests XDG_RUNTIME_DIR")

    run(store_as_claude)
    # Adapter A has exited; with a 1 s idle timeout its daemon goes too, so B starts afresh.
    deadline = time.monotonic() + 10
    while world.socket.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert world.daemon_pid() is None

    found: dict[str, Any] = {}

    async def scenario_b() -> None:
        found.update(await find_as_codex())

    run(scenario_b)
    assert found["mode"] == "fts"
    assert "fallback" not in found
    [hit] = found["results"]
    assert hit["id"] == "m1"
    assert hit["snippet"] == text
    assert hit["author"] == {"principal": "g1", "label": "claude-code"}
    assert hit["updated_by"] == {"principal": "g1", "label": "claude-code"}


def test_mem_10_daemon_stays_while_an_adapter_is_connected_and_exits_after(world: World) -> None:
    world.write_config(IDLE_1S)
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        async with adapter(world) as session:
            await ok(session, "memory_dsearch", query="anything")  # starts the daemon
            first = await ok(session, "ping")
            pid = int(first["pid"])
            # Idle for three idle timeouts, with no other connection in between.
            await anyio.sleep(3.0)
            assert pid_alive(pid), "the daemon idled out under a connected adapter"
            second = await ok(session, "ping")
            assert second["source"] == first["source"]
            assert second["pid"] == pid
            seen["pid"] = pid

    run(scenario)
    # The adapter has exited: its connection closed, so the idle timer runs out.
    assert wait_gone(seen["pid"], 8), "the daemon outlived its last connection"
    ping = world.run("ping", "--json")
    assert ping.code == 6
    assert ping.json["error"]["code"] == "unavailable.not_running"


def test_next_call_after_a_daemon_exit_starts_a_new_one(world: World) -> None:
    token = world.add_client("claude-code")

    async def scenario() -> None:
        async with adapter(world, token) as session:
            assert (await ok(session, "memory_dadd", space="user", content="one"))["id"] == "m1"
            before = await ok(session, "ping")
            os.kill(int(before["pid"]), signal.SIGTERM)
            assert wait_gone(int(before["pid"]), 10)
            # The held connection is dead; the next call reconnects and restarts the daemon.
            found = await ok(session, "memory_dsearch", query="one")
            assert [hit["id"] for hit in found["results"]] == ["m1"]
            after = await ok(session, "ping")
            assert after["source"] != before["source"]
            assert after["pid"] != before["pid"]
            added = await ok(session, "memory_dadd", space="user", content="two")
            assert added == {"id": "m2", "revision": 1, "changed": True}

    run(scenario)


def test_bad_tool_input_is_a_specific_invalid_params_error(world: World) -> None:
    token = world.add_client("claude-code")
    world.stop_daemon()

    async def scenario() -> None:
        async with adapter(world, token) as session:
            cases: list[tuple[str, dict[str, Any], str, str]] = [
                ("memory_dadd", {"space": 5, "content": "x"}, "type", "space"),
                ("memory_dadd", {"space": "user", "content": "x", "tags": "zig"}, "type", "tags"),
                ("memory_dadd", {"space": "user", "content": "x", "tags": [1]}, "type", "tags"),
                ("memory_dadd", {"space": "user", "content": "x", "kind": "rumour"}, "type",
                 "kind"),
                ("memory_dsearch", {"query": "x", "limit": "3"}, "type", "limit"),
                ("memory_dsearch", {"query": "x", "lineage": "yes"}, "type", "lineage"),
                ("memory_dupdate", {"id": "m1", "revision": 1.5}, "type", "revision"),
                ("memory_dadd", {"space": "user", "content": "x", "author": "g9"}, "unknown",
                 "author"),
                ("events", {"follow": True}, "unknown", "follow"),
                ("client_dadd", {"name": "x", "grants": [{"right": "read", "scope": "*",
                                                          "extra": 1}]}, "unknown", "grants"),
                ("memory_dadd", {"space": "user"}, "missing", "content"),
                ("client_dadd", {"name": "x", "grants": [{"right": "read"}]}, "missing", "grants"),
                ("memory_dsearch", {"query": "x", "limit": 0}, "range", "limit"),
                ("memory_dsearch", {"query": "x", "limit": 101}, "range", "limit"),
                ("memory_dget", {"id": "m1", "revision": 0}, "range", "revision"),
                ("session_dstart", {"harness": "x", "parent": "s1", "relation": "sibling"},
                 "relation", "relation"),
            ]  # fmt: skip
            for tool, arguments, code, param in cases:
                err = await error(session, tool, **arguments)
                assert err["code"] == f"invalid_params.{code}", (tool, arguments, err)
                assert err["data"]["param"] == param, (tool, arguments, err)
            unknown = await error(session, "memory_dfrobnicate")
            assert unknown["code"] == "unsupported.verb"
            # None of that needed the daemon, so none was started.
            assert world.daemon_pid() is None

            # The content limit is the daemon's (memory.max_content_bytes): one byte over.
            over = await error(
                session, "memory_dadd", space="user", content="x" * (MAX_CONTENT + 1)
            )
            assert over["code"] == "invalid_params.range"
            assert over["data"]["param"] == "content"
            at_limit = await ok(session, "memory_dadd", space="user", content="y" * MAX_CONTENT)
            assert at_limit["changed"] is True

    run(scenario)


def test_setup_lines_in_the_docs_work(world: World) -> None:
    """docs/mcp-setup.md: ``venom-mem setup`` runs as written, the registration lines the doc
    shows are the ones it prints (but for the token and the path), and each registers an
    adapter that speaks as that harness's client. (tests/integration/test_harness_clis.py
    runs the printed lines against the real harness CLIs.)"""
    doc = (Path(__file__).parents[2] / "docs" / "mcp-setup.md").read_text()
    commands = [line[2:] for line in doc.splitlines() if line.startswith("$ ")]
    [setup] = [c for c in commands if c.startswith("venom-mem setup ")]
    result = world.run(*shlex.split(setup)[1:], "--json")
    assert result.code == 0, result
    printed = result.json
    shown = {
        c.split()[0]: shlex.split(c)
        for c in commands
        if c.split()[0] in HARNESS_CLIS and c.split()[1:3] == ["mcp", "add"]
    }
    assert list(shown) == ["claude", "codex", "opencode"]
    location = {f"{key}={world.env[key]}" for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME",
                                                       "VENOM_MEM_CONFIG")}  # fmt: skip
    tokens: list[str] = []
    for entry, (cli, doc_argv) in zip(printed["harnesses"], shown.items(), strict=True):
        argv = list(entry["command"])
        assert argv[0] == cli
        assert "project" not in argv  # user config, never a committed project file (T4)
        for i, word in enumerate(argv):
            if word in location:  # the world's own paths, passed on as setup promises
                argv[i - 1 : i + 1] = ["", ""]
        argv = [w for w in argv if w]
        secret = entry["token"].rsplit(".", 1)[1]
        normal = [
            w.replace(secret, "<secret>").replace(printed["executable"], DOC_VENOM_MEM)
            for w in argv
        ]
        assert normal == doc_argv, (normal, doc_argv)
        tokens.append(entry["token"])
    assert shown["claude"][3:5] == ["--scope", "user"]

    labels: list[str] = []

    async def scenario() -> None:
        for token in tokens:
            async with adapter(world, token) as session:
                labels.append((await ok(session, "whoami"))["label"])

    run(scenario)
    assert labels == ["claude-code", "codex", "opencode"]


def test_the_daemon_an_adapter_starts_gets_none_of_its_secrets(world: World) -> None:
    token = world.add_client("claude-code")
    world.stop_daemon()
    secrets = {"OPENAI_API_KEY": "sk-not-for-the-daemon", "VENOM_MEM_PRINCIPAL": "g7"}
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        async with adapter(world, token, **secrets) as session:
            who = await ok(session, "whoami")
            assert who["label"] == "claude-code"
            seen["pid"] = int((await ok(session, "ping"))["pid"])

    run(scenario)
    pid = seen["pid"]
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    names = {entry.split(b"=", 1)[0].decode() for entry in environ if entry}
    assert "VENOM_MEM_TOKEN" not in names
    assert not names & set(secrets)
    assert token.encode() not in b"\0".join(environ)
    assert os.readlink(f"/proc/{pid}/cwd") == "/"


def test_owner_below_a_manager_is_refused_and_launches_nothing(world: World) -> None:
    async def scenario() -> None:
        env = world.environ("@owner", VENOM_MANAGER="1")
        assert "denied.startup_context" in await initialize_refusal(env, world.root)

    run(scenario)
    assert world.daemon_pid() is None
    assert not world.socket.exists()


def test_links_superseded_facts_and_space_states_through_the_tools(world: World) -> None:
    """docs/adr/0042 over MCP: each result matches the manifest's closed shape."""
    token = world.add_client("claude-code")

    async def scenario() -> None:
        async with adapter(world, token) as session:
            old = await ok(session, "memory_dadd", space="project/x", content="CI on Ubuntu 22.04.")
            new = await ok(
                session, "memory_dadd", space="project/x", content="CI on Ubuntu 24.04.",
                supersedes=[old["id"]],
            )  # fmt: skip
            found = await ok(session, "memory_dsearch", query="ubuntu ci")
            assert [h["id"] for h in found["results"]] == [new["id"]]
            both = await ok(session, "memory_dsearch", query="ubuntu ci", include_superseded=True)
            assert_closed_shape("memory.search", both)
            assert {h["id"]: h.get("superseded_by") for h in both["results"]} == {
                new["id"]: None,
                old["id"]: [new["id"]],
            }
            got = await ok(session, "memory_dget", id=old["id"])
            assert_closed_shape("memory.get", got)
            assert got["superseded_by"] == [new["id"]]
            linked = await ok(
                session, "memory_dlink", **{"from": new["id"], "to": old["id"]},
                relation="causes",
            )  # fmt: skip
            assert_closed_shape("memory.link", linked)
            related = await ok(session, "memory_drelated", id=old["id"])
            assert_closed_shape("memory.related", related)
            assert [r["relation"] for r in related["links"]] == ["supersedes", "causes"]
            bad = await error(
                session, "memory_dlink", **{"from": old["id"], "to": old["id"]},
                relation="causes",
            )  # fmt: skip
            assert bad["code"] == "invalid_params.link_self"
            off = await ok(session, "space_ddeactivate", space="project/x")
            assert_closed_shape("space.deactivate", off)
            assert (await ok(session, "memory_dsearch", query="ubuntu ci"))["results"] == []
            refused = await error(session, "memory_dlist", spaces=["project/x"])
            assert refused["code"] == "conflict.space_inactive"
            spaces = await ok(session, "space_dlist")
            assert_closed_shape("space.list", spaces)
            assert spaces["spaces"][0]["active"] is False

    run(scenario)
