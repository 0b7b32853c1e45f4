"""The store contract: a pytest suite any :class:`~venom_mem_core.ports.Store` must pass.

It drives the store through the use cases, with :class:`~venom_mem_core.local.LocalClient`
calling verbs exactly as the daemon does after ``hello``, so a pass means the store gives the
domain everything RFC-0020 needs: dedup, revisions, versions, soft delete, tombstones, purge,
paging, filters, search that ranks only what the caller can read (MEM-06), lineage and
durable clients. A few tests use the port directly, for what only it can show: rollback,
snapshots and the uniqueness backstop.

Fixture decision: a subclass provides ``store_factory``, a callable that opens a fresh, empty
store on every call and closes them all at teardown (:func:`opened_stores`). The suite builds
its ``store`` fixture from it, and the MEM-06 test calls it twice: one store holding readable
and unreadable rows, one holding only the readable rows, which must rank alike.

The class has no ``Test`` prefix, so pytest collects it only through a subclass.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import attrs
import pytest

from ..clock import FixedClock, parse_ts
from ..errors import VenomError
from ..grants import Access
from ..local import LocalClient
from ..ports import MemoryFilter, Store
from ..ranking import search_terms
from ..records import Grant, Memory, Principal, Provenance
from ..search_options import NATURAL_WEIGHTS, RFC_WEIGHTS
from ..usecases.app import App, MemorySettings
from ..usecases.memories import sweep_tombstones
from ..usecases.principals import OWNER, recheck, resolve_token, unknown_principal
from .context_contract import ContextContract

__all__ = ["Env", "StoreContract", "StoreFactory", "opened_stores"]

StoreFactory = Callable[[], Store]

READ_ALL = Grant(right="read", scope="*")
WRITE_ALL = Grant(right="write", scope="*")
G1 = Principal(id="g1", label="claude-code", grants=(READ_ALL, WRITE_ALL))
G2 = Principal(id="g2", label="codex", grants=(READ_ALL, WRITE_ALL))
G3 = Principal(id="g3", grants=(Grant(right="write", scope="space:a"),))
UNKNOWN = unknown_principal((READ_ALL,))

# Looks like an RFC-0005 token to the secret check; it is not a real one.
FAKE_TOKEN = "vnt1.venom-mem.g1." + "Q" * 43
TOKEN_RE = re.compile(r"^vnt1\.venom-mem\.g[1-9][0-9]*\.[A-Za-z0-9_-]{43}$")
FIX = "venom-mem whoami --json  # set VENOM_MEM_TOKEN to a client token"


@contextmanager
def opened_stores(open_store: Callable[[], Store]) -> Iterator[StoreFactory]:
    """A factory that remembers every store it opened, and closes them all on exit."""
    opened: list[Store] = []

    def factory() -> Store:
        store = open_store()
        opened.append(store)
        return store

    try:
        yield factory
    finally:
        for store in reversed(opened):
            store.close()


@attrs.define
class Env:
    """An app on one store with a clock that moves 1 ms per reading, and its callers."""

    app: App
    clock: FixedClock

    @classmethod
    def on(cls, store: Store, settings: MemorySettings | None = None) -> Env:
        clock = FixedClock(step=timedelta(milliseconds=1))
        app = App(store=store, clock=clock, settings=settings or MemorySettings())
        return cls(app=app, clock=clock)

    def as_(self, who: Principal) -> LocalClient:
        return LocalClient(self.app, who)

    @property
    def owner(self) -> LocalClient:
        return self.as_(OWNER)

    @property
    def g1(self) -> LocalClient:
        return self.as_(G1)

    @property
    def g2(self) -> LocalClient:
        return self.as_(G2)

    @property
    def g3(self) -> LocalClient:
        return self.as_(G3)

    @property
    def unknown(self) -> LocalClient:
        return self.as_(UNKNOWN)

    def add(self, content: str, space: str = "user", **params: Any) -> str:
        """Add as g1 and return the new ID."""
        result = self.g1.call("memory.add", {"space": space, "content": content, **params})
        assert result["changed"] is True, result
        return str(result["id"])

    def snapshot(self) -> dict[str, Any]:
        """Everything a caller could see change, as owner."""
        return {
            "memories": self.owner.call("memory.list", {"include_deleted": True, "limit": 200}),
            "spaces": self.owner.call("space.list"),
            "sessions": self.owner.call("session.list", {"limit": 200}),
        }


def fails(
    client: LocalClient,
    verb: str,
    params: Mapping[str, Any] | None,
    code: str,
    param: str | None = None,
) -> VenomError:
    """Call, expect ``code`` (and ``data.param`` when given), return the error."""
    with pytest.raises(VenomError) as caught:
        client.call(verb, params)
    error = caught.value
    assert error.code == code, f"{verb} {params!r}: expected {code}, got {error!r}"
    if param is not None:
        assert error.data.get("param") == param, f"{verb}: expected param {param}, {error!r}"
    return error


class _Unreadable:
    """A store that fails every access: what is answered in spite of it needs no store."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store was used: {name}")


def ids(results: list[dict[str, Any]]) -> list[str]:
    return [str(hit["id"]) for hit in results]


def search_ids(client: LocalClient, query: str, **params: Any) -> list[str]:
    return ids(client.call("memory.search", {"query": query, **params})["results"])


def list_ids(client: LocalClient, **params: Any) -> list[str]:
    return ids(client.call("memory.list", params)["memories"])


def draft(content: str, space: str = "user") -> Memory:
    """A memory row for the port-level tests; the store assigns its ID."""
    who = Provenance(principal="owner", label="owner")
    return Memory(
        id=0,
        space=space,
        kind="note",
        content=content,
        content_sha256=hashlib.sha256(content.encode()).digest(),
        author=who,
        updated_by=who,
        created="2026-11-09T10:00:00.000Z",
        updated="2026-11-09T10:00:00.000Z",
    )


