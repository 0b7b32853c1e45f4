"""Memories through the use cases: add, update, delete, restore, history, versions, tombstones,
purge and list (RFC-0020 sections 2 and 3)."""

from __future__ import annotations

import re
from datetime import timedelta

from ..usecases.memories import sweep_tombstones
from ..usecases.settings import MemorySettings
from .support import G3, Env, StoreFixtures, fails, ids, list_ids, search_ids

__all__ = ["MemoryContract"]


class MemoryContract(StoreFixtures):
    """memory.add, update, delete, restore, history, get, purge and list on the store."""

    # -- memory.add -------------------------------------------------------------------------

    def test_add(self, env: Env) -> None:
        result = env.g1.call(
            "memory.add",
            {
                "space": "project/venom-std",
                "kind": "fact",
                "title": "Zig pin",
                "content": "venom-std pins Zig with .zigversion.",
                "tags": ["zig", "build"],
            },
        )
        assert result == {"id": "m1", "revision": 1, "changed": True}
        memory = env.g2.call("memory.get", {"id": "m1"})
        assert memory == {
            "id": "m1",
            "space": "project/venom-std",
            "kind": "fact",
            "title": "Zig pin",
            "tags": ["zig", "build"],
            "importance": "normal",
            "branches": [],
            "revision": 1,
            "author": {"principal": "g1", "label": "claude-code"},
            "updated_by": {"principal": "g1", "label": "claude-code"},
            "created": memory["created"],
            "updated": memory["created"],
            "content": "venom-std pins Zig with .zigversion.",
            "embedding": "off",
        }
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", memory["created"])

    def test_add_defaults_and_absent_members(self, env: Env) -> None:
        env.as_(G3).call("memory.add", {"space": "a", "content": "no title, no tags"})
        memory = env.owner.call("memory.get", {"id": "m1"})
        assert memory["kind"] == "note"
        assert memory["tags"] == []
        assert memory["author"] == {"principal": "g3"}
        for absent in ("title", "session", "deleted"):
            assert absent not in memory

    # -- origin (ADR 0040) ------------------------------------------------------------------

    def test_origin_is_kept_and_shown_by_get_list_search_and_export(self, env: Env) -> None:
        origin = {
            "format": "server-memory",
            "author": "Ada Lövelace",
            "created": "2025-01-02T03:04:05Z",
            "id": "entity:Zig pin",
        }
        text = "venom-std pins Zig with .zigversion."
        env.g1.call("memory.add", {"space": "user", "content": text, "origin": origin})
        env.add("a memory of this store's own")
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert memory["origin"] == origin
        assert memory["author"] == {"principal": "g1", "label": "claude-code"}
        assert "origin" not in env.g1.call("memory.get", {"id": "m2"})
        listed = {hit["id"]: hit for hit in env.g1.call("memory.list")["memories"]}
        assert listed["m1"]["origin"] == origin
        assert "origin" not in listed["m2"]
        (hit,) = env.g1.call("memory.search", {"query": "zigversion"})["results"]
        assert hit["origin"] == origin
        lines = env.owner.call("store.export", {})["lines"]
        exported = {line["id"]: line for line in lines if line["type"] == "memory"}
        assert exported["m1"]["origin"] == origin
        assert "origin" not in exported["m2"]

    def test_origin_survives_update_delete_and_restore(self, env: Env) -> None:
        origin = {"format": "basic-memory", "id": "notes/zig.md"}
        env.g1.call("memory.add", {"space": "user", "content": "first text", "origin": origin})
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "content": "second text"})
        env.g1.call("memory.delete", {"id": "m1", "revision": 2})
        env.g1.call("memory.restore", {"id": "m1"})
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert (memory["revision"], memory["origin"]) == (4, origin)
        assert env.g1.call("memory.get", {"id": "m1", "revision": 1})["origin"] == origin

    def test_origin_is_checked(self, env: Env) -> None:
        add = {"space": "user", "content": "text"}
        fails(env.g1, "memory.add", {**add, "origin": {"id": "x"}}, "invalid_params.missing")
        fails(
            env.g1,
            "memory.add",
            {**add, "origin": {"format": "Not A Name"}},
            "invalid_params.origin",
            "origin",
        )
        fails(
            env.g1,
            "memory.add",
            {**add, "origin": {"format": "x", "by": "y"}},
            "invalid_params.unknown",
            "origin",
        )
        fails(
            env.g1,
            "memory.add",
            {**add, "origin": {"format": "x", "author": "a\nb"}},
            "invalid_params.type",
            "origin",
        )
        fails(
            env.g1,
            "memory.add",
            {**add, "origin": {"format": "x", "id": "i" * 513}},
            "invalid_params.range",
            "origin",
        )
        fails(env.g1, "memory.add", {**add, "origin": "server-memory"}, "invalid_params.type")
        assert env.g1.call("memory.list") == {"memories": [], "next": None}

    def test_add_same_content_same_space_returns_existing(self, env: Env) -> None:
        first = {"space": "user", "content": "Prefers small PRs.", "title": "PRs", "tags": ["git"]}
        assert env.g1.call("memory.add", first) == {"id": "m1", "revision": 1, "changed": True}
        again = {**first, "title": "Other", "kind": "decision", "tags": ["other"]}
        assert env.g2.call("memory.add", again) == {"id": "m1", "revision": 1, "changed": False}
        memory = env.owner.call("memory.get", {"id": "m1"})
        assert (memory["title"], memory["kind"], memory["tags"]) == ("PRs", "note", ["git"])
        assert memory["author"]["principal"] == "g1"
        assert len(env.owner.call("memory.history", {"id": "m1"})["versions"]) == 1

    def test_add_same_content_other_space_is_new(self, env: Env) -> None:
        assert env.add("shared text", space="a") == "m1"
        assert env.add("shared text", space="b") == "m2"

    def test_add_after_update_dedups_on_current_content(self, env: Env) -> None:
        env.add("old words")
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "content": "new words"})
        assert env.g1.call("memory.add", {"space": "user", "content": "new words"})["id"] == "m1"
        assert env.add("old words") == "m2"

    def test_provenance_follows_the_caller(self, env: Env) -> None:
        env.add("written by g1")
        env.g2.call("memory.update", {"id": "m1", "revision": 1, "title": "edited by g2"})
        memory = env.owner.call("memory.get", {"id": "m1"})
        assert memory["author"] == {"principal": "g1", "label": "claude-code"}
        assert memory["updated_by"] == {"principal": "g2", "label": "codex"}

    # -- memory.update ----------------------------------------------------------------------

    def test_update_with_revision(self, env: Env) -> None:
        env.add("version one")
        result = env.g1.call("memory.update", {"id": "m1", "revision": 1, "content": "version two"})
        assert result == {"id": "m1", "revision": 2, "changed": True}
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert (memory["content"], memory["revision"]) == ("version two", 2)
        assert memory["updated"] > memory["created"]
        assert search_ids(env.g1, "two") == ["m1"]
        assert search_ids(env.g1, "one") == []

    def test_update_stale_revision_conflicts(self, env: Env) -> None:
        env.add("version one")
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "content": "version two"})
        before = env.snapshot()
        error = fails(
            env.g2,
            "memory.update",
            {"id": "m1", "revision": 1, "content": "stale edit"},
            "conflict.memory_revision",
        )
        assert error.data == {"current": 2}
        assert error.message == "m1 is at revision 2"
        assert env.snapshot() == before

    def test_update_to_another_live_content_conflicts(self, env: Env) -> None:
        env.add("first text")
        env.add("second text")
        before = env.snapshot()
        error = fails(
            env.g1,
            "memory.update",
            {"id": "m2", "revision": 1, "content": "first text"},
            "conflict.memory_duplicate",
        )
        assert error.data == {"id": "m1"}
        assert env.snapshot() == before

    def test_update_to_content_of_a_deleted_memory_is_allowed(self, env: Env) -> None:
        env.add("first text")
        env.add("second text")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        result = env.g1.call("memory.update", {"id": "m2", "revision": 1, "content": "first text"})
        assert result["changed"] is True

    def test_update_without_changes(self, env: Env) -> None:
        env.add("same", title="Title", tags=["a"], kind="fact")
        before = env.snapshot()
        same = {"content": "same", "title": "Title", "tags": ["a"], "kind": "fact"}
        result = env.g1.call("memory.update", {"id": "m1", "revision": 1, **same})
        assert result == {"id": "m1", "revision": 1, "changed": False}
        assert env.snapshot() == before
        assert len(env.owner.call("memory.history", {"id": "m1"})["versions"]) == 1

    def test_update_empty_title_clears_it(self, env: Env) -> None:
        env.add("text", title="A title")
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "title": ""})
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert "title" not in memory
        assert memory["revision"] == 2

    def test_update_empty_tags_clears_them(self, env: Env) -> None:
        env.add("text", tags=["one", "two"])
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "tags": []})
        assert env.g1.call("memory.get", {"id": "m1"})["tags"] == []
        assert list_ids(env.g1, tags=["one"]) == []

    def test_update_kind_and_tags(self, env: Env) -> None:
        env.add("text", tags=["one"])
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "kind": "procedure"})
        env.g1.call("memory.update", {"id": "m1", "revision": 2, "tags": ["two", "three"]})
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert (memory["kind"], memory["tags"], memory["revision"]) == (
            "procedure",
            ["two", "three"],
            3,
        )

    def test_update_missing_memory(self, env: Env) -> None:
        fails(
            env.g1,
            "memory.update",
            {"id": "m9", "revision": 1, "content": "x"},
            "not_found.memory",
        )

    def test_the_largest_id_is_well_formed(self, env: Env) -> None:
        fails(env.owner, "memory.get", {"id": "m9223372036854775807"}, "not_found.memory")

    # -- delete, restore, history, versions -------------------------------------------------

    def test_delete_is_soft(self, env: Env) -> None:
        env.add("soon deleted words", space="a")
        env.add("kept words", space="a")
        result = env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        assert set(result) == {"id", "revision", "deleted"}
        assert (result["id"], result["revision"]) == ("m1", 2)
        assert search_ids(env.g1, "words") == ["m2"]
        assert list_ids(env.g1) == ["m2"]
        assert env.g1.call("space.list") == {
            "spaces": [
                {
                    "space": "a",
                    "memories": 1,
                    "updated": env.g1.call("memory.get", {"id": "m2"})["updated"],
                }
            ]
        }
        fails(env.g1, "memory.get", {"id": "m1"}, "not_found.memory")
        memory = env.g1.call("memory.get", {"id": "m1", "include_deleted": True})
        assert memory["deleted"] == result["deleted"]
        assert memory["revision"] == 2
        assert memory["content"] == "soon deleted words"
        listed = env.g1.call("memory.list", {"include_deleted": True})["memories"]
        assert ids(listed) == ["m2", "m1"]
        assert listed[1]["deleted"] == result["deleted"]
        assert "deleted" not in listed[0]

    def test_delete_stale_revision_conflicts(self, env: Env) -> None:
        env.add("text")
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "title": "t"})
        before = env.snapshot()
        error = fails(
            env.g1, "memory.delete", {"id": "m1", "revision": 1}, "conflict.memory_revision"
        )
        assert error.data == {"current": 2}
        assert env.snapshot() == before

    def test_delete_twice_is_not_found(self, env: Env) -> None:
        env.add("text")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        fails(env.g1, "memory.delete", {"id": "m1", "revision": 2}, "not_found.memory")

    def test_restore(self, env: Env) -> None:
        env.add("comes back")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        assert env.g2.call("memory.restore", {"id": "m1"}) == {"id": "m1", "revision": 3}
        memory = env.g1.call("memory.get", {"id": "m1"})
        assert "deleted" not in memory
        assert memory["updated_by"] == {"principal": "g2", "label": "codex"}
        assert search_ids(env.g1, "comes") == ["m1"]
        assert list_ids(env.g1) == ["m1"]

    def test_restore_when_a_duplicate_is_live_conflicts(self, env: Env) -> None:
        env.add("twice")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        assert env.add("twice") == "m2"
        before = env.snapshot()
        error = fails(env.g1, "memory.restore", {"id": "m1"}, "conflict.memory_duplicate")
        assert error.data == {"id": "m2"}
        assert env.snapshot() == before

    def test_history_newest_first(self, env: Env) -> None:
        env.add("héllo")  # 6 bytes
        env.g2.call("memory.update", {"id": "m1", "revision": 1, "content": "hello, world"})
        env.g1.call("memory.delete", {"id": "m1", "revision": 2})
        env.g2.call("memory.restore", {"id": "m1"})
        versions = env.owner.call("memory.history", {"id": "m1"})["versions"]
        assert [(v["revision"], v["action"]) for v in versions] == [
            (4, "restore"),
            (3, "delete"),
            (2, "update"),
            (1, "add"),
        ]
        assert [v["by"]["principal"] for v in versions] == ["g2", "g1", "g2", "g1"]
        assert versions[0]["by"] == {"principal": "g2", "label": "codex"}
        assert [v["bytes"] for v in versions] == [12, 12, 12, 6]
        stamps = [v["ts"] for v in versions]
        assert stamps == sorted(stamps, reverse=True)
        assert len(set(stamps)) == 4
        for version in versions:
            assert set(version) == {"revision", "action", "by", "ts", "bytes"}

    def test_history_of_a_deleted_memory_is_readable(self, env: Env) -> None:
        env.add("text")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        assert len(env.g1.call("memory.history", {"id": "m1"})["versions"]) == 2

    def test_get_revision_reads_the_old_version(self, env: Env) -> None:
        env.add("first words", title="First", tags=["one"])
        created = env.g1.call("memory.get", {"id": "m1"})
        env.g2.call(
            "memory.update",
            {"id": "m1", "revision": 1, "content": "second words", "title": "Second", "tags": []},
        )
        old = env.owner.call("memory.get", {"id": "m1", "revision": 1})
        assert old["revision"] == 1
        assert (old["content"], old["title"], old["tags"]) == ("first words", "First", ["one"])
        assert old["updated_by"] == {"principal": "g1", "label": "claude-code"}
        assert old["updated"] == created["updated"]
        current = env.owner.call("memory.get", {"id": "m1", "revision": 2})
        assert (current["content"], current["revision"]) == ("second words", 2)
        fails(env.owner, "memory.get", {"id": "m1", "revision": 3}, "not_found.memory_revision")

    def test_versions_beyond_max_versions_are_dropped(self, env: Env) -> None:
        env.app.settings = MemorySettings(max_versions=3)
        env.add("v1")
        for revision in range(1, 7):
            env.g1.call(
                "memory.update", {"id": "m1", "revision": revision, "content": f"v{revision + 1}"}
            )
        versions = env.owner.call("memory.history", {"id": "m1"})["versions"]
        assert [v["revision"] for v in versions] == [7, 6, 5]
        assert env.owner.call("memory.get", {"id": "m1", "revision": 5})["content"] == "v5"
        fails(env.owner, "memory.get", {"id": "m1", "revision": 2}, "not_found.memory_revision")
        fails(env.owner, "memory.get", {"id": "m1", "revision": 4}, "not_found.memory_revision")
        env.g1.call("memory.delete", {"id": "m1", "revision": 7})
        versions = env.owner.call("memory.history", {"id": "m1"})["versions"]
        assert [v["revision"] for v in versions] == [8, 7, 6]

    def test_a_lowered_max_versions_holds_before_the_next_change(self, env: Env) -> None:
        env.add("v1")
        for revision in range(1, 6):
            env.g1.call(
                "memory.update", {"id": "m1", "revision": revision, "content": f"v{revision + 1}"}
            )
        env.app.settings = MemorySettings(max_versions=2)  # as a config reload does
        versions = env.owner.call("memory.history", {"id": "m1"})["versions"]
        assert [v["revision"] for v in versions] == [6, 5]
        assert env.owner.call("memory.get", {"id": "m1", "revision": 5})["content"] == "v5"
        fails(env.owner, "memory.get", {"id": "m1", "revision": 4}, "not_found.memory_revision")

    def test_sweep_removes_old_tombstones_only(self, env: Env) -> None:
        env.add("old tombstone")
        env.add("recent tombstone")
        env.add("live memory")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        env.clock.advance(timedelta(days=31))
        env.g1.call("memory.delete", {"id": "m2", "revision": 1})
        assert sweep_tombstones(env.app) == 1
        fails(env.owner, "memory.get", {"id": "m1", "include_deleted": True}, "not_found.memory")
        fails(env.owner, "memory.history", {"id": "m1"}, "not_found.memory")
        assert env.owner.call("memory.get", {"id": "m2", "include_deleted": True})["deleted"]
        assert list_ids(env.owner, include_deleted=True) == ["m3", "m2"]
        assert sweep_tombstones(env.app) == 0

    def test_purge(self, env: Env) -> None:
        env.add("first purged text")
        env.add("second purged text")
        assert env.owner.call("memory.purge", {"id": "m2"}) == {"id": "m2"}
        fails(env.owner, "memory.get", {"id": "m2", "include_deleted": True}, "not_found.memory")
        fails(env.owner, "memory.history", {"id": "m2"}, "not_found.memory")
        assert search_ids(env.owner, "second") == []
        assert env.add("second purged text") == "m3"
        fails(env.owner, "memory.purge", {"id": "m2"}, "not_found.memory")

    def test_purge_a_tombstone(self, env: Env) -> None:
        env.add("text")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        env.owner.call("memory.purge", {"id": "m1"})
        assert list_ids(env.owner, include_deleted=True) == []
        with env.app.store.read() as tx:
            assert tx.counts().versions == 0

    # -- memory.list ------------------------------------------------------------------------

    def test_list_pages_newest_first(self, env: Env) -> None:
        for n in range(5):
            env.add(f"memory {n}")
        page = env.g1.call("memory.list", {"limit": 2})
        assert (ids(page["memories"]), page["next"]) == (["m5", "m4"], "m4")
        page = env.g1.call("memory.list", {"limit": 2, "after": "m4"})
        assert (ids(page["memories"]), page["next"]) == (["m3", "m2"], "m2")
        page = env.g1.call("memory.list", {"limit": 2, "after": "m2"})
        assert (ids(page["memories"]), page["next"]) == (["m1"], None)

    def test_list_exact_pages_end_with_null(self, env: Env) -> None:
        for n in range(4):
            env.add(f"memory {n}")
        page = env.g1.call("memory.list", {"limit": 2, "after": "m3"})
        assert (ids(page["memories"]), page["next"]) == (["m2", "m1"], None)
        page = env.g1.call("memory.list", {"limit": 4})
        assert (ids(page["memories"]), page["next"]) == (["m4", "m3", "m2", "m1"], None)
        assert env.g1.call("memory.list", {"after": "m1"}) == {"memories": [], "next": None}

    def test_list_hit_shape(self, env: Env) -> None:
        env.add("listed text", title="Listed", tags=["x"])
        (hit,) = env.g1.call("memory.list")["memories"]
        assert hit["snippet"] == "listed text"
        assert hit["title"] == "Listed"
        for absent in ("content", "score", "fts_rank", "vector_rank", "similarity", "embedding"):
            assert absent not in hit

    def test_list_filters(self, env: Env) -> None:
        env.add("one", space="a", kind="fact", tags=["x", "y"])
        env.add("two", space="b", kind="fact", tags=["x"])
        env.add("three", space="a", kind="note", tags=["y"])
        env.add("four", space="c", kind="decision")
        env.g1.call("memory.delete", {"id": "m4", "revision": 1})
        assert list_ids(env.g1, spaces=["a"]) == ["m3", "m1"]
        assert list_ids(env.g1, spaces=["a", "b"]) == ["m3", "m2", "m1"]
        assert list_ids(env.g1, kinds=["fact"]) == ["m2", "m1"]
        assert list_ids(env.g1, tags=["x"]) == ["m2", "m1"]
        assert list_ids(env.g1, tags=["x", "y"]) == ["m1"]
        assert list_ids(env.g1, spaces=["a"], kinds=["note"]) == ["m3"]
        assert list_ids(env.g1, kinds=["decision"]) == []
        assert list_ids(env.g1, kinds=["decision"], include_deleted=True) == ["m4"]
        assert list_ids(env.g1, spaces=["nothing-here"]) == []
