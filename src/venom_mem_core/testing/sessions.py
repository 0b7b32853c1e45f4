"""Sessions on the store: start, end, get, chain, purge, list and search along lineage
(RFC-0020 section 4)."""

from __future__ import annotations

import json

from ..records import Grant, Principal
from .support import Env, StoreFixtures, fails, list_ids, search_ids

__all__ = ["SessionContract"]


class SessionContract(StoreFixtures):
    """session.start, end, get, chain, purge and list, and memories that refer to sessions."""

    # -- sessions ---------------------------------------------------------------------------

    def test_session_start_and_get(self, env: Env) -> None:
        started = env.g1.call("session.start", {"harness": "claude-code", "cwd": "/home/u/x"})
        assert started == {"session": "s1", "changed": True}
        session = env.g2.call("session.get", {"session": "s1"})
        assert session == {
            "session": "s1",
            "harness": "claude-code",
            "cwd": "/home/u/x",
            "reported_by": {"principal": "g1", "label": "claude-code"},
            "started": session["started"],
        }

    def test_session_start_repeats_with_harness_session(self, env: Env) -> None:
        params = {"harness": "claude-code", "harness_session": "abc", "cwd": "/one"}
        assert env.g1.call("session.start", params) == {"session": "s1", "changed": True}
        again = {**params, "cwd": "/two"}
        assert env.g2.call("session.start", again) == {"session": "s1", "changed": False}
        assert env.g1.call("session.get", {"session": "s1"})["cwd"] == "/one"
        other = {**params, "harness": "codex"}
        assert env.g1.call("session.start", other) == {"session": "s2", "changed": True}
        assert env.g1.call("session.start", {"harness": "codex"})["session"] == "s3"
        assert env.g1.call("session.start", {"harness": "codex"})["session"] == "s4"

    def test_session_parent_must_exist(self, env: Env) -> None:
        before = env.snapshot()
        fails(
            env.g1,
            "session.start",
            {"harness": "codex", "parent": "s9", "relation": "fork"},
            "not_found.session",
        )
        assert env.snapshot() == before

    def test_session_end(self, env: Env) -> None:
        env.g1.call("session.start", {"harness": "codex"})
        ended = env.g1.call("session.end", {"session": "s1"})
        assert (ended["session"], ended["changed"]) == ("s1", True)
        again = env.g1.call("session.end", {"session": "s1"})
        assert again == {"session": "s1", "ended": ended["ended"], "changed": False}
        assert env.g1.call("session.get", {"session": "s1"})["ended"] == ended["ended"]
        fails(env.g1, "session.end", {"session": "s9"}, "not_found.session")

    def test_chain_oldest_first(self, env: Env) -> None:
        env.g1.call("session.start", {"harness": "claude-code"})
        env.g2.call("session.start", {"harness": "codex", "parent": "s1", "relation": "fork"})
        env.g1.call(
            "session.start", {"harness": "claude-code", "parent": "s2", "relation": "subagent"}
        )
        result = env.g1.call("session.chain", {"session": "s3"})
        assert result["truncated"] is False
        assert [s["session"] for s in result["chain"]] == ["s1", "s2", "s3"]
        assert "parent" not in result["chain"][0]
        assert (result["chain"][1]["parent"], result["chain"][1]["relation"]) == ("s1", "fork")
        assert (result["chain"][2]["parent"], result["chain"][2]["relation"]) == ("s2", "subagent")
        assert env.g1.call("session.chain", {"session": "s1"}) == {
            "chain": [env.g1.call("session.get", {"session": "s1"})],
            "truncated": False,
        }

    def test_chain_stops_at_256(self, env: Env) -> None:
        env.owner.call("session.start", {"harness": "codex"})
        for n in range(1, 300):
            env.owner.call(
                "session.start", {"harness": "codex", "parent": f"s{n}", "relation": "continue"}
            )
        result = env.owner.call("session.chain", {"session": "s300"})
        assert result["truncated"] is True
        assert len(result["chain"]) == 256
        assert result["chain"][0]["session"] == "s45"
        assert result["chain"][-1]["session"] == "s300"
        exact = env.owner.call("session.chain", {"session": "s256"})
        assert (len(exact["chain"]), exact["truncated"]) == (256, False)

    def test_chain_after_a_purged_ancestor(self, env: Env) -> None:
        env.g1.call("session.start", {"harness": "codex"})
        env.g1.call("session.start", {"harness": "codex", "parent": "s1", "relation": "fork"})
        env.g1.call("session.start", {"harness": "codex", "parent": "s2", "relation": "continue"})
        assert env.owner.call("session.purge", {"session": "s2"}) == {"session": "s2"}
        result = env.g1.call("session.chain", {"session": "s3"})
        assert result["truncated"] is True
        assert [s["session"] for s in result["chain"]] == ["s3"]
        child = result["chain"][0]
        assert child["relation"] == "continue"
        assert "parent" not in child
        fails(env.g1, "session.get", {"session": "s2"}, "not_found.session")

    def test_chain_hides_an_unreadable_ancestor(self, env: Env) -> None:
        env.g1.call("session.start", {"harness": "claude-code", "harness_session": "hidden-1"})
        env.g1.call("session.start", {"harness": "codex", "parent": "s1", "relation": "fork"})
        env.g1.call("session.start", {"harness": "codex", "parent": "s2", "relation": "subagent"})
        reader = env.as_(
            Principal(
                id="g9",
                grants=(
                    Grant(right="read", scope="session:s2"),
                    Grant(right="read", scope="session:s3"),
                ),
            )
        )
        result = reader.call("session.chain", {"session": "s3"})
        assert result["truncated"] is True
        assert [s["session"] for s in result["chain"]] == ["s2", "s3"]
        text = json.dumps(result)
        assert '"s1"' not in text
        assert "hidden-1" not in text

    def test_search_along_lineage(self, env: Env) -> None:
        env.g1.call("session.start", {"harness": "claude-code"})
        env.g2.call("session.start", {"harness": "codex", "parent": "s1", "relation": "fork"})
        env.g2.call("session.start", {"harness": "codex"})
        env.add("The proto tests need a writable XDG_RUNTIME_DIR.", session="s1")
        env.add("proto tests elsewhere", session="s3")
        env.add("proto tests with no session")
        assert search_ids(env.g2, "proto tests", session="s2") == []
        assert search_ids(env.g2, "proto tests", session="s2", lineage=True) == ["m1"]
        assert search_ids(env.g2, "proto tests", session="s1") == ["m1"]
        assert list_ids(env.g2, session="s2", lineage=True) == ["m1"]
        hit = env.g2.call("memory.search", {"query": "proto", "session": "s1"})["results"][0]
        assert hit["session"] == "s1"
        fails(env.g2, "memory.search", {"query": "x", "session": "s9"}, "not_found.session")

    def test_session_purge_keeps_children_and_memories(self, env: Env) -> None:
        env.g1.call("session.start", {"harness": "claude-code"})
        env.g1.call("session.start", {"harness": "codex", "parent": "s1", "relation": "fork"})
        env.add("remembered from s1", session="s1")
        fails(env.g1, "session.purge", {"session": "s1"}, "denied.admin")
        env.owner.call("session.purge", {"session": "s1"})
        child = env.g1.call("session.get", {"session": "s2"})
        assert child["relation"] == "fork"
        assert "parent" not in child
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert memory["content"] == "remembered from s1"
        assert "session" not in memory
        assert search_ids(env.g1, "remembered") == ["m1"]
        assert env.g1.call("session.list", {"parent": "s1"}) == {"sessions": [], "next": None}
        fails(env.owner, "session.purge", {"session": "s1"}, "not_found.session")

    def test_session_list_by_parent_and_pages(self, env: Env) -> None:
        env.g1.call("session.start", {"harness": "claude-code"})
        for relation in ("fork", "continue", "subagent"):
            env.g1.call("session.start", {"harness": "codex", "parent": "s1", "relation": relation})
        env.g1.call("session.start", {"harness": "opencode"})
        children = env.g1.call("session.list", {"parent": "s1"})
        assert [s["session"] for s in children["sessions"]] == ["s4", "s3", "s2"]
        assert children["next"] is None
        page = env.g1.call("session.list", {"limit": 2})
        assert ([s["session"] for s in page["sessions"]], page["next"]) == (["s5", "s4"], "s4")
        page = env.g1.call("session.list", {"limit": 2, "after": "s4"})
        assert ([s["session"] for s in page["sessions"]], page["next"]) == (["s3", "s2"], "s2")
        page = env.g1.call("session.list", {"limit": 2, "after": "s2"})
        assert ([s["session"] for s in page["sessions"]], page["next"]) == (["s1"], None)
        assert [
            s["session"] for s in env.g1.call("session.list", {"harness": "codex"})["sessions"]
        ] == ["s4", "s3", "s2"]

    def test_session_list_only_readable(self, env: Env) -> None:
        for _ in range(3):
            env.g1.call("session.start", {"harness": "codex"})
        reader = env.as_(Principal(id="g9", grants=(Grant(right="read", scope="session:s2"),)))
        assert [s["session"] for s in reader.call("session.list")["sessions"]] == ["s2"]

    def test_add_with_a_missing_session_changes_nothing(self, env: Env) -> None:
        before = env.snapshot()
        fails(
            env.g1,
            "memory.add",
            {"space": "user", "content": "x", "session": "s9"},
            "not_found.session",
        )
        assert env.snapshot() == before
