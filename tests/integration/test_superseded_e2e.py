"""Issue 28's end-to-end case, through a real daemon and real CLI subprocesses: one client
adds a fact, another supersedes it, and a third's search and context show only the new one
(docs/adr/0042)."""

from __future__ import annotations

import json

from tests.support.daemon_env import World

SPACE = "project/venom-std"
READ_ONLY = json.dumps([{"right": "read", "scope": "*"}])


def test_a_superseded_fact_is_no_longer_quoted_to_a_third_client(world: World) -> None:
    alice = world.add_client("alice")
    bob = world.add_client("bob")
    carol = world.add_client("carol", READ_ONLY)

    old = world.ok(
        "memory", "add", "--space", SPACE, "--kind", "fact",
        "--content", "The release build uses Zig 0.16.", token=alice,
    )["id"]  # fmt: skip
    before = world.ok("memory", "search", "--query", "release zig", token=carol)
    assert [h["id"] for h in before["results"]] == [old]

    new = world.ok(
        "memory", "add", "--space", SPACE, "--kind", "fact",
        "--content", "The release build uses Zig 0.17 since November.",
        "--supersedes", json.dumps([old]), token=bob,
    )["id"]  # fmt: skip

    hits = world.ok("memory", "search", "--query", "release zig", token=carol)["results"]
    assert [h["id"] for h in hits] == [new]
    context = world.ok("memory", "context", "--spaces", json.dumps([SPACE]), token=carol)
    assert context["memories"] == [new]
    assert "0.17" in context["text"]
    assert "0.16" not in context["text"]

    # Still there for whoever asks for it, marked, and memory.get says what replaced it.
    marked = world.ok(
        "memory", "search", "--query", "release zig", "--include-superseded", token=carol
    )["results"]
    assert {h["id"]: h.get("superseded_by") for h in marked} == {new: None, old: [new]}
    assert world.ok("memory", "get", "--id", old, token=carol)["superseded_by"] == [new]
    (link,) = world.ok("memory", "related", "--id", old, token=carol)["links"]
    assert (link["id"], link["relation"], link["direction"]) == (new, "supersedes", "in")
    assert link["by"]["label"] == "bob"

    # A person reading the CLI sees it too.
    shown = world.run("memory", "get", "--id", old, token=carol)
    assert shown.code == 0, shown
    assert "superseded_by" in shown.stdout.replace(" ", "_") or "superseded" in shown.stdout
    assert new in shown.stdout
