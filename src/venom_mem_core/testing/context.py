"""Importance, branches, space descriptions and memory.context on the store (ADR 0017,
ADR 0018)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import VenomError
from ..local import LocalClient
from ..manifest import T1_SENTENCE
from ..records import Grant, Principal
from .support import StoreFixtures

if TYPE_CHECKING:
    from .support import Env

__all__ = ["ContextContract"]

A_ONLY = Principal(id="g7", label="a-reader", grants=(Grant(right="read", scope="space:a"),))
ONE_MEMORY = Principal(id="g8", grants=(Grant(right="read", scope="memory:m1"),))
HEADER = f"# venom-mem context\n\n{T1_SENTENCE}\n"


def _footer(omitted: int, total: int, budget: int = 8192) -> str:
    return (
        f"\n{omitted} of {total} memories left out to fit {budget} bytes; absence here does not"
        " mean deletion: memory.search finds what is not shown.\n"
    )


def _code(client: LocalClient, verb: str, params: dict[str, Any]) -> VenomError:
    with pytest.raises(VenomError) as caught:
        client.call(verb, params)
    return caught.value


def _ids(result: dict[str, Any], key: str) -> list[str]:
    return [item["id"] for item in result[key]]


class ContextContract(StoreFixtures):
    """memory.context and what it orders and filters by: importance, branches, descriptions."""

    # -- importance ----------------------------------------------------------------------------

    def test_importance_defaults_to_normal_and_is_returned(self, env: Env) -> None:
        plain = env.add("Plain.")
        urgent = env.add("Urgent.", importance="critical")
        assert env.g1.call("memory.get", {"id": plain})["importance"] == "normal"
        assert env.g1.call("memory.get", {"id": urgent})["importance"] == "critical"
        # A hit carries importance only when it isn't normal, so RFC-0020's hits stay exact.
        listed = {h["id"]: h for h in env.g1.call("memory.list")["memories"]}
        assert "importance" not in listed[plain]
        assert listed[urgent]["importance"] == "critical"
        found = env.g1.call("memory.search", {"query": "urgent"})["results"]
        assert found[0]["importance"] == "critical"

    def test_an_importance_only_update_is_a_versioned_revision(self, env: Env) -> None:
        id_ = env.add("Rotate the signing key yearly.")
        changed = env.g2.call("memory.update", {"id": id_, "revision": 1, "importance": "low"})
        assert changed == {"id": id_, "revision": 2, "changed": True}
        history = env.g1.call("memory.history", {"id": id_})["versions"]
        assert [(v["revision"], v["action"], v["by"]["principal"]) for v in history] == [
            (2, "update", "g2"),
            (1, "add", "g1"),
        ]
        assert env.g1.call("memory.get", {"id": id_})["importance"] == "low"
        old = env.g1.call("memory.get", {"id": id_, "revision": 1})
        assert old["importance"] == "normal"
        same = env.g1.call("memory.update", {"id": id_, "revision": 2, "importance": "low"})
        assert same == {"id": id_, "revision": 2, "changed": False}

    def test_a_repeated_add_leaves_importance_and_branches_alone(self, env: Env) -> None:
        id_ = env.add("Once.", importance="critical", branches=["main"])
        again = env.g1.call(
            "memory.add", {"space": "user", "content": "Once.", "importance": "low"}
        )
        assert again == {"id": id_, "revision": 1, "changed": False}
        memory = env.g1.call("memory.get", {"id": id_})
        assert (memory["importance"], memory["branches"]) == ("critical", ["main"])

    def test_bad_importance_is_refused(self, env: Env) -> None:
        error = _code(
            env.g1, "memory.add", {"space": "user", "content": "x", "importance": "urgent"}
        )
        assert (error.code, error.data.get("param")) == ("invalid_params.type", "importance")
        error = _code(env.g1, "memory.list", {"importances": ["high"]})
        assert error.code == "invalid_params.type"

    def test_importance_never_changes_search_ranking(self, env: Env) -> None:
        first = env.add("alpha alpha alpha beta")
        second = env.add("alpha beta gamma delta epsilon")
        before = env.g1.call("memory.search", {"query": "alpha"})["results"]
        assert [h["id"] for h in before] == [first, second]
        env.g1.call("memory.update", {"id": second, "revision": 1, "importance": "critical"})
        env.g1.call("memory.update", {"id": first, "revision": 1, "importance": "low"})
        after = env.g1.call("memory.search", {"query": "alpha"})["results"]
        assert [h["id"] for h in after] == [first, second]
        assert [h["score"] for h in after] == [h["score"] for h in before]
        assert [h["fts_rank"] for h in after] == [h["fts_rank"] for h in before]

    def test_importances_filter_list_and_search(self, env: Env) -> None:
        low = env.add("deploy low", importance="low")
        normal = env.add("deploy normal")
        critical = env.add("deploy critical", importance="critical")
        picked = env.g1.call("memory.list", {"importances": ["critical", "low"]})
        assert _ids(picked, "memories") == [critical, low]
        found = env.g1.call("memory.search", {"query": "deploy", "importances": ["normal"]})
        assert _ids(found, "results") == [normal]

    # -- branches ------------------------------------------------------------------------------

    def test_branches_are_set_returned_and_cleared(self, env: Env) -> None:
        id_ = env.add("On two branches.", branches=["main", "feature/ctx"])
        memory = env.g1.call("memory.get", {"id": id_})
        assert memory["branches"] == ["main", "feature/ctx"]
        hit = env.g1.call("memory.list")["memories"][0]
        assert hit["branches"] == ["main", "feature/ctx"]
        env.g1.call("memory.update", {"id": id_, "revision": 1, "branches": []})
        assert env.g1.call("memory.get", {"id": id_})["branches"] == []
        assert "branches" not in env.g1.call("memory.list")["memories"][0]
        assert env.g1.call("memory.get", {"id": id_, "revision": 1})["branches"] == [
            "main",
            "feature/ctx",
        ]

    @pytest.mark.parametrize(
        ("branches", "code"),
        [
            (["a b"], "invalid_params.branch"),
            (["-x"], "invalid_params.branch"),
            (["x.lock"], "invalid_params.branch"),
            (["a..b"], "invalid_params.branch"),
            (["main", "main"], "invalid_params.branch"),
            (["b" * 129], "invalid_params.range"),
            ([f"b{n}" for n in range(17)], "invalid_params.range"),
            (["vnt1.venom-mem.g1." + "Q" * 43], "invalid_params.secret_content"),
        ],
    )
    def test_bad_branches_are_refused(self, env: Env, branches: list[str], code: str) -> None:
        error = _code(env.g1, "memory.add", {"space": "user", "content": "x", "branches": branches})
        assert (error.code, error.data.get("param")) == (code, "branches")
        assert env.owner.call("memory.list")["memories"] == []

    def test_branch_filter_keeps_memories_of_every_branch(self, env: Env) -> None:
        everywhere = env.add("release everywhere")
        on_main = env.add("release on main", branches=["main"])
        env.add("release on a feature", branches=["feature/x"])
        picked = env.g1.call("memory.list", {"branch": "main"})
        assert _ids(picked, "memories") == [on_main, everywhere]
        found = env.g1.call("memory.search", {"query": "release", "branch": "main"})
        assert sorted(_ids(found, "results")) == sorted([on_main, everywhere])
        error = _code(env.g1, "memory.list", {"branch": "no space allowed"})
        assert (error.code, error.data.get("param")) == ("invalid_params.branch", "branch")

    # -- space descriptions ----------------------------------------------------------------------

    def test_describe_lists_even_an_empty_space_and_clears(self, env: Env) -> None:
        said = env.g1.call(
            "space.describe", {"space": "project/x", "description": "Build facts of x."}
        )
        assert said == {"space": "project/x", "changed": True}
        again = env.g1.call(
            "space.describe", {"space": "project/x", "description": "Build facts of x."}
        )
        assert again == {"space": "project/x", "changed": False}
        spaces = env.unknown.call("space.list")["spaces"]
        assert spaces == [
            {
                "space": "project/x",
                "memories": 0,
                "updated": spaces[0]["updated"],
                "description": "Build facts of x.",
            }
        ]
        env.add("A fact.", space="project/x")
        env.add("Another.", space="user")
        listed = {s["space"]: s for s in env.g2.call("space.list")["spaces"]}
        assert listed["project/x"]["memories"] == 1
        assert listed["project/x"]["description"] == "Build facts of x."
        assert "description" not in listed["user"]
        env.g2.call("space.describe", {"space": "project/x", "description": ""})
        assert "description" not in env.g2.call("space.list")["spaces"][0]
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        assert [s["space"] for s in env.g2.call("space.list")["spaces"]] == ["user"]

    def test_describe_needs_write_and_a_good_description(self, env: Env) -> None:
        error = _code(env.unknown, "space.describe", {"space": "user", "description": "x"})
        assert error.code == "denied.write"
        error = _code(env.g1, "space.describe", {"space": "user", "description": "d" * 513})
        assert (error.code, error.data.get("param")) == ("invalid_params.range", "description")
        error = _code(env.g1, "space.describe", {"space": "user", "description": "two\nlines"})
        assert error.code == "invalid_params.type"
        error = _code(
            env.g1,
            "space.describe",
            {"space": "user", "description": "vnt1.venom-mem.g1." + "Q" * 43},
        )
        assert error.code == "invalid_params.secret_content"
        error = _code(env.g1, "space.describe", {"space": "Bad Space", "description": "x"})
        assert error.code == "invalid_params.space"
        assert env.owner.call("space.list")["spaces"] == []
        env.g1.call("space.describe", {"space": "user", "description": "é" * 256})  # 512 bytes

    def test_an_unreadable_described_space_is_not_listed(self, env: Env) -> None:
        env.g1.call("space.describe", {"space": "b", "description": "Secret plans."})
        env.g1.call("space.describe", {"space": "a", "description": "Open notes."})
        spaces = env.as_(A_ONLY).call("space.list")["spaces"]
        assert [s["space"] for s in spaces] == ["a"]

    # -- memory.context ------------------------------------------------------------------------

    def _project(self, env: Env) -> None:
        """Three memories over 14 days, one on another branch, one space described."""
        env.owner.call(
            "space.describe",
            {"space": "project/venom-std", "description": "Build and test facts of venom-std."},
        )
        env.add("venom-std pins Zig 0.17\nwith   .zigversion.", space="project/venom-std")
        env.clock.advance(timedelta(days=12))
        env.g2.call(
            "memory.add",
            {
                "space": "project/venom-std",
                "content": "Never push to main without review.",
                "importance": "critical",
            },
        )
        env.clock.advance(timedelta(days=1))
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "title": "Zig pin"})
        env.clock.advance(timedelta(days=1))
        env.add("Prefers small PRs.", importance="low")
        env.add("Only on the feature.", space="project/venom-std", branches=["feature/x"])

    def test_context_text_is_exact_for_a_fixed_clock(self, env: Env) -> None:
        self._project(env)
        params = {"spaces": ["project/venom-std", "user"], "branch": "main"}
        result = env.unknown.call("memory.context", params)
        text = (
            HEADER
            + "\n## project/venom-std\nBuild and test facts of venom-std.\n"
            + "\n[m2; importance=critical; created=2d; updated=2d; by=codex]\n"
            + "Never push to main without review.\n"
            + "\n[m1; importance=normal; created=14d; updated=1d; by=claude-code]\n"
            + "venom-std pins Zig 0.17 with .zigversion.\n"
            + "\n## user\n"
            + "\n[m3; importance=low; created=0d; updated=0d; by=claude-code]\n"
            + "Prefers small PRs.\n"
            + _footer(0, 3)
        )
        assert result == {
            "text": text,
            "memories": ["m2", "m1", "m3"],
            "omitted": 0,
            "bytes": len(text.encode()),
        }
        assert env.unknown.call("memory.context", params) == result  # deterministic
        # Without a branch every memory is shown; on the feature branch its memory is too.
        assert env.g1.call("memory.context", {"spaces": ["project/venom-std"]})["memories"] == [
            "m2",
            "m4",
            "m1",
        ]

    def test_context_ages_future_and_kinds(self, env: Env) -> None:
        self._project(env)
        env.clock.current -= timedelta(days=30)
        result = env.g1.call("memory.context", {"spaces": ["user"], "kinds": ["note"]})
        assert (
            "\n[m3; importance=low; created=future; updated=future; by=claude-code]\n"
            in (result["text"])
        )
        assert env.g1.call("memory.context", {"spaces": ["user"], "kinds": ["fact"]}) == {
            "text": HEADER + _footer(0, 0),
            "memories": [],
            "omitted": 0,
            "bytes": len((HEADER + _footer(0, 0)).encode()),
        }

    def test_context_order_is_importance_then_latest_update_then_id(self, env: Env) -> None:
        env.clock.step = timedelta(0)  # equal times, so the ID decides
        first = env.add("same time one")
        second = env.add("same time two")
        env.clock.advance(timedelta(hours=1))
        later = env.add("an hour later")
        low = env.add("low but newest", importance="low")
        critical = env.add("critical but oldest", importance="critical")
        env.g1.call("memory.update", {"id": critical, "revision": 1, "title": "t"})
        result = env.g1.call("memory.context", {"spaces": ["user"]})
        assert result["memories"] == [critical, later, second, first, low]

    def test_context_budget_edge_is_one_byte(self, env: Env) -> None:
        budget = 1024
        section = "\n## user\n"
        meta = "\n[m1; importance=normal; created=0d; updated=0d; by=claude-code]\n"
        room = budget - len(HEADER + section + meta + "\n" + _footer(0, 1, budget))
        env.add("a" * room)
        shown = env.g1.call("memory.context", {"spaces": ["user"], "budget": budget})
        text = HEADER + section + meta + "a" * room + "\n" + _footer(0, 1, budget)
        assert shown == {"text": text, "memories": ["m1"], "omitted": 0, "bytes": budget}
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "content": "a" * (room + 1)})
        left_out = env.g1.call("memory.context", {"spaces": ["user"], "budget": budget})
        text = HEADER + _footer(1, 1, budget)
        assert left_out == {
            "text": text,
            "memories": [],
            "omitted": 1,
            "bytes": len(text.encode()),
        }

    def test_context_leaves_out_whole_entries_and_later_ones_may_fit(self, env: Env) -> None:
        env.add("small one")
        env.add("x" * 2000, importance="critical")
        result = env.g1.call("memory.context", {"spaces": ["user"], "budget": 1024})
        assert result["memories"] == ["m1"]
        assert result["omitted"] == 1
        assert "x" * 10 not in result["text"]
        assert result["bytes"] <= 1024

    def test_context_shows_a_described_space_whose_entries_do_not_fit(self, env: Env) -> None:
        env.g1.call("space.describe", {"space": "a", "description": "What a holds."})
        env.add("y" * 1500, space="a")
        env.add("Fits.", space="b")
        result = env.g1.call("memory.context", {"spaces": ["a", "b", "empty"], "budget": 1024})
        text = (
            HEADER
            + "\n## a\nWhat a holds.\n"
            + "\n## b\n"
            + "\n[m2; importance=normal; created=0d; updated=0d; by=claude-code]\nFits.\n"
            + _footer(1, 2, 1024)
        )
        assert result == {
            "text": text,
            "memories": ["m2"],
            "omitted": 1,
            "bytes": len(text.encode()),
        }

    def test_context_reveals_nothing_of_an_unreadable_space(self, env: Env) -> None:
        env.add("open", space="a")
        env.add("secret", space="b")
        env.g1.call("space.describe", {"space": "b", "description": "Plans."})
        reader = env.as_(A_ONLY)
        error = _code(reader, "memory.context", {"spaces": ["a", "b"]})
        assert error.code == "denied.read"
        assert "secret" not in error.message
        assert "Plans" not in error.message
        error = _code(env.as_(ONE_MEMORY), "memory.context", {"spaces": ["a"]})
        assert error.code == "denied.read"
        assert reader.call("memory.context", {"spaces": ["a"]})["memories"] == ["m1"]

    @pytest.mark.parametrize(
        ("params", "code", "param"),
        [
            ({"spaces": []}, "invalid_params.range", "spaces"),
            ({"spaces": ["user"], "budget": 1023}, "invalid_params.range", "budget"),
            ({"spaces": ["user"], "budget": 65537}, "invalid_params.range", "budget"),
            ({"spaces": ["Bad"]}, "invalid_params.space", "spaces"),
            ({"spaces": ["user"], "branch": "a..b"}, "invalid_params.branch", "branch"),
            ({}, "invalid_params.missing", "spaces"),
        ],
    )
    def test_context_bad_params(
        self, env: Env, params: dict[str, Any], code: str, param: str
    ) -> None:
        error = _code(env.g1, "memory.context", params)
        assert (error.code, error.data.get("param")) == (code, param)
