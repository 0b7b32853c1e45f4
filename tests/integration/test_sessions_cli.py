"""Session lineage through the real CLI and daemon: RFC-0020 section 1's transcript and MEM-08."""

from __future__ import annotations

import re

from tests.support.daemon_env import World

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
HARNESS_SESSION = "6f1c2e0a-7d1b-4c55-9a1e-3f0d7b2c8e41"


def _strip_times(obj: dict[str, object], *keys: str) -> dict[str, object]:
    for key in keys:
        value = obj.pop(key)
        assert isinstance(value, str)
        assert TS.match(value)
    return obj


def test_section_1_lineage_transcript(world: World) -> None:
    claude = world.add_client("claude-code")
    codex = world.add_client("codex")
    start = (
        "session", "start", "--harness", "claude-code", "--harness-session", HARNESS_SESSION,
        "--cwd", "/home/u/venom-std",
    )  # fmt: skip
    assert world.ok(*start, token=claude) == {"session": "s1", "changed": True}
    assert world.ok(*start, token=claude) == {"session": "s1", "changed": False}
    fork = world.ok(
        "session", "start", "--harness", "codex", "--parent", "s1", "--relation", "fork",
        "--cwd", "/home/u/venom-std", token=codex,
    )  # fmt: skip
    assert fork == {"session": "s2", "changed": True}
    added = world.ok(
        "memory", "add", "--space", "project/venom-std", "--session", "s1",
        "--content", "The proto tests need a writable XDG_RUNTIME_DIR.", token=claude,
    )  # fmt: skip
    assert added == {"id": "m1", "revision": 1, "changed": True}

    chain = world.ok("session", "chain", "--session", "s2")
    assert chain["truncated"] is False
    assert [_strip_times(s, "started") for s in chain["chain"]] == [
        {
            "session": "s1",
            "harness": "claude-code",
            "harness_session": HARNESS_SESSION,
            "cwd": "/home/u/venom-std",
            "reported_by": {"principal": "g1", "label": "claude-code"},
        },
        {
            "session": "s2",
            "harness": "codex",
            "parent": "s1",
            "relation": "fork",
            "cwd": "/home/u/venom-std",
            "reported_by": {"principal": "g2", "label": "codex"},
        },
    ]
    found = world.ok(
        "memory", "search", "--query", "proto tests", "--session", "s2", "--lineage=true"
    )
    assert found["mode"] == "fts"
    [hit] = found["results"]
    assert hit["id"] == "m1"
    assert hit["session"] == "s1"
    assert hit["author"] == {"principal": "g1", "label": "claude-code"}
    assert hit["fts_rank"] == 1
    # Without lineage, s2 alone holds nothing.
    alone = world.ok("memory", "search", "--query", "proto tests", "--session", "s2")
    assert alone["results"] == []
    ended = world.ok("session", "end", "--session", "s2", token=codex)
    assert ended["changed"] is True
    again = world.ok("session", "end", "--session", "s2", token=codex)
    assert again == {"session": "s2", "ended": ended["ended"], "changed": False}
    children = world.ok("session", "list", "--parent", "s1")
    assert [s["session"] for s in children["sessions"]] == ["s2"]
    assert children["next"] is None