# Inputs that break one grammar or limit each: (verb, params, code, data.param).
_ADD = {"space": "user", "content": "fresh text"}
BAD_INPUT: list[tuple[str, dict[str, Any], str, str]] = [
    ("memory.add", {**_ADD, "space": "Bad"}, "invalid_params.space", "space"),
    ("memory.add", {**_ADD, "space": "a//b"}, "invalid_params.space", "space"),
    ("memory.add", {**_ADD, "space": "/lead"}, "invalid_params.space", "space"),
    ("memory.add", {**_ADD, "space": ""}, "invalid_params.space", "space"),
    ("memory.add", {**_ADD, "space": "a" * 129}, "invalid_params.space", "space"),
    ("memory.add", {**_ADD, "tags": ["Zig"]}, "invalid_params.tag", "tags"),
    ("memory.add", {**_ADD, "tags": ["-zig"]}, "invalid_params.tag", "tags"),
    ("memory.add", {**_ADD, "tags": ["t" * 65]}, "invalid_params.tag", "tags"),
    ("memory.add", {**_ADD, "tags": ["zig", "zig"]}, "invalid_params.tag", "tags"),
    ("memory.add", {**_ADD, "tags": [f"t{i}" for i in range(17)]}, "invalid_params.range", "tags"),
    ("memory.add", {**_ADD, "title": "t" * 201}, "invalid_params.range", "title"),
    ("memory.add", {**_ADD, "title": "é" * 101}, "invalid_params.range", "title"),
    ("memory.add", {**_ADD, "title": "line\nbreak"}, "invalid_params.type", "title"),
    ("memory.add", {**_ADD, "title": "bell\x07"}, "invalid_params.type", "title"),
    ("memory.add", {**_ADD, "content": ""}, "invalid_params.range", "content"),
    ("memory.add", {**_ADD, "content": "x" * 65537}, "invalid_params.range", "content"),
    (
        "memory.add",
        {**_ADD, "content": f"the token is {FAKE_TOKEN}, keep it"},
        "invalid_params.secret_content",
        "content",
    ),
    ("memory.add", {**_ADD, "title": FAKE_TOKEN}, "invalid_params.secret_content", "title"),
    ("memory.add", {**_ADD, "kind": "bogus"}, "invalid_params.type", "kind"),
    ("memory.add", {**_ADD, "author": {"principal": "owner"}}, "invalid_params.unknown", "author"),
    ("memory.add", {**_ADD, "content": 5}, "invalid_params.type", "content"),
    ("memory.add", {**_ADD, "tags": "zig"}, "invalid_params.type", "tags"),
    ("memory.add", {**_ADD, "session": "x1"}, "invalid_params.type", "session"),
    ("memory.add", {"content": "no space"}, "invalid_params.missing", "space"),
    ("memory.get", {"id": "x1"}, "invalid_params.type", "id"),
    ("memory.get", {"id": "m01"}, "invalid_params.type", "id"),
    ("memory.update", {"id": "x1", "revision": 1, "content": "new"}, "invalid_params.type", "id"),
    ("memory.update", {"id": "m1", "revision": 1}, "invalid_params.missing", "content"),
    ("memory.update", {"id": "m1", "revision": 1, "tags": ["Bad"]}, "invalid_params.tag", "tags"),
    (
        "memory.update",
        {"id": "m1", "revision": 1, "content": FAKE_TOKEN},
        "invalid_params.secret_content",
        "content",
    ),
    (
        "memory.update",
        {"id": "m1", "revision": 1, "title": "x" * 201},
        "invalid_params.range",
        "title",
    ),
    (
        "memory.update",
        {"id": "m1", "revision": 1, "content": ""},
        "invalid_params.range",
        "content",
    ),
    (
        "memory.update",
        {"id": "m1", "revision": "1", "content": "new"},
        "invalid_params.type",
        "revision",
    ),
    (
        "memory.update",
        {"id": "m1", "revision": 0, "content": "new"},
        "invalid_params.range",
        "revision",
    ),
    ("memory.update", {"id": "m1", "revision": 1, "kind": "x"}, "invalid_params.type", "kind"),
    ("memory.delete", {"id": "m1"}, "invalid_params.missing", "revision"),
    ("memory.search", {"query": "zig", "limit": 101}, "invalid_params.range", "limit"),
    ("memory.search", {"query": "zig", "limit": 0}, "invalid_params.range", "limit"),
    ("memory.search", {"query": "zig", "spaces": ["Bad"]}, "invalid_params.space", "spaces"),
    ("memory.search", {"query": "zig", "kinds": ["bogus"]}, "invalid_params.type", "kinds"),
    ("memory.search", {"query": "zig", "tags": ["Bad"]}, "invalid_params.tag", "tags"),
    ("memory.search", {"query": 5}, "invalid_params.type", "query"),
    ("memory.list", {"after": "x"}, "invalid_params.type", "after"),
    ("memory.list", {"limit": 201}, "invalid_params.range", "limit"),
    ("session.start", {"harness": "h" * 65}, "invalid_params.range", "harness"),
    ("session.start", {"harness": ""}, "invalid_params.range", "harness"),
    (
        "session.start",
        {"harness": "codex", "harness_session": "x" * 257},
        "invalid_params.range",
        "harness_session",
    ),
    ("session.start", {"harness": "codex", "cwd": "relative/dir"}, "invalid_params.type", "cwd"),
    ("session.start", {"harness": "codex", "parent": "s1"}, "invalid_params.missing", "relation"),
    (
        "session.start",
        {"harness": "codex", "relation": "fork"},
        "invalid_params.relation",
        "relation",
    ),
    (
        "session.start",
        {"harness": "codex", "parent": "s1", "relation": "sibling"},
        "invalid_params.relation",
        "relation",
    ),
    (
        "session.start",
        {"harness": "codex", "parent": "x1", "relation": "fork"},
        "invalid_params.type",
        "parent",
    ),
]

# User text is never FTS5 syntax: (query, whether it finds the memory below).
FTS_SYNTAX_TEXT = (
    'Plain words: NOT this AND that OR near x:y, a -b, "unbalanced quotes" and (parens).'
)
FTS_SYNTAX_QUERIES: list[tuple[str, bool]] = [
    ('"', False),
    ("*", False),
    ("NEAR(", True),
    ("a -b", True),
    ("AND", True),
    ("OR", True),
    ("(", False),
    ("x:y", True),
    ('"unbalanced', True),
    ("NOT", True),
    ("^", False),
    ("+", False),
    ("-", False),
    ("NEAR(a b)", True),
    ("title:plain", False),  # a column filter would match the title; a phrase does not
]


