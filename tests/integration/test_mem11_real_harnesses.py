"""MEM-11 end to end with the real harness binaries: Claude Code stores a memory through
venom-mem's MCP tools, then Codex, in a new session of another harness, finds it, and the
memory's author is Claude Code's client.

Everything is real but the model: the pinned CLIs from npm (scripts/test-deps.sh), set up
with exactly the lines ``venom-mem setup claude-code codex`` prints (and, for Codex, the two
settings it says to add), ``venom-mem mcp`` launched by each harness, its daemon, and the
store. The model is :mod:`tests.support.scripted_model`, on loopback, scripted to call one
venom-mem tool and then answer. Nothing reaches the network: as root the endpoint and each
harness run in a network namespace with only loopback (tests.support.offline_endpoint), and
the harnesses are told to send anything else through the endpoint as a proxy, which refuses
it and records the attempt; the test asserts there was none.
"""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.support.daemon_env import VENOM_MEM
from tests.support.harness_home import (
    Home,
    as_written,
    codex_settings,
    harness,
    harness_home,
    plain,
)
from tests.support.offline_endpoint import Endpoint, offline_endpoint
from tests.support.scripted_model import Script, find_tool, tool_result_texts

HARNESS_TIMEOUT_S = 180
FACT = "The venom-mem build runs make test before every push."
STORED = "Stored it in venom-mem."
FOUND = "venom-mem says: the build runs make test before every push."
# Claude Code offers MCP tools as mcp__<server>__<tool>; Codex in a namespace mcp__<server>.
CLAUDE_TOOL = "mcp__venom-mem__memory_dadd"
CODEX_NAMESPACE = "mcp__venom_mem"
API_KEY_VAR = "SCRIPTED_MODEL_API_KEY"


@pytest.fixture
def home() -> Iterator[Home]:
    with harness_home("vm-m11-") as h:
        yield h


def claude_env(endpoint: Endpoint) -> dict[str, str]:
    return {
        # claude -p sends its first model request without waiting for MCP servers unless
        # told to: under load that request went out without venom-mem's tools.
        "MCP_CONNECTION_NONBLOCKING": "false",
        "ANTHROPIC_BASE_URL": endpoint.url,
        "ANTHROPIC_API_KEY": "offline-dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        **endpoint.proxy_env,
    }


def codex_config(written: str, entry: Mapping[str, Any], endpoint: Endpoint) -> str:
    """Codex's config as ``codex mcp add`` wrote it, with the settings the setup steps ask
    for added to its venom-mem table, and a model provider that is the scripted endpoint."""
    provider = f"""model = "scripted-model"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted model on loopback"
base_url = "{endpoint.url}/v1"
env_key = "{API_KEY_VAR}"
wire_api = "responses"

# Off, or Codex 0.171 exports metrics to ab.chatgpt.com ...
[analytics]
enabled = false

# ... and syncs curated plugins from github.com and chatgpt.com at start-up.
[features]
plugins = false

"""
    table = "[mcp_servers.venom-mem]\n"
    assert written.count(table) == 1, written
    return provider + written.replace(table, table + "\n".join(codex_settings(entry)) + "\n")


def result_of(requests: list[dict[str, Any]], call_id: str) -> str:
    """The one tool result the harness sent back to the model for ``call_id``."""
    texts = {tool_result_texts(r["body"]).get(call_id) for r in requests} - {None}
    assert len(texts) == 1, (call_id, texts)
    [text] = texts
    assert text is not None
    return text


def offline_note(endpoint: Endpoint) -> None:
    where = "a network namespace with only loopback" if endpoint.isolated else "host loopback"
    print(f"scripted model endpoint {endpoint.url} in {where}; other traffic goes to it as proxy")