def test_hidden_and_purged_ancestors_truncate_and_reveal_nothing(world: World) -> None:
    owner = "@owner"
    secret_harness = "secret-harness-name"
    world.ok("session", "start", "--harness", secret_harness, token=owner)  # s1, hidden
    world.ok("session", "start", "--harness", "visible", "--parent", "s1", "--relation",
             "continue", token=owner)  # fmt: skip  # s2
    world.ok("session", "start", "--harness", "leaf", "--parent", "s2", "--relation",
             "subagent", token=owner)  # fmt: skip  # s3
    world.ok("memory", "add", "--space", "hidden", "--session", "s1", "--content",
             "hidden ancestor text", token=owner)  # fmt: skip
    reader = world.add_client(
        "reader",
        '[{"right":"read","scope":"session:s2"},{"right":"read","scope":"session:s3"},'
        '{"right":"read","scope":"space:open"}]',
    )
    chain = world.run("session", "chain", "--session", "s3", "--json", token=reader)
    assert chain.code == 0
    assert chain.json["truncated"] is True
    assert [s["session"] for s in chain.json["chain"]] == ["s2", "s3"]
    # Nothing of the hidden s1: not its harness, not even its id as s2's parent.
    assert secret_harness not in chain.stdout
    assert '"s1"' not in chain.stdout
    assert chain.json["chain"][0]["relation"] == "continue"
    assert "parent" not in chain.json["chain"][0]
    got = world.ok("session", "get", "--session", "s2", token=reader)
    assert "parent" not in got
    assert world.run("session", "get", "--session", "s1", "--json", token=reader).code == 4
    hidden = world.run("memory", "search", "--query", "hidden ancestor", "--session", "s3",
                       "--lineage=true", "--json", token=reader)  # fmt: skip
    assert hidden.code == 0
    assert hidden.json["results"] == []
    assert "hidden ancestor" not in hidden.stdout

    # A purged ancestor looks the same: relation kept, parent gone, truncated.
    assert world.ok("session", "purge", "--session", "s2", token=owner) == {"session": "s2"}
    after = world.ok("session", "chain", "--session", "s3", token=owner)
    assert after["truncated"] is True
    assert [s["session"] for s in after["chain"]] == ["s3"]
    assert after["chain"][0]["relation"] == "subagent"
    assert "parent" not in after["chain"][0]
    gone = world.run("session", "get", "--session", "s2", "--json", token=owner)
    assert gone.code == 3
    assert gone.json["error"]["code"] == "not_found.session"


def test_chain_stops_at_256(world: World) -> None:
    token = "@owner"
    world.ok("session", "start", "--harness", "root", token=token)
    # Build a long chain quickly over one connection.
    from venom_mem_adapters.client import connect

    with connect(world.environ(token)) as conn:
        for n in range(2, 301):
            out = conn.call(
                "session.start", {"harness": "h", "parent": f"s{n - 1}", "relation": "continue"}
            )
            assert out["session"] == f"s{n}"
    chain = world.ok("session", "chain", "--session", "s300")
    assert chain["truncated"] is True
    assert len(chain["chain"]) == 256
    assert chain["chain"][0]["session"] == "s45"
    assert chain["chain"][-1]["session"] == "s300"


def test_bad_session_input_writes_nothing(world: World) -> None:
    token = world.add_client("claude-code")
    cases = [
        (("--harness", "h", "--parent", "s9", "--relation", "fork"), 3, "not_found.session", None),
        (("--harness", "h", "--parent", "s9"), 2, "invalid_params.missing", "relation"),
        (("--harness", "h", "--relation", "fork"), 2, "invalid_params.relation", "relation"),
        (("--harness", "h", "--cwd", "relative/dir"), 2, "invalid_params.type", "cwd"),
        (("--harness", "h" * 65), 2, "invalid_params.range", "harness"),
        (("--harness", "h", "--harness-session", "x" * 257), 2, "invalid_params.range",
         "harness_session"),
        (("--harness", "h", "--parent", "9"), 2, "invalid_params.type", "parent"),
    ]  # fmt: skip
    for args, code, error, param in cases:
        result = world.run("session", "start", *args, "--json", token=token)
        assert result.code == code, (args, result)
        assert result.json["error"]["code"] == error
        if param is not None:
            assert result.json["error"]["data"]["param"] == param
    assert world.ok("session", "list")["sessions"] == []
    unknown = world.run("session", "start", "--harness", "h", "--json")
    assert unknown.code == 4
    assert unknown.json["error"]["code"] == "denied.write"
    assert unknown.json["error"]["data"]["resource"] == "session:*"
