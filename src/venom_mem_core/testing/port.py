"""The port itself: transactions, snapshots, the uniqueness backstop, IDs, counts."""

from __future__ import annotations

import attrs
import pytest

from ..errors import VenomError
from ..grants import Access
from ..ports import MemoryFilter, Store
from .support import Env, StoreFixtures, draft

__all__ = ["PortContract"]


class PortContract(StoreFixtures):
    """What only the port can show: rollback, snapshots, uniqueness, IDs and counts."""

    # -- transactions and rows --------------------------------------------------------------

    def test_is_a_store(self, store: Store) -> None:
        assert isinstance(store, Store)
        facts = store.describe()
        assert {"path", "schema_version", "sqlite_version", "bytes"} <= set(facts)
        assert isinstance(facts["schema_version"], int)
        assert facts["schema_version"] >= 1
        if "engine" in facts:  # optional: the engine and its version, for people to read
            assert isinstance(facts["engine"], str)
            assert facts["engine"]

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