def test_claude_code_stores_and_codex_finds_it_under_claude_codes_name(home: Home) -> None:
    claude, codex = harness("claude"), harness("codex")
    entries = {e["harness"]: e for e in home.setup("claude-code", "codex")["harnesses"]}
    for name, binary in (("claude-code", claude), ("codex", codex)):
        added = home.run(as_written(entries[name], binary))
        assert added.returncode == 0, plain(added)
    home.stop_daemon()  # each harness session reaches the store through a daemon it starts

    # Session 1, Claude Code: the model calls memory.add, gets its result, and ends the turn.
    store = Script("memory_dadd", {"space": "user", "content": FACT}, STORED)
    with offline_endpoint(store, home.root, "claude") as endpoint:
        offline_note(endpoint)
        argv = [claude, "-p", f"Remember for later sessions: {FACT}", "--output-format", "json",
                "--allowedTools", CLAUDE_TOOL]  # fmt: skip
        ran = home.run(endpoint.wrap(argv), HARNESS_TIMEOUT_S, claude_env(endpoint))
        requests, outbound = endpoint.requests(), endpoint.outbound()
    assert ran.returncode == 0, plain(ran)
    final = json.loads(ran.stdout)
    offered = [find_tool(r["body"], "memory_dadd") for r in requests]
    outcome = (final["is_error"], final["result"], final["permission_denials"])
    assert outcome == (False, STORED, []), (final, offered)  # offered: the tool, per request
    assert all(r["path"].startswith("/v1/messages") for r in requests), requests
    assert (None, CLAUDE_TOOL) in offered
    added = json.loads(result_of(requests, "toolu_scripted_1"))
    assert (added["revision"], added["changed"]) == (1, True), added
    assert outbound == []
    home.stop_daemon()

    # Session 2, Codex: a new process of another harness, with a daemon of its own start.
    find = Script("memory_dsearch", {"query": "make test before every push"}, FOUND)
    config = home.home / ".codex" / "config.toml"
    written = config.read_text()
    with offline_endpoint(find, home.root, "codex") as endpoint:
        offline_note(endpoint)
        config.write_text(codex_config(written, entries["codex"], endpoint))
        argv = [codex, "exec", "--json", "--skip-git-repo-check",
                "What does the venom-mem build run before a push?"]  # fmt: skip
        env = {API_KEY_VAR: "offline-dummy-key", **endpoint.proxy_env}
        ran = home.run(endpoint.wrap(argv), HARNESS_TIMEOUT_S, env)
        requests, outbound = endpoint.requests(), endpoint.outbound()
    assert ran.returncode == 0, plain(ran)
    assert all(r["path"] == "/v1/responses" for r in requests), requests
    assert (CODEX_NAMESPACE, "memory_dsearch") in [
        find_tool(r["body"], "memory_dsearch") for r in requests
    ]
    events = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    items = [e["item"] for e in events if e["type"] == "item.completed"]
    [call] = [item for item in items if item["type"] == "mcp_tool_call"]
    assert (call["server"], call["tool"], call["error"]) == ("venom-mem", "memory_dsearch", None)
    found = call["result"]["structured_content"]
    assert found["mode"] == "fts"  # embeddings off, as MEM-11 has it
    [hit] = found["results"]
    author = {"principal": entries["claude-code"]["principal"], "label": "claude-code"}
    assert (hit["id"], hit["snippet"], hit["author"]) == (added["id"], FACT, author)
    assert entries["codex"]["principal"] != author["principal"]
    # What the model was handed back is that same hit, author and all (Codex puts the
    # tool's text after a "Wall time: ...\nOutput:\n" header).
    back = result_of(requests, "call_scripted_1")
    assert json.loads(back.split("Output:\n", 1)[-1]) == found, back
    assert [item["text"] for item in items if item["type"] == "agent_message"] == [FOUND]
    assert outbound == []

    # And the owner, from a terminal, sees the memory as Claude Code wrote it.
    shown = home.run([VENOM_MEM, "memory", "get", "--id", added["id"], "--json"])
    assert shown.returncode == 0, plain(shown)
    memory = json.loads(shown.stdout)
    assert (memory["content"], memory["author"]) == (FACT, author), memory


# What a harness would do to leave: through the proxy it was given, or straight to an address.
PROBE = """
import json, socket, sys, urllib.error, urllib.request
out = {}
try:
    urllib.request.urlopen("https://example.com/", timeout=5)
    out["proxied"] = "reached"
except (urllib.error.URLError, OSError) as error:
    out["proxied"] = type(error).__name__
if sys.argv[2] == "isolated":  # only then: elsewhere this would be a packet sent out
    try:
        socket.create_connection(("192.0.2.1", 443), timeout=3).close()
        out["direct"] = "reached"
    except OSError as error:
        out["direct"] = error.errno
request = urllib.request.Request(
    sys.argv[1] + "/v1/messages", json.dumps({"model": "m", "messages": []}).encode(),
    {"content-type": "application/json"},
)
with urllib.request.urlopen(request, timeout=5) as reply:
    out["endpoint"] = json.load(reply)["content"]
print(json.dumps(out))
"""


def test_the_scripted_endpoint_is_all_a_harness_can_reach(home: Home) -> None:
    """The guard behind ``outbound == []`` above: an attempt through the proxy is refused
    and recorded, and (in the namespace) a direct connection finds no network at all."""
    script = Script("memory_dadd", {}, STORED)
    with offline_endpoint(script, home.root, "probe") as endpoint:
        offline_note(endpoint)
        where = "isolated" if endpoint.isolated else "host"
        argv = endpoint.wrap([sys.executable, "-c", PROBE, endpoint.url, where])
        ran = home.run(argv, 60, endpoint.proxy_env)
        outbound, requests = endpoint.outbound(), endpoint.requests()
    assert ran.returncode == 0, plain(ran)
    out = json.loads(ran.stdout)
    assert out["proxied"] != "reached"
    assert [(r["method"], r["target"]) for r in outbound] == [("CONNECT", "example.com:443")]
    if endpoint.isolated:
        assert out["direct"] == errno.ENETUNREACH, out
    # A request that offers no scripted tool gets a plain text turn, and is recorded.
    assert out["endpoint"] == [{"type": "text", "text": "Scripted reply."}]
    assert [r["path"] for r in requests] == ["/v1/messages"]
