"""Fuzzing ``venom-mem mcp``'s tool arguments with hypothesis, through the official SDK's
stdio client, as a harness with a read-write client token would call it.

Arguments come from each verb's manifest types (tests/security/strategies.py), mostly the
right JSON types with hostile content, sometimes anything. Values JSON-RPC can't carry (lone
surrogates, NaN) are left out: the SDK refuses to send them. For every call: the result is
either the ok object (checked by the SDK against the tool's output schema) or ``isError``
with one ``{"error": {...}}`` whose code has a documented class and is never
``failed.internal``; and the adapter and the daemon both keep answering.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings

from tests.reliability.support import McpClient, check_error_code, mcp_adapter, record
from tests.security.strategies import FUZZED_VERBS, params_for
from tests.support.daemon_env import World, make_world, pid_alive
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest_types import Verb

EXAMPLES = 8
# The MCP catalog leaves out what CONTRACT section 7 excludes (hello, serve, mcp).
TOOL_VERBS = tuple(v for v in FUZZED_VERBS)


@attrs.define
class Adapter:
    world: World
    client: McpClient
    daemon_pid: int


@pytest.fixture(scope="module")
def adapter() -> Iterator[Adapter]:
    with make_world() as world:
        world.write_config(".{ .daemon = .{ .idle_timeout_ms = 600000 } }")
        token = world.add_client("fuzzed-harness")
        world.ok("memory", "add", "--space", "user", "--content", "seed", token=token)
        pid = world.daemon_pid()
        assert pid is not None
        with mcp_adapter(world.environ(token), world.root, world.root / "mcp.stderr") as client:
            yield Adapter(world, client, pid)


def sendable(arguments: Any) -> bool:
    try:
        json.dumps(arguments, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


@pytest.mark.parametrize("verb", TOOL_VERBS, ids=[v.name for v in TOOL_VERBS])
def test_tool_arguments(adapter: Adapter, verb: Verb) -> None:
    outcomes: Counter[str] = Counter()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(arguments=params_for(verb))
    def fuzz(arguments: Any) -> None:
        assume(isinstance(arguments, dict) and sendable(arguments))
        try:
            adapter.client.call(verb.name, arguments)
            outcomes["ok"] += 1
        except VenomError as error:
            outcomes[check_error_code(error.code).split(".", 1)[0]] += 1
        assert pid_alive(adapter.daemon_pid), "the daemon died"
        assert adapter.client.call("ping", {})["pong"] is True, "the adapter stopped answering"

    fuzz()
    record(
        "security",
        "fuzz_mcp_tool_arguments",
        tools=1,
        inputs=sum(outcomes.values()),
        **{f"answered_{k}": v for k, v in sorted(outcomes.items())},
    )
