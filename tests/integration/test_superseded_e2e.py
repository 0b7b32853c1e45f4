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


def test_a_supersedes_cycle_is_refused_through_the_cli(world: World) -> None:
    """Each of two memories superseding the other would hide both: the link that closes the
    cycle is refused with exit 5 and a message saying which, and nothing is written."""
    me = world.add_client("me")
    older = world.ok("memory", "add", "--space", SPACE, "--content", "Port 8080.", token=me)["id"]
    newer = world.ok(
        "memory", "add", "--space", SPACE, "--content", "Port 9090.",
        "--supersedes", json.dumps([older]), token=me,
    )["id"]  # fmt: skip
    refused = world.run(
        "memory", "link", "--from", older, "--to", newer, "--relation", "supersedes", token=me
    )
    assert refused.code == 5, refused
    assert "conflict.link_cycle" in refused.stderr, refused
    assert f"{newer} supersedes {older}" in refused.stderr, refused
    as_json = world.run(
        "memory",
        "link",
        "--from",
        older,
        "--to",
        newer,
        "--relation",
        "supersedes",
        "--json",
        token=me,
    )
    error = json.loads(as_json.stdout or as_json.stderr)["error"]
    assert (error["code"], error["data"]["cycle"]) == ("conflict.link_cycle", [older, newer, older])
    # The same through memory.add's --supersedes on the content already held.
    again = world.run(
        "memory", "add", "--space", SPACE, "--content", "Port 8080.",
        "--supersedes", json.dumps([newer]), token=me,
    )  # fmt: skip
    assert again.code == 5, again
    (link,) = world.ok("memory", "related", "--id", older, token=me)["links"]
    assert (link["id"], link["direction"]) == (newer, "in")
    listed = world.ok("memory", "list", token=me)["memories"]
    assert [m["id"] for m in listed] == [newer]
