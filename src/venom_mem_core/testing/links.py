"""Links and superseded memories through the use cases: memory.link, memory.unlink,
memory.related, memory.add's ``supersedes`` and what the reads leave out (docs/adr/0042)."""

from __future__ import annotations

from ..records import Grant, Principal
from .support import Env, StoreFixtures, fails, list_ids, search_ids

__all__ = ["LinkContract"]

# Reads and writes space a only.
G5 = Principal(
    id="g5", grants=(Grant(right="read", scope="space:a"), Grant(right="write", scope="space:a"))
)


def _link(env: Env, source: str, target: str, relation: str = "supersedes") -> None:
    params = {"from": source, "to": target, "relation": relation}
    assert env.g1.call("memory.link", params)["changed"] is True


class LinkContract(StoreFixtures):
    """The link verbs and the superseded rule on the store."""

    # -- memory.link, memory.related, memory.unlink ---------------------------------------

    def test_link_shows_in_both_directions_with_author_and_time(self, env: Env) -> None:
        env.add("The build uses Zig 0.16.")
        env.add("The build uses Zig 0.17.")
        params = {"from": "m2", "to": "m1", "relation": "follows"}
        result = env.g1.call("memory.link", params)
        assert result == {**params, "changed": True}
        assert env.g2.call("memory.link", params) == {**params, "changed": False}
        older = env.g2.call("memory.related", {"id": "m1"})
        assert older["id"] == "m1"
        (entry,) = older["links"]
        assert entry["id"] == "m2"
        assert (entry["relation"], entry["direction"]) == ("follows", "in")
        assert entry["by"] == {"principal": "g1", "label": "claude-code"}
        assert entry["created"] >= env.g1.call("memory.get", {"id": "m2"})["created"]
        (back,) = env.g2.call("memory.related", {"id": "m2"})["links"]
        assert (back["id"], back["direction"]) == ("m1", "out")

    def test_every_relation_is_accepted_and_each_is_its_own_link(self, env: Env) -> None:
        env.add("one")
        env.add("two")
        for relation in ("supersedes", "follows", "relates_to", "causes", "same_entity"):
            _link(env, "m2", "m1", relation)
        related = env.g1.call("memory.related", {"id": "m1"})["links"]
        assert [r["relation"] for r in related] == [
            "supersedes",
            "follows",
            "relates_to",
            "causes",
            "same_entity",
        ]

    def test_unlink_removes_and_keeps_who_did_it(self, env: Env) -> None:
        env.add("one")
        env.add("two")
        _link(env, "m2", "m1", "causes")
        params = {"from": "m2", "to": "m1", "relation": "causes"}
        unlinked = env.g2.call("memory.unlink", params)
        assert {k: unlinked[k] for k in params} == params
        assert env.g1.call("memory.related", {"id": "m1"})["links"] == []
        (kept,) = env.g1.call("memory.related", {"id": "m1", "include_unlinked": True})["links"]
        assert kept["unlinked"] == unlinked["unlinked"]
        assert kept["unlinked_by"] == {"principal": "g2", "label": "codex"}
        assert kept["by"]["principal"] == "g1"
        fails(env.g2, "memory.unlink", params, "not_found.link")
        _link(env, "m2", "m1", "causes")  # linked again: a new live link beside the old one
        again = env.g1.call("memory.related", {"id": "m1", "include_unlinked": True})["links"]
        assert ["unlinked" in r for r in again] == [True, False]

    def test_link_refusals_change_nothing(self, env: Env) -> None:
        env.add("in user")
        env.add("in a", space="a")
        before = env.snapshot()
        link = "memory.link"
        fails(
            env.g1,
            link,
            {"from": "m1", "to": "m1", "relation": "causes"},
            "invalid_params.link_self",
        )
        fails(
            env.g1,
            link,
            {"from": "m1", "to": "m2", "relation": "replaces"},
            "invalid_params.link_relation",
        )
        fails(env.g1, link, {"from": "m1", "to": "m9", "relation": "causes"}, "not_found.memory")
        fails(env.g1, link, {"from": "m9", "to": "m1", "relation": "causes"}, "not_found.memory")
        # g3 writes space a but reads nothing: it may not link to what it can't read, nor
        # from what it can't write.
        fails(env.g3, link, {"from": "m2", "to": "m1", "relation": "causes"}, "denied.read")
        fails(env.g3, link, {"from": "m1", "to": "m2", "relation": "causes"}, "denied.write")
        fails(
            env.g3,
            "memory.unlink",
            {"from": "m1", "to": "m2", "relation": "causes"},
            "denied.write",
        )
        assert env.snapshot() == before
        assert env.g1.call("memory.related", {"id": "m1"})["links"] == []

    def test_related_shows_only_what_the_caller_can_read(self, env: Env) -> None:
        env.add("in a", space="a")
        env.add("in user")
        env.add("also in a", space="a")
        _link(env, "m1", "m2", "relates_to")
        _link(env, "m3", "m1", "causes")
        assert [r["id"] for r in env.as_(G5).call("memory.related", {"id": "m1"})["links"]] == [
            "m3"
        ]
        fails(env.as_(G5), "memory.related", {"id": "m2"}, "denied.read")
        assert len(env.g1.call("memory.related", {"id": "m1"})["links"]) == 2

    def test_links_follow_delete_restore_and_purge(self, env: Env) -> None:
        env.add("old fact")
        env.add("new fact")
        env.add("a cause")
        _link(env, "m2", "m1")
        _link(env, "m3", "m2", "causes")
        env.g1.call("memory.delete", {"id": "m2", "revision": 1})
        # Hidden while deleted: the deleted end no longer supersedes, nor shows as related.
        assert env.g1.call("memory.related", {"id": "m1"})["links"] == []
        assert "superseded_by" not in env.g1.call("memory.get", {"id": "m1"})
        assert search_ids(env.g1, "fact") == ["m1"]
        env.g1.call("memory.restore", {"id": "m2"})
        assert [r["id"] for r in env.g1.call("memory.related", {"id": "m1"})["links"]] == ["m2"]
        assert env.g1.call("memory.get", {"id": "m1"})["superseded_by"] == ["m2"]
        env.owner.call("memory.purge", {"id": "m2"})
        assert env.g1.call("memory.related", {"id": "m1", "include_unlinked": True}) == {
            "id": "m1",
            "links": [],
        }
        assert env.g1.call("memory.related", {"id": "m3", "include_unlinked": True})["links"] == []
        with env.app.store.read() as tx:
            assert tx.links_of(1, include_removed=True) == []
            assert tx.links_of(3, include_removed=True) == []
            assert tx.superseded_ids() == frozenset()

    # -- supersedes -------------------------------------------------------------------------

    def test_add_supersedes_links_in_the_same_write(self, env: Env) -> None:
        env.add("The CI runs on Ubuntu 22.04.", space="project/x")
        newer = env.g2.call(
            "memory.add",
            {"space": "project/x", "content": "The CI runs on Ubuntu 24.04.", "supersedes": ["m1"]},
        )
        assert newer == {"id": "m2", "revision": 1, "changed": True}
        (entry,) = env.g1.call("memory.related", {"id": "m1"})["links"]
        assert (entry["id"], entry["relation"], entry["direction"]) == ("m2", "supersedes", "in")
        assert entry["by"]["principal"] == "g2"
        assert env.g1.call("memory.get", {"id": "m1"})["superseded_by"] == ["m2"]
        assert "superseded_by" not in env.g1.call("memory.get", {"id": "m2"})

    def test_a_superseded_memory_leaves_search_list_and_context(self, env: Env) -> None:
        env.add("The CI runs on Ubuntu 22.04.", space="project/x")
        env.add("The CI runs on Ubuntu 24.04.", space="project/x", supersedes=["m1"])
        env.add("Deploys go out on Tuesdays.", space="project/x")
        assert search_ids(env.g2, "ubuntu ci") == ["m2"]
        assert list_ids(env.g2) == ["m3", "m2"]
        context = env.g2.call("memory.context", {"spaces": ["project/x"]})
        assert context["memories"] == ["m3", "m2"]
        assert "22.04" not in context["text"]
        # include_superseded brings it back, marked.
        hits = env.g2.call("memory.search", {"query": "ubuntu ci", "include_superseded": True})
        marked = {h["id"]: h.get("superseded_by") for h in hits["results"]}
        assert marked == {"m1": ["m2"], "m2": None}
        listed = env.g2.call("memory.list", {"include_superseded": True})["memories"]
        assert [(h["id"], h.get("superseded_by")) for h in listed] == [
            ("m3", None),
            ("m2", None),
            ("m1", ["m2"]),
        ]
        full = env.g2.call("memory.context", {"spaces": ["project/x"], "include_superseded": True})
        assert full["memories"] == ["m3", "m2", "m1"]
        assert "; superseded_by=m2]\nThe CI runs on Ubuntu 22.04." in full["text"]

    def test_only_a_live_link_from_a_live_memory_supersedes(self, env: Env) -> None:
        env.add("Port 8080.")
        env.add("Port 9090.", supersedes=["m1"])
        assert list_ids(env.g1) == ["m2"]
        env.g1.call("memory.delete", {"id": "m2", "revision": 1})
        assert list_ids(env.g1) == ["m1"]
        env.g1.call("memory.restore", {"id": "m2"})
        assert list_ids(env.g1) == ["m2"]
        env.g1.call("memory.unlink", {"from": "m2", "to": "m1", "relation": "supersedes"})
        assert list_ids(env.g1) == ["m2", "m1"]
        _link(env, "m2", "m1", "relates_to")  # other relations hide nothing
        assert list_ids(env.g1) == ["m2", "m1"]

    def test_add_supersedes_refusals_add_nothing(self, env: Env) -> None:
        env.add("in user")
        before = env.snapshot()
        fails(
            env.g1,
            "memory.add",
            {"space": "user", "content": "x", "supersedes": ["m7"]},
            "not_found.memory",
        )
        fails(
            env.g3,
            "memory.add",
            {"space": "a", "content": "x", "supersedes": ["m1"]},
            "denied.read",
        )
        assert env.snapshot() == before
        # Content already held: the existing memory takes the link, and can't supersede itself.
        assert env.g1.call(
            "memory.add", {"space": "user", "content": "newer", "supersedes": ["m1"]}
        ) == {"id": "m2", "revision": 1, "changed": True}
        again = {"space": "user", "content": "newer", "supersedes": ["m2"]}
        fails(env.g1, "memory.add", again, "invalid_params.link_self")

    def test_a_supersedes_cycle_is_refused_and_nothing_written(self, env: Env) -> None:
        env.add("Port 8080.")
        env.add("Port 9090.", supersedes=["m1"])
        env.add("Port 7070.", supersedes=["m2"])
        before = env.snapshot()
        related = {f"m{n}": env.g1.call("memory.related", {"id": f"m{n}"}) for n in (1, 2, 3)}
        link = "memory.link"
        # Two long (m1 -> m2, closing m2 -> m1) and three long (m1 -> m3 over m2).
        for older, cycle in (("m2", ["m1", "m2", "m1"]), ("m3", ["m1", "m3", "m2", "m1"])):
            error = fails(
                env.g1, link, {"from": "m1", "to": older, "relation": "supersedes"},
                "conflict.link_cycle",
            )  # fmt: skip
            assert error.data["cycle"] == cycle
            assert "fix" in error.data
        # memory.add's supersedes, on a new memory (never a cycle) and on one it dedupes to.
        again = {"space": "user", "content": "Port 8080.", "supersedes": ["m3"]}
        error = fails(env.g2, "memory.add", again, "conflict.link_cycle")
        assert error.data["cycle"] == ["m1", "m3", "m2", "m1"]
        assert env.snapshot() == before
        assert {
            f"m{n}": env.g1.call("memory.related", {"id": f"m{n}"}) for n in (1, 2, 3)
        } == related
        assert list_ids(env.g1) == ["m3"]
        # A deleted link end still counts: restoring it would bring the cycle back.
        env.g1.call("memory.delete", {"id": "m2", "revision": 1})
        fails(
            env.g1, link, {"from": "m1", "to": "m3", "relation": "supersedes"},
            "conflict.link_cycle",
        )  # fmt: skip
        env.g1.call("memory.restore", {"id": "m2"})
        assert list_ids(env.g1) == ["m3"]
        # Other relations may loop, and an unlinked supersedes no longer counts.
        _link(env, "m1", "m3", "follows")
        env.g1.call("memory.unlink", {"from": "m3", "to": "m2", "relation": "supersedes"})
        _link(env, "m2", "m3")
        assert list_ids(env.g1) == ["m2"]

    def test_a_memory_without_links_reads_as_before(self, env: Env) -> None:
        env.add("plain")
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert "superseded_by" not in memory
        (hit,) = env.g1.call("memory.search", {"query": "plain", "include_superseded": True})[
            "results"
        ]
        assert "superseded_by" not in hit
        assert env.g1.call("memory.related", {"id": "m1"}) == {"id": "m1", "links": []}

    def test_history_shows_each_link_and_unlink(self, env: Env) -> None:
        env.add("one")
        env.add("two")
        assert "links" not in env.g1.call("memory.history", {"id": "m1"})  # as RFC-0020's
        _link(env, "m2", "m1", "causes")
        env.g2.call("memory.unlink", {"from": "m2", "to": "m1", "relation": "causes"})
        history = env.g1.call("memory.history", {"id": "m1"})
        assert len(history["versions"]) == 1
        assert [
            (e["action"], e["id"], e["relation"], e["direction"], e["by"]["principal"])
            for e in history["links"]
        ] == [("unlink", "m2", "causes", "in", "g2"), ("link", "m2", "causes", "in", "g1")]
        assert history["links"][0]["ts"] >= history["links"][1]["ts"]
        outgoing = env.g1.call("memory.history", {"id": "m2"})["links"]
        assert {e["direction"] for e in outgoing} == {"out"}
