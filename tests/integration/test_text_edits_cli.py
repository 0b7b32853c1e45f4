"""Issue 28's text half through the real daemon (ADR 0043): memory.add's ``similar``, and
memory.replace and memory.forget, from the CLI (``--json`` and the human lines) and as MCP
tools, the verbs coming from the manifest alone."""

from __future__ import annotations

from typing import Any

import anyio

from tests.support.daemon_env import World
from tests.support.mcp_stdio import mcp_session

PRS = "The user prefers small pull requests with one change each."
AGAIN = "The user prefers small pull requests, one change each."


def test_the_cli_adds_points_out_replaces_and_forgets(world: World) -> None:
    token = world.add_client("claude-code")
    world.ok("memory", "add", "--space", "user", "--content", PRS, token=token)
    world.ok("memory", "add", "--space", "user", "--content", "CI runs on Actions.", token=token)
    added = world.ok("memory", "add", "--space", "user", "--content", AGAIN, token=token)
    assert [hit["id"] for hit in added["similar"]] == ["m1"]

    ambiguous = world.run(
        "memory", "replace", "--space", "user", "--old-text", "pull requests", "--content", "x",
        "--json", token=token,
    )  # fmt: skip
    assert ambiguous.code == 5
    error = ambiguous.json["error"]
    assert error["code"] == "conflict.memory_text_ambiguous"
    assert error["data"] == {"match": "substring", "candidates": ["m1", "m3"], "count": 2}

    replaced = world.run(
        "memory", "replace", "--space", "user", "--old-text", "Actions", "--content",
        "CI runs on Buildkite.", token=token,
    )  # fmt: skip
    assert replaced.code == 0, replaced
    assert "replaced the text of m2, found by a piece only it holds" in replaced.stdout
    assert world.ok("memory", "get", "--id", "m2")["content"] == "CI runs on Buildkite."

    forgot = world.ok("memory", "forget", "--space", "user", "--old-text", AGAIN, token=token)
    assert (forgot["id"], forgot["match"]) == ("m3", "exact")
    missing = world.run(
        "memory", "forget", "--space", "user", "--old-text", AGAIN, "--json", token=token
    )
    assert (missing.code, missing.json["error"]["code"]) == (3, "not_found.memory_text")
    shown = world.run("memory", "add", "--space", "user", "--content", AGAIN, token=token)
    assert shown.code == 0, shown
    assert "stored m4 in user (revision 1)\n1 other memory says much the same" in shown.stdout
    assert "m1" in shown.stdout


def test_the_mcp_tools_carry_them(world: World) -> None:
    token = world.add_client("claude-code")

    async def scenario() -> dict[str, Any]:
        async with mcp_session(world.environ(token), world.root) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert {"memory_dreplace", "memory_dforget"} <= set(tools)
            assert "similar" in (tools["memory_dadd"].description or "")
            await session.call_tool("memory_dadd", {"space": "user", "content": PRS})
            again = await session.call_tool("memory_dadd", {"space": "user", "content": AGAIN})
            forgot = await session.call_tool("memory_dforget", {"space": "user", "old_text": AGAIN})
            assert not forgot.is_error
            return {"again": again.structured_content, "forgot": forgot.structured_content}

    seen = anyio.run(scenario)
    assert [hit["id"] for hit in seen["again"]["similar"]] == ["m1"]
    assert seen["forgot"]["match"] == "exact"