class StoreContract(ContextContract):
    """Every behaviour the use cases need from a store. Subclass it; see the module doc."""

    # -- fixtures ----------------------------------------------------------------------------

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        raise NotImplementedError(
            "a StoreContract subclass provides a store_factory fixture (see opened_stores)"
        )

    @pytest.fixture
    def store(self, store_factory: StoreFactory) -> Store:
        return store_factory()

    @pytest.fixture
    def env(self, store: Store) -> Env:
        return Env.on(store)

    # -- the port itself ---------------------------------------------------------------------

    def test_is_a_store(self, store: Store) -> None:
        assert isinstance(store, Store)
        facts = store.describe()
        assert {"path", "schema_version", "sqlite_version", "bytes"} <= set(facts)
        assert isinstance(facts["schema_version"], int)
        assert facts["schema_version"] >= 1

    def test_write_rolls_back_on_exception(self, store: Store) -> None:
        class Boom(Exception):
            pass

        def write_then_fail() -> None:
            with store.write() as tx:
                tx.insert_memory(draft("rolled back"))
                tx.set_meta("next_principal", "9")
                raise Boom

        with pytest.raises(Boom):
            write_then_fail()
        with store.read() as tx:
            assert tx.list_memories(MemoryFilter(access=Access(everything=True)), None, 10) == []
            assert tx.get_meta("next_principal") == "1"

    def test_read_sees_one_snapshot(self, store: Store) -> None:
        with store.write() as tx:
            id_ = tx.insert_memory(draft("first text"))
        with store.read() as reader:
            before = reader.get_memory(id_)
            assert before is not None
            with store.write() as tx:
                tx.replace_memory(attrs.evolve(before, title="changed", revision=2))
                tx.insert_memory(draft("second text"))
            assert reader.get_memory(id_) == before
            everything = MemoryFilter(access=Access(everything=True))
            assert [m.id for m in reader.list_memories(everything, None, 10)] == [id_]
        with store.read() as reader:
            after = reader.get_memory(id_)
            assert after is not None
            assert after.title == "changed"

    def test_live_content_is_unique(self, store: Store) -> None:
        with store.write() as tx:
            tx.insert_memory(draft("same text"))
            tx.insert_memory(draft("same text", space="other"))
        with pytest.raises(VenomError) as caught, store.write() as tx:
            tx.insert_memory(draft("same text"))
        assert caught.value.code == "conflict.memory_duplicate"

    def test_ids_are_never_reused(self, store: Store) -> None:
        with store.write() as tx:
            first = tx.insert_memory(draft("one"))
            second = tx.insert_memory(draft("two"))
            tx.delete_memory(second)
        with store.write() as tx:
            third = tx.insert_memory(draft("three"))
        assert first < second < third

    # -- memory.add --------------------------------------------------------------------------

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

    def test_author_cannot_be_passed(self, env: Env) -> None:
        before = env.snapshot()
        fails(
            env.g1,
            "memory.add",
            {"space": "user", "content": "forged", "author": {"principal": "owner"}},
            "invalid_params.unknown",
            "author",
        )
        assert env.snapshot() == before

    def test_provenance_follows_the_caller(self, env: Env) -> None:
        env.add("written by g1")
        env.g2.call("memory.update", {"id": "m1", "revision": 1, "title": "edited by g2"})
        memory = env.owner.call("memory.get", {"id": "m1"})
        assert memory["author"] == {"principal": "g1", "label": "claude-code"}
        assert memory["updated_by"] == {"principal": "g2", "label": "codex"}

    # -- memory.update -----------------------------------------------------------------------

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

    def test_update_needs_something_to_change(self, env: Env) -> None:
        env.add("text")
        fails(
            env.g1,
            "memory.update",
            {"id": "m1", "revision": 1},
            "invalid_params.missing",
            "content",
        )

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

    # -- delete, restore, history, versions ----------------------------------------------------

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

    def test_purge_needs_admin(self, env: Env) -> None:
        env.add("text")
        error = fails(env.g1, "memory.purge", {"id": "m1"}, "denied.admin")
        assert error.data["principal"] == "g1"
        assert list_ids(env.owner) == ["m1"]

    # -- memory.list ---------------------------------------------------------------------------

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

    # -- memory.search -------------------------------------------------------------------------

    def test_search_finds_matches(self, env: Env) -> None:
        env.add("The proto tests need a writable XDG_RUNTIME_DIR.")
        env.add("Unrelated note about cooking.")
        env.add("More testing of the daemon.", title="Tests")
        result = env.g1.call("memory.search", {"query": "proto tests"})
        assert result["mode"] == "fts"
        assert "fallback" not in result
        assert ids(result["results"]) == ["m1", "m3"]
        assert [h["fts_rank"] for h in result["results"]] == [1, 2]
        assert [h["score"] for h in result["results"]] == [1 / 61, 1 / 62]
        assert search_ids(env.g1, "cooking") == ["m2"]
        assert search_ids(env.g1, "nothing-matches-this") == []

    def test_search_stems_and_folds(self, env: Env) -> None:
        env.add("Running the Café migrations")
        assert search_ids(env.g1, "runs") == ["m1"]
        assert search_ids(env.g1, "CAFE") == ["m1"]
        assert search_ids(env.g1, "migration") == ["m1"]

    def test_search_title_weighs_more_than_content(self, env: Env) -> None:
        env.add("a note that mentions zig once among other words", title="Other")
        env.add("a note that mentions nothing special among other words", title="Zig")
        assert search_ids(env.g1, "zig") == ["m2", "m1"]

    def test_search_hit_shape(self, env: Env) -> None:
        env.add("venom-std pins Zig with .zigversion.", title="Zig pin", tags=["zig"])
        (hit,) = env.g1.call("memory.search", {"query": "zig"})["results"]
        assert hit["snippet"] == "venom-std pins Zig with .zigversion."
        assert (hit["score"], hit["fts_rank"]) == (1 / 61, 1)
        for absent in ("content", "vector_rank", "similarity", "embedding", "deleted"):
            assert absent not in hit

    def test_search_long_content_snippet_is_short(self, env: Env) -> None:
        words = " ".join(f"word{n}" for n in range(400))
        env.add(f"{words} needle {words}")
        (hit,) = env.g1.call("memory.search", {"query": "needle"})["results"]
        assert "needle" in hit["snippet"]
        assert len(hit["snippet"].split()) <= 64
        assert len(hit["snippet"].encode()) < 1000

    @pytest.mark.parametrize(
        "content",
        ["needle " + "z" * 65000, "needle " + "缓存" * 10000, "needle " + "\x01" * 60000],
        ids=["one-long-token", "cjk-run", "controls"],
    )
    def test_a_hundred_hits_of_long_tokens_fit_one_frame(self, env: Env, content: str) -> None:
        """64 tokens can be one token as long as the content: snippets are bounded in bytes
        so the largest search reply stays under a 1 MiB frame (RFC-0020 section 5)."""
        for n in range(100):
            env.add(f"{content} {n}")
        reply = env.g1.call("memory.search", {"query": "needle", "limit": 100})
        assert len(reply["results"]) == 100
        snippet = reply["results"][0]["snippet"]
        assert len(snippet.encode()) <= 1024
        assert snippet.startswith("needle") or "needle" in snippet
        frame = json.dumps({"id": 1, "ok": reply}, ensure_ascii=False, separators=(",", ":"))
        assert len(frame.encode()) + 1 <= 1024 * 1024

    def test_search_filters(self, env: Env) -> None:
        env.add("zig one", space="a", kind="fact", tags=["x", "y"])
        env.add("zig two", space="b", kind="fact", tags=["x"])
        env.add("zig three", space="a", kind="note", tags=["y"])
        assert search_ids(env.g1, "zig", spaces=["a"]) == ["m3", "m1"]
        assert search_ids(env.g1, "zig", kinds=["fact"]) == ["m2", "m1"]
        assert search_ids(env.g1, "zig", tags=["x", "y"]) == ["m1"]
        assert search_ids(env.g1, "zig", spaces=["b"], tags=["y"]) == []
        assert search_ids(env.g1, "zig", limit=1) == ["m3"]

    def test_search_ties_by_highest_id(self, env: Env) -> None:
        for n in ("one", "two", "three"):
            env.add(f"same words {n}")
        result = env.g1.call("memory.search", {"query": "same"})["results"]
        assert ids(result) == ["m3", "m2", "m1"]
        assert [h["fts_rank"] for h in result] == [1, 2, 3]

    def test_search_leaves_out_deleted(self, env: Env) -> None:
        env.add("gone soon")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        assert search_ids(env.g1, "gone") == []

    def test_search_filters_narrow_without_reordering(self, env: Env) -> None:
        # Under everything-readable statistics (the built-in bm25's), "beta" is rare and
        # "alpha" common, so m2 outranks m1; statistics over space a alone would swap them.
        env.add("alpha alpha alpha gamma", space="a")
        env.add("beta beta gamma delta", space="a")
        for n in range(4):
            env.add(f"filler words number {n}", space="a")
        for n in range(10):
            env.add(f"alpha elsewhere {n}", space="b")
        everywhere = search_ids(env.owner, "alpha beta")
        in_a = search_ids(env.owner, "alpha beta", spaces=["a"])
        assert in_a == [id_ for id_ in everywhere if id_ in ("m1", "m2")]
        assert in_a == ["m2", "m1"]

    def test_search_only_returns_readable_rows(self, env: Env) -> None:
        env.owner.call("memory.add", {"space": "pub", "content": "shared plan"})
        env.owner.call("memory.add", {"space": "priv", "content": "secret shared plan"})
        reader = env.as_(Principal(id="g7", grants=(Grant(right="read", scope="space:pub"),)))
        result = reader.call("memory.search", {"query": "shared plan secret"})["results"]
        assert [(h["id"], h["fts_rank"], h["score"]) for h in result] == [("m1", 1, 1 / 61)]
        assert list_ids(reader) == ["m1"]
        assert sorted(search_ids(env.owner, "shared")) == ["m1", "m2"]
        error = fails(reader, "memory.search", {"query": "plan", "spaces": ["priv"]}, "denied.read")
        assert error.data["resource"] == "space:priv"
        fails(reader, "memory.get", {"id": "m2"}, "denied.read")
        assert reader.call("space.list") == {
            "spaces": [
                {
                    "space": "pub",
                    "memories": 1,
                    "updated": env.owner.call("memory.get", {"id": "m1"})["updated"],
                }
            ]
        }

    def test_search_ranks_as_if_only_readable_rows_existed(
        self, store_factory: StoreFactory
    ) -> None:
        """MEM-06: a hidden row changes neither the order nor fts_rank of visible ones."""
        mixed, alone = Env.on(store_factory()), Env.on(store_factory())
        public = [
            "alpha alpha alpha gamma",
            "beta beta gamma delta",
            "gamma filler words",
            "filler words only",
            "more filler here",
            "delta and epsilon",
        ]
        for env in (mixed, alone):
            for content in public:
                env.owner.call("memory.add", {"space": "pub", "content": content})
        for n in range(10):
            mixed.owner.call("memory.add", {"space": "priv", "content": f"alpha hidden {n}"})
        reader = Principal(id="g7", grants=(Grant(right="read", scope="space:pub"),))
        for query in ("alpha beta", "gamma", "alpha", "delta alpha", "filler beta alpha"):
            seen = mixed.as_(reader).call("memory.search", {"query": query})
            expected = alone.as_(reader).call("memory.search", {"query": query})
            assert seen == expected, query
        # The hidden rows do move the visible ones for a caller who can read them.
        assert search_ids(alone.owner, "alpha beta") == ["m1", "m2"]
        assert [id_ for id_ in search_ids(mixed.owner, "alpha beta") if id_ in ("m1", "m2")] == [
            "m2",
            "m1",
        ]

    def test_rank_text_scored_gives_bm25_best_first(self, env: Env) -> None:
        """The scores the ``convex`` fusion weighs (docs/adr/0016): FTS5's bm25 negated."""
        env.add("alpha alpha alpha gamma", space="a")
        env.add("beta gamma delta", space="a")
        env.add("gamma only here", space="b", title="Alpha")
        env.add("nothing to see")
        readable = Access(spaces=frozenset({"a"}))
        with env.app.store.read() as tx:
            for access in (Access(everything=True), readable):
                where = MemoryFilter(access=access)
                scored = tx.rank_text_scored(["alpha", "beta"], where, 10)
                assert [id_ for id_, _ in scored] == tx.rank_text(["alpha", "beta"], where, 10)
                scores = [score for _, score in scored]
                assert all(score > 0 for score in scores)
                assert scores == sorted(scores, reverse=True)
            assert [
                i for i, _ in tx.rank_text_scored(["alpha"], MemoryFilter(access=readable), 10)
            ] == [1]
            owner = tx.rank_text_scored(["alpha"], MemoryFilter(access=Access(everything=True)), 1)
            assert [i for i, _ in owner] == [3]  # the title weighs 5

    @pytest.mark.parametrize(("query", "finds"), FTS_SYNTAX_QUERIES)
    def test_search_fts5_syntax_is_plain_text(self, env: Env, query: str, finds: bool) -> None:
        env.add(FTS_SYNTAX_TEXT, title="Plain")
        env.add("something else entirely")
        result = env.g1.call("memory.search", {"query": query})
        assert result["mode"] == "fts"
        assert ids(result["results"]) == (["m1"] if finds else [])

    @pytest.mark.parametrize("query", ["", " ", "\t\n  "])
    @pytest.mark.parametrize("query_mode", ["rfc", "natural"])
    def test_search_needs_words(self, env: Env, query: str, query_mode: str) -> None:
        params = {"query": query, "query_mode": query_mode}
        fails(env.g1, "memory.search", params, "invalid_params.query", "query")

    # -- query_mode (docs/adr/0015) ----------------------------------------------------------

    def test_natural_queries_drop_stopwords(self, env: Env) -> None:
        env.add("Caroline: Wow! Did you see that band?")
        env.add("Caroline gave a speech at the school about her journey.")
        env.add("When did you do that? What was it like?")
        query = "When did Caroline give a speech at a school?"
        # RFC mode: "when" and "did" count as much as a name, and find the short question.
        assert sorted(search_ids(env.g1, query, query_mode="rfc")) == ["m1", "m2", "m3"]
        natural = env.g1.call("memory.search", {"query": query, "query_mode": "natural"})
        assert ids(natural["results"]) == ["m2", "m1"]
        assert natural["results"][0]["fts_rank"] == 1
        assert "speech" in natural["results"][0]["snippet"]

    def test_natural_queries_rank_presence_over_shortness(self, env: Env) -> None:
        """``natural`` ranks with NATURAL_WEIGHTS, bm25's weights x4, which is k1 0.3 for
        1.2 (docs/adr/0023): the long turn with all three words beats the short one with
        two, which the RFC's weights put first for being short."""
        env.add("Caroline: speech?", space="a")
        env.add("Caroline gave a speech at the school about her journey last week", space="a")
        env.add("The school is closed today", space="a")
        for n in range(6):
            env.add(f"filler {n}", space="b")
        query = "When did Caroline give a speech at a school?"
        terms = search_terms(query, "natural")
        readable = Access(spaces=frozenset({"a", "b"}))
        with env.app.store.read() as tx:
            for access in (Access(everything=True), readable):
                for spaces in (None, frozenset({"a"})):
                    where = MemoryFilter(access=access, spaces=spaces)
                    rfc = tx.rank_text_scored(terms, where, 10, RFC_WEIGHTS)
                    natural = tx.rank_text_scored(terms, where, 10, NATURAL_WEIGHTS)
                    assert [i for i, _ in rfc] == [1, 2, 3]
                    assert [i for i, _ in natural] == [2, 1, 3]
                    assert tx.rank_text_scored(terms, where, 10) == rfc
        assert search_ids(env.g1, query, query_mode="natural") == ["m2", "m1", "m3"]

    def test_natural_queries_split_words_at_punctuation(self, env: Env) -> None:
        env.add("Caroline went to a support group for transgender people.")
        env.add("A specific plan for the week.")
        env.add("Nothing related here.")
        assert search_ids(env.g1, "Caroline's", query_mode="rfc") == []  # the phrase "caroline s"
        assert search_ids(env.g1, "Caroline's", query_mode="natural") == ["m1"]
        assert search_ids(env.g1, "transgender-specific", query_mode="rfc") == []
        assert sorted(search_ids(env.g1, "transgender-specific", query_mode="natural")) == [
            "m1",
            "m2",
        ]

    def test_a_natural_query_of_only_stopwords_searches_them(self, env: Env) -> None:
        env.add("It is what it is.")
        env.add("Zig pins the version.")
        assert search_ids(env.g1, "what is it", query_mode="natural") == ["m1"]
        assert search_ids(env.g1, "what is it", query_mode="natural") == search_ids(
            env.g1, "what is it", query_mode="rfc"
        )

    @pytest.mark.parametrize(("query", "finds"), FTS_SYNTAX_QUERIES)
    def test_natural_fts5_syntax_is_plain_text(self, env: Env, query: str, finds: bool) -> None:
        """MEM-05 in natural mode: punctuation separates words, so only ``title:plain`` finds
        more than in the RFC mode (its words, not a column filter)."""
        env.add(FTS_SYNTAX_TEXT, title="Plain")
        env.add("something else entirely")
        result = env.g1.call("memory.search", {"query": query, "query_mode": "natural"})
        assert result["mode"] == "fts"
        assert ids(result["results"]) == (["m1"] if finds or query == "title:plain" else [])

    def test_the_store_default_query_mode_comes_from_settings(self, env: Env) -> None:
        env.add("Caroline went to a support group.")
        assert search_ids(env.g1, "Caroline's") == []  # the RFC's mode by default
        env.app.settings = MemorySettings(query_mode="natural")  # as a config reload does
        assert search_ids(env.g1, "Caroline's") == ["m1"]
        assert search_ids(env.g1, "Caroline's", query_mode="rfc") == []

    def test_unknown_query_mode_or_fusion_is_refused(self, env: Env) -> None:
        env.add("zig")
        for param in ("query_mode", "fusion"):
            fails(
                env.g1,
                "memory.search",
                {"query": "zig", param: "bogus"},
                "invalid_params.type",
                param,
            )
        assert search_ids(env.g1, "zig", fusion="weighted") == ["m1"]  # no vectors: fts order

    # -- grants ------------------------------------------------------------------------------

    def test_write_on_one_space_is_refused_on_another(self, env: Env) -> None:
        assert env.g3.call("memory.add", {"space": "a", "content": "allowed"})["changed"] is True
        before = env.snapshot()
        error = fails(env.g3, "memory.add", {"space": "b", "content": "refused"}, "denied.write")
        assert error.message == "principal g3 lacks 'write' on space:b"
        assert error.data == {
            "right": "write",
            "resource": "space:b",
            "principal": "g3",
            "fix": "venom-mem whoami  # this token's grants; the owner can add a client with "
            "--grant write:space:b",
        }
        env.owner.call("memory.add", {"space": "b", "content": "owner's"})
        fails(env.g3, "memory.update", {"id": "m2", "revision": 1, "title": "x"}, "denied.write")
        fails(env.g3, "memory.delete", {"id": "m2", "revision": 1}, "denied.write")
        env.g3.call("memory.update", {"id": "m1", "revision": 1, "title": "mine"})
        after = env.snapshot()
        assert after["memories"]["memories"][-1]["title"] == "mine"
        assert len(after["memories"]["memories"]) == len(before["memories"]["memories"]) + 1

    def test_unknown_reads_but_cannot_write(self, env: Env) -> None:
        env.add("readable by anyone")
        assert search_ids(env.unknown, "readable") == ["m1"]
        assert env.unknown.call("memory.get", {"id": "m1"})["content"] == "readable by anyone"
        before = env.snapshot()
        error = fails(
            env.unknown, "memory.add", {"space": "user", "content": "hello"}, "denied.write"
        )
        assert error.to_json() == {
            "code": "denied.write",
            "message": "principal unknown lacks 'write' on space:user",
            "data": {
                "right": "write",
                "resource": "space:user",
                "principal": "unknown",
                "fix": FIX,
            },
        }
        fails(
            env.unknown, "memory.update", {"id": "m1", "revision": 1, "title": "x"}, "denied.write"
        )
        fails(env.unknown, "session.start", {"harness": "codex"}, "denied.write")
        assert env.snapshot() == before

    def test_space_list_shows_readable_spaces_with_counts(self, env: Env) -> None:
        env.add("one", space="a")
        env.add("two", space="b")
        env.add("three", space="b")
        env.add("four", space="c")
        env.g1.call("memory.delete", {"id": "m4", "revision": 1})
        updated = {m: env.owner.call("memory.get", {"id": m})["updated"] for m in ("m1", "m3")}
        assert env.g1.call("space.list") == {
            "spaces": [
                {"space": "a", "memories": 1, "updated": updated["m1"]},
                {"space": "b", "memories": 2, "updated": updated["m3"]},
            ]
        }
        reader = env.as_(Principal(id="g8", grants=(Grant(right="read", scope="space:b"),)))
        assert reader.call("space.list")["spaces"] == [
            {"space": "b", "memories": 2, "updated": updated["m3"]}
        ]
        assert env.g3.call("space.list") == {"spaces": []}

    def test_store_status_counts(self, env: Env) -> None:
        env.add("one")
        env.add("two")
        env.g1.call("memory.update", {"id": "m1", "revision": 1, "title": "t"})
        env.g1.call("memory.delete", {"id": "m2", "revision": 1})
        env.g1.call("session.start", {"harness": "codex"})
        status = env.owner.call("store.status")
        assert {k: status[k] for k in ("memories", "deleted", "versions", "sessions")} == {
            "memories": 1,
            "deleted": 1,
            "versions": 4,
            "sessions": 1,
        }
        assert (status["vectors"], status["pending"], status["embeddings"]) == (0, 0, "off")
        assert status["schema_version"] == env.app.store.describe()["schema_version"]

    @pytest.mark.parametrize(
        ("verb", "params", "code", "param"),
        BAD_INPUT,
        ids=[f"{verb}-{code.split('.')[1]}-{param}" for verb, _, code, param in BAD_INPUT],
    )
    def test_bad_input_changes_nothing(
        self, env: Env, verb: str, params: dict[str, Any], code: str, param: str
    ) -> None:
        env.add("existing text", title="Existing", tags=["zig"])
        env.g1.call("session.start", {"harness": "codex", "harness_session": "h-1"})
        before = env.snapshot()
        fails(env.g1, verb, params, code, param)
        assert env.snapshot() == before

    def test_trailing_newline_is_not_part_of_a_name(self, env: Env) -> None:
        before = env.snapshot()
        with pytest.raises(VenomError) as caught:
            env.g1.call("memory.add", {"space": "user\n", "content": "x"})
        assert caught.value.code == "invalid_params.space"
        with pytest.raises(VenomError) as caught:
            env.g1.call("memory.add", {"space": "user", "content": "x", "tags": ["zig\n"]})
        assert caught.value.code == "invalid_params.tag"
        assert env.snapshot() == before

    def test_add_with_a_missing_session_changes_nothing(self, env: Env) -> None:
        before = env.snapshot()
        fails(
            env.g1,
            "memory.add",
            {"space": "user", "content": "x", "session": "s9"},
            "not_found.session",
        )
        assert env.snapshot() == before

    # -- sessions ------------------------------------------------------------------------------

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

    # -- clients -------------------------------------------------------------------------------

    def test_client_add(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}, {"right": "write", "scope": "space:user"}]
        result = env.owner.call("client.add", {"name": "claude-code", "grants": grants})
        assert set(result) == {"client", "principal", "token", "expires"}
        assert (result["client"], result["principal"], result["expires"]) == (
            "claude-code",
            "g1",
            None,
        )
        assert TOKEN_RE.match(result["token"])
        assert result["token"].startswith("vnt1.venom-mem.g1.")

    def test_client_principals_increase_and_are_never_reused(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]

        def add(name: str) -> str:
            return str(env.owner.call("client.add", {"name": name, "grants": grants})["principal"])

        assert [add("one"), add("two")] == ["g1", "g2"]
        assert env.owner.call("client.remove", {"name": "two"}) == {
            "client": "two",
            "principal": "g2",
        }
        assert add("three") == "g3"
        env.owner.call("client.remove", {"name": "three"})
        assert add("three") == "g4"

    def test_client_rights_are_read_and_write_only(self, env: Env) -> None:
        for right in ("spawn", "admin", "files"):
            grants = [{"right": right, "scope": "*"}]
            fails(
                env.owner,
                "client.add",
                {"name": "bad", "grants": grants},
                "invalid_params.client_right",
                "grants",
            )
        assert env.owner.call("client.list") == {"clients": []}

    @pytest.mark.parametrize("scope", ["everything", "space:Bad", "memory:1", "session:x", ""])
    def test_client_bad_scope(self, env: Env, scope: str) -> None:
        fails(
            env.owner,
            "client.add",
            {"name": "bad", "grants": [{"right": "read", "scope": scope}]},
            "invalid_params.grant_scope",
            "grants",
        )
        assert env.owner.call("client.list") == {"clients": []}

    def test_client_name_in_use(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        env.owner.call("client.add", {"name": "codex", "grants": grants})
        fails(
            env.owner, "client.add", {"name": "codex", "grants": grants}, "conflict.client_exists"
        )
        assert len(env.owner.call("client.list")["clients"]) == 1

    def test_client_add_by_a_client_is_denied(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        error = fails(env.g1, "client.add", {"name": "mine", "grants": grants}, "denied.admin")
        assert error.data["principal"] == "g1"
        fails(env.g1, "client.list", None, "denied.admin")
        assert env.owner.call("client.list") == {"clients": []}

    def test_token_resolves_to_the_client(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}, {"right": "write", "scope": "space:user"}]
        token = env.owner.call("client.add", {"name": "codex", "grants": grants})["token"]
        # A new app on the same store stands for a daemon restart: the client is durable.
        for app in (env.app, Env.on(env.app.store).app):
            who = resolve_token(app, token, unknown=(READ_ALL,))
            assert who == Principal(
                id="g1",
                label="codex",
                grants=(
                    Grant(right="read", scope="*"),
                    Grant(right="write", scope="space:user"),
                ),
            )
        client = env.as_(who)
        client.call("memory.add", {"space": "user", "content": "from a token"})
        assert env.owner.call("memory.get", {"id": "m1"})["author"] == {
            "principal": "g1",
            "label": "codex",
        }
        fails(client, "memory.add", {"space": "other", "content": "x"}, "denied.write")

    def test_clients_are_loaded_when_the_app_is_made(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        kept = env.owner.call("client.add", {"name": "kept", "grants": grants})["token"]
        gone = env.owner.call("client.add", {"name": "gone", "grants": grants})["token"]
        env.owner.call("client.remove", {"name": "gone"})
        issued = env.owner.call("grant.issue", {"grants": grants})["token"]
        restarted = Env.on(env.app.store).app
        assert resolve_token(restarted, kept, unknown=()).label == "kept"
        for token in (gone, issued):  # issued tokens die with the app; both were handed out
            with pytest.raises(VenomError) as caught:
                resolve_token(restarted, token, unknown=())
            assert caught.value.data["reason"] == "revoked"

    def test_resolving_a_token_reads_nothing_from_the_store(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        token = env.owner.call("client.add", {"name": "codex", "grants": grants})["token"]
        env.owner.call("client.add", {"name": "gone", "grants": grants})
        env.owner.call("client.remove", {"name": "gone"})
        env.app.store = _Unreadable()
        assert resolve_token(env.app, token, unknown=()).id == "g1"
        with pytest.raises(VenomError) as caught:
            resolve_token(env.app, "vnt1.venom-mem.g2." + "A" * 43, unknown=())
        assert caught.value.data["reason"] == "revoked"
        with pytest.raises(VenomError) as caught:
            resolve_token(env.app, "vnt1.venom-mem.g3." + "A" * 43, unknown=())
        assert caught.value.data["reason"] == "invalid"

    def test_grant_revoke_of_a_client_drops_its_token(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        token = env.owner.call("client.add", {"name": "codex", "grants": grants})["token"]
        env.owner.call("grant.revoke", {"principal": "g1"})
        with pytest.raises(VenomError) as caught:
            resolve_token(env.app, token, unknown=())
        assert caught.value.data["reason"] == "revoked"
        assert env.owner.call("client.list") == {"clients": []}

    def test_a_held_principal_loses_its_rights_with_its_token(self, env: Env) -> None:
        """recheck runs before every request on a connection resolved at hello."""
        read = [{"right": "read", "scope": "*"}]
        removed = env.owner.call("client.add", {"name": "removed", "grants": read})["token"]
        expiring = env.owner.call("client.add", {"name": "brief", "grants": read, "ttl": 60})
        issued = env.owner.call("grant.issue", {"grants": read, "ttl": 60})["token"]
        revoked = env.owner.call("grant.issue", {"grants": read})["token"]
        held = {
            name: resolve_token(env.app, token, unknown=())
            for name, token in (
                ("removed", removed),
                ("brief", expiring["token"]),
                ("issued", issued),
                ("revoked", revoked),
            )
        }
        for who in held.values():
            recheck(env.app, who)  # all still valid
        env.owner.call("client.remove", {"name": "removed"})
        env.owner.call("grant.revoke", {"principal": held["revoked"].id})
        env.clock.advance(timedelta(seconds=61))
        for name, reason in (
            ("removed", "revoked"),
            ("revoked", "revoked"),
            ("brief", "expired"),
            ("issued", "expired"),
        ):
            with pytest.raises(VenomError) as caught:
                recheck(env.app, held[name])
            assert (caught.value.code, caught.value.data["reason"]) == ("denied.token", reason)
        recheck(env.app, OWNER)
        recheck(env.app, UNKNOWN)

    def test_grant_issue_ttl_is_clamped_by_max_token_ttl_and_client_ttl_is_not(
        self, env: Env
    ) -> None:
        env.app.settings = MemorySettings(max_token_ttl=60)
        read = [{"right": "read", "scope": "*"}]
        now = parse_ts(env.clock.now())
        issued = env.owner.call("grant.issue", {"grants": read, "ttl": 3600})
        assert parse_ts(issued["expires"]) - now <= timedelta(seconds=61)
        client = env.owner.call("client.add", {"name": "long", "grants": read, "ttl": 3600})
        assert parse_ts(client["expires"]) - now >= timedelta(seconds=3599)

    def test_grant_issue_hands_on_only_what_the_issuer_holds(self, env: Env) -> None:
        grants = [{"right": "admin", "scope": "*"}, {"right": "read", "scope": "space:*"}]
        admin = resolve_token(
            env.app, env.owner.call("grant.issue", {"grants": grants})["token"], unknown=()
        )
        narrower = [{"right": "read", "scope": "space:user"}]
        token = env.as_(admin).call("grant.issue", {"grants": narrower})["token"]
        assert resolve_token(env.app, token, unknown=()).grants == (
            Grant(right="read", scope="space:user"),
        )
        error = fails(
            env.as_(admin),
            "grant.issue",
            {"grants": [{"right": "read", "scope": "*"}]},
            "denied.read",
        )
        assert error.data["resource"] == "*"
        fails(
            env.as_(admin),
            "grant.issue",
            {"grants": [{"right": "write", "scope": "space:user"}]},
            "denied.write",
        )

    def test_client_add_by_an_admin_token_is_bounded_by_its_grants(self, env: Env) -> None:
        grants = [{"right": "admin", "scope": "*"}, {"right": "read", "scope": "space:user"}]
        admin = env.as_(
            resolve_token(
                env.app, env.owner.call("grant.issue", {"grants": grants})["token"], unknown=()
            )
        )
        held = [{"right": "read", "scope": "space:user"}]
        assert admin.call("client.add", {"name": "narrow", "grants": held})["principal"]
        for grant in ({"right": "read", "scope": "*"}, {"right": "write", "scope": "space:x"}):
            fails(
                admin, "client.add", {"name": "wide", "grants": [grant]}, "denied." + grant["right"]
            )
        assert [c["client"] for c in env.owner.call("client.list")["clients"]] == ["narrow"]

    @pytest.mark.parametrize(
        ("verb", "params"),
        [
            ("memory.get", {"id": "m9223372036854775808"}),
            ("memory.get", {"id": "m\u00b2"}),
            ("memory.history", {"id": "m99999999999999999999"}),
            ("memory.list", {"after": "m9223372036854775808"}),
            ("session.get", {"session": "s9223372036854775808"}),
            ("session.chain", {"session": "s\u00b3"}),
            ("memory.search", {"query": "x", "session": "s9223372036854775808"}),
        ],
    )
    def test_an_id_no_record_can_have_is_malformed(
        self, env: Env, verb: str, params: dict[str, Any]
    ) -> None:
        for who in (env.owner, env.g1):
            error = fails(who, verb, params, "invalid_params.type")
            assert error.data["param"] in ("id", "after", "session")

    def test_the_largest_id_is_well_formed(self, env: Env) -> None:
        fails(env.owner, "memory.get", {"id": "m9223372036854775807"}, "not_found.memory")

    def test_removed_client_token_is_revoked(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        token = env.owner.call("client.add", {"name": "codex", "grants": grants})["token"]
        env.owner.call("client.remove", {"name": "codex"})
        with pytest.raises(VenomError) as caught:
            resolve_token(env.app, token, unknown=(READ_ALL,))
        assert caught.value.code == "denied.token"
        assert caught.value.data["reason"] == "revoked"
        fails(env.owner, "client.remove", {"name": "codex"}, "not_found.client")

    @pytest.mark.parametrize(
        "token",
        [
            "garbage",
            "vnt1.venom-mem.g1.short",
            "vnt1.venom-mem.g1." + "A" * 43,  # the right shape, the wrong secret
            "vnt1.venom-mem.g99." + "A" * 43,  # a principal never issued
            "vnt1.other.g1." + "A" * 43,
        ],
    )
    def test_bad_token_is_invalid(self, env: Env, token: str) -> None:
        grants = [{"right": "read", "scope": "*"}]
        env.owner.call("client.add", {"name": "codex", "grants": grants})
        with pytest.raises(VenomError) as caught:
            resolve_token(env.app, token, unknown=(READ_ALL,))
        assert caught.value.code == "denied.token"
        assert caught.value.data["reason"] == "invalid"

    def test_token_with_a_trailing_newline_is_invalid(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        token = env.owner.call("client.add", {"name": "codex", "grants": grants})["token"]
        with pytest.raises(VenomError) as caught:
            resolve_token(env.app, token + "\n", unknown=(READ_ALL,))
        assert caught.value.data["reason"] == "invalid"

    def test_no_token_is_unknown(self, env: Env) -> None:
        who = resolve_token(env.app, "", unknown=(READ_ALL,))
        assert who == UNKNOWN

    def test_client_list_never_shows_a_hash(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        token = env.owner.call("client.add", {"name": "codex", "grants": grants})["token"]
        env.owner.call("client.add", {"name": "b-client", "grants": grants})
        listed = env.owner.call("client.list")
        assert [c["client"] for c in listed["clients"]] == ["b-client", "codex"]
        codex = listed["clients"][1]
        assert codex == {
            "client": "codex",
            "principal": "g1",
            "grants": grants,
            "created": codex["created"],
            "expires": None,
        }
        with env.app.store.read() as tx:
            stored = tx.get_client("codex")
        assert stored is not None
        text = json.dumps(listed)
        secret = token.rsplit(".", 1)[1]
        assert secret not in text
        assert stored.token_hash.hex() not in text
        assert "hash" not in text
        assert stored.token_hash == hashlib.sha256(secret.encode()).digest()

    # -- RFC-0020 section 1, in process ----------------------------------------------------

    def test_section_1_transcript(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}, {"right": "write", "scope": "*"}]
        claude = env.owner.call("client.add", {"name": "claude-code", "grants": grants})
        codex = env.owner.call("client.add", {"name": "codex", "grants": grants})
        assert (claude["principal"], codex["principal"]) == ("g1", "g2")

        def resolve(token: str) -> LocalClient:
            who = resolve_token(env.app, token, unknown=(READ_ALL,))
            return env.as_(who)

        g1, g2 = resolve(claude["token"]), resolve(codex["token"])
        zig = {
            "space": "project/venom-std",
            "kind": "fact",
            "title": "Zig pin",
            "content": "venom-std pins Zig with .zigversion; check it before upgrading.",
            "tags": ["zig", "build"],
        }
        assert g1.call("memory.add", zig) == {"id": "m1", "revision": 1, "changed": True}
        assert g1.call("memory.add", zig) == {"id": "m1", "revision": 1, "changed": False}
        stamp = g1.call("memory.get", {"id": "m1"})["created"]
        found = env.unknown.call(
            "memory.search",
            {"query": "which zig version", "spaces": ["project/venom-std"], "limit": 3},
        )
        assert found == {
            "mode": "fts",
            "results": [
                {
                    "id": "m1",
                    "space": "project/venom-std",
                    "kind": "fact",
                    "title": "Zig pin",
                    "tags": ["zig", "build"],
                    "revision": 1,
                    "author": {"principal": "g1", "label": "claude-code"},
                    "updated_by": {"principal": "g1", "label": "claude-code"},
                    "created": stamp,
                    "updated": stamp,
                    "snippet": "venom-std pins Zig with .zigversion; check it before upgrading.",
                    "score": 0.01639344262295082,
                    "fts_rank": 1,
                }
            ],
        }
        update = {"id": "m1", "revision": 1, "content": "venom-std pins Zig 0.17 with .zigversion."}
        assert g1.call("memory.update", update) == {"id": "m1", "revision": 2, "changed": True}
        stale = fails(
            g1,
            "memory.update",
            {"id": "m1", "revision": 1, "content": "stale edit"},
            "conflict.memory_revision",
        )
        assert stale.to_json() == {
            "code": "conflict.memory_revision",
            "message": "m1 is at revision 2",
            "data": {"current": 2},
        }
        assert stale.exit_code == 5
        denied = fails(
            env.unknown, "memory.add", {"space": "user", "content": "hello"}, "denied.write"
        )
        assert denied.to_json() == {
            "code": "denied.write",
            "message": "principal unknown lacks 'write' on space:user",
            "data": {
                "right": "write",
                "resource": "space:user",
                "principal": "unknown",
                "fix": "venom-mem whoami --json  # set VENOM_MEM_TOKEN to a client token",
            },
        }
        assert denied.exit_code == 4

        harness_session = "6f1c2e0a-7d1b-4c55-9a1e-3f0d7b2c8e41"
        first = {
            "harness": "claude-code",
            "harness_session": harness_session,
            "cwd": "/home/u/venom-std",
        }
        assert g1.call("session.start", first) == {"session": "s1", "changed": True}
        fork = {"harness": "codex", "parent": "s1", "relation": "fork", "cwd": "/home/u/venom-std"}
        assert g2.call("session.start", fork) == {"session": "s2", "changed": True}
        proto = {
            "space": "project/venom-std",
            "session": "s1",
            "content": "The proto tests need a writable XDG_RUNTIME_DIR.",
        }
        assert g2.call("memory.add", proto) == {"id": "m2", "revision": 1, "changed": True}
        chain = g2.call("session.chain", {"session": "s2"})
        started = [s["started"] for s in chain["chain"]]
        assert chain == {
            "chain": [
                {
                    "session": "s1",
                    "harness": "claude-code",
                    "harness_session": harness_session,
                    "cwd": "/home/u/venom-std",
                    "reported_by": {"principal": "g1", "label": "claude-code"},
                    "started": started[0],
                },
                {
                    "session": "s2",
                    "harness": "codex",
                    "parent": "s1",
                    "relation": "fork",
                    "cwd": "/home/u/venom-std",
                    "reported_by": {"principal": "g2", "label": "codex"},
                    "started": started[1],
                },
            ],
            "truncated": False,
        }
        lineage = g2.call(
            "memory.search", {"query": "proto tests", "session": "s2", "lineage": True}
        )
        stamp = g2.call("memory.get", {"id": "m2"})["created"]
        assert lineage == {
            "mode": "fts",
            "results": [
                {
                    "id": "m2",
                    "space": "project/venom-std",
                    "kind": "note",
                    "tags": [],
                    "revision": 1,
                    "author": {"principal": "g2", "label": "codex"},
                    "updated_by": {"principal": "g2", "label": "codex"},
                    "session": "s1",
                    "created": stamp,
                    "updated": stamp,
                    "snippet": "The proto tests need a writable XDG_RUNTIME_DIR.",
                    "score": 0.01639344262295082,
                    "fts_rank": 1,
                }
            ],
        }
        wire = {"space": "user", "kind": "note", "content": "Prefers small PRs."}
        assert g1.call("memory.add", wire) == {"id": "m3", "revision": 1, "changed": True}
