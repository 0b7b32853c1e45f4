"""Near-duplicates and text-matched edits through the use cases (ADR 0043): memory.add's and
memory.update's ``similar``, memory.replace and memory.forget, with every refusal.

The texts are chosen so that any store's ranking tells them apart (a restatement shares
nearly all its words, an unrelated text none), so these cases run on every store; the
threshold itself is measured on FTS5's BM25 (bench/bench_similar.py).
"""

from __future__ import annotations

from typing import Any

import attrs

from ..records import Grant, Principal
from .support import Env, StoreFixtures, fails

__all__ = ["TextEditContract"]

PRS = "The user prefers small pull requests with one change each."
PRS_AGAIN = "The user prefers small pull requests, one change each."
DEPLOYS = "Deploys to production happen on Fridays after the standup."
CI = "The CI pipeline runs on GitHub Actions."
# Reads only its own memories of space a, and writes there.
SELF_ONLY = Principal(
    id="g4", grants=(Grant(right="read", scope="self"), Grant(right="write", scope="space:a"))
)


def _similar(result: dict[str, Any]) -> list[str]:
    return [str(hit["id"]) for hit in result.get("similar", [])]


class TextEditContract(StoreFixtures):
    """``similar`` on add and update; memory.replace and memory.forget and their refusals."""

    # -- similar ---------------------------------------------------------------------------

    def test_add_points_out_a_restatement_and_merges_nothing(self, env: Env) -> None:
        env.add(PRS)
        env.add(DEPLOYS)
        result = env.g1.call("memory.add", {"space": "user", "content": PRS_AGAIN})
        assert result["id"] == "m3"
        assert result["changed"] is True
        (hit,) = result["similar"]
        assert hit["id"] == "m1"
        assert hit["revision"] == 1
        assert 0.65 <= hit["score"] <= 1.0
        assert hit["snippet"] == PRS
        # Both are kept as they are.
        assert env.g1.call("memory.get", {"id": "m1"})["content"] == PRS
        assert env.g1.call("memory.get", {"id": "m3"})["content"] == PRS_AGAIN

    def test_similar_is_absent_when_nothing_is_close(self, env: Env) -> None:
        env.add(PRS)
        result = env.g1.call("memory.add", {"space": "user", "content": CI})
        assert result == {"id": "m2", "revision": 1, "changed": True}
        again = env.g1.call("memory.add", {"space": "user", "content": CI})
        assert again == {"id": "m2", "revision": 1, "changed": False}

    def test_similar_stays_in_the_space_among_live_readable_memories(self, env: Env) -> None:
        env.add(PRS, space="project/a")
        deleted = env.add(PRS + " Always.")
        env.g1.call("memory.delete", {"id": deleted, "revision": 1})
        result = env.g1.call("memory.add", {"space": "user", "content": PRS_AGAIN})
        assert "similar" not in result
        # A memory the caller can't read is never pointed out.
        env.as_(SELF_ONLY).call("memory.add", {"space": "a", "content": DEPLOYS})
        env.add(DEPLOYS + " Usually.", space="a")
        mine = env.as_(SELF_ONLY).call("memory.add", {"space": "a", "content": DEPLOYS + " Ok."})
        assert _similar(mine) == ["m4"]

    def test_at_most_three_closest_first(self, env: Env) -> None:
        for n in range(5):
            env.add(f"{PRS} Note {n}.")
        result = env.g1.call("memory.add", {"space": "user", "content": PRS})
        assert len(result["similar"]) == 3
        scores = [hit["score"] for hit in result["similar"]]
        assert scores == sorted(scores, reverse=True)

    def test_the_threshold_is_the_settings_and_0_switches_similar_off(self, env: Env) -> None:
        env.add(PRS)
        strict = Env.on(env.app.store, attrs.evolve(env.app.settings, similar_threshold=1.0))
        result = strict.g1.call("memory.add", {"space": "user", "content": PRS_AGAIN})
        assert (result["id"], result["changed"]) == ("m2", True)
        # Only a score of 1 passes (FTS5's BM25 scores this restatement under it).
        assert all(hit["score"] >= 1.0 for hit in result.get("similar", []))
        off = Env.on(env.app.store, attrs.evolve(env.app.settings, similar_threshold=0.0))
        result = off.g1.call("memory.add", {"space": "user", "content": PRS + " Always."})
        assert result == {"id": "m3", "revision": 1, "changed": True}
        update = {"id": "m2", "revision": 1, "content": PRS + " Still."}
        assert off.g1.call("memory.update", update) == {"id": "m2", "revision": 2, "changed": True}
        # At the default, the same text is pointed out (m2 no longer holds it).
        again = env.g1.call("memory.add", {"space": "user", "content": PRS_AGAIN})
        assert "m1" in _similar(again)

    def test_update_of_content_points_out_a_restatement(self, env: Env) -> None:
        env.add(PRS)
        env.add(CI)
        update = {"id": "m2", "revision": 1, "content": PRS_AGAIN}
        result = env.g1.call("memory.update", update)
        assert (result["revision"], _similar(result)) == (2, ["m1"])
        retitled = env.g1.call("memory.update", {"id": "m2", "revision": 2, "title": "PRs"})
        assert retitled == {"id": "m2", "revision": 3, "changed": True}

    # -- memory.replace --------------------------------------------------------------------

    def test_replace_by_whole_text_ignores_spacing_not_case(self, env: Env) -> None:
        env.add(PRS)
        env.add(DEPLOYS)
        messy = "  The user prefers small\n pull   requests with one change each. "
        result = env.g2.call(
            "memory.replace", {"space": "user", "old_text": messy, "content": "Big PRs are fine."}
        )
        assert result == {"id": "m1", "revision": 2, "changed": True, "match": "exact"}
        got = env.g1.call("memory.get", {"id": "m1"})
        assert (got["content"], got["updated_by"]["principal"]) == ("Big PRs are fine.", "g2")
        history = env.g1.call("memory.history", {"id": "m1"})["versions"]
        assert [v["action"] for v in history] == ["update", "add"]
        fails(
            env.g1,
            "memory.replace",
            {"space": "user", "old_text": DEPLOYS.upper(), "content": "x"},
            "not_found.memory_text",
        )

    def test_replace_by_a_unique_piece(self, env: Env) -> None:
        env.add(PRS)
        env.add(CI)
        params = {"space": "user", "old_text": "GitHub Actions", "content": "CI runs on Buildkite."}
        result = env.g1.call("memory.replace", params)
        assert result == {"id": "m2", "revision": 2, "changed": True, "match": "substring"}
        same = {"space": "user", "old_text": "Buildkite", "content": "CI runs on Buildkite."}
        assert env.g1.call("memory.replace", same) == {
            "id": "m2",
            "revision": 2,
            "changed": False,
            "match": "substring",
        }

    def test_one_whole_match_wins_over_pieces(self, env: Env) -> None:
        env.add("pin")
        env.add("venom-std pins Zig")
        env.add("pin the version")
        result = env.g1.call("memory.replace", {"space": "user", "old_text": "pin", "content": "x"})
        assert (result["id"], result["match"]) == ("m1", "exact")

    def test_replace_refusals_change_nothing(self, env: Env) -> None:
        env.add(PRS)
        env.add(PRS.replace("small", "tiny"))
        env.add("The user prefers  small pull requests with one change each.", space="user")
        env.add(DEPLOYS, space="other")
        before = env.snapshot()
        ambiguous = fails(
            env.g1,
            "memory.replace",
            {"space": "user", "old_text": "pull requests", "content": "x"},
            "conflict.memory_text_ambiguous",
        )
        assert ambiguous.data == {
            "match": "substring",
            "candidates": ["m1", "m2", "m3"],
            "count": 3,
        }
        assert ambiguous.exit_code == 5
        twice = fails(
            env.g1,
            "memory.replace",
            {"space": "user", "old_text": PRS, "content": "x"},
            "conflict.memory_text_ambiguous",
        )
        assert twice.data == {"match": "exact", "candidates": ["m1", "m3"], "count": 2}
        # Another space's memory is not this space's.
        missing = fails(
            env.g1,
            "memory.replace",
            {"space": "user", "old_text": "Fridays", "content": "x"},
            "not_found.memory_text",
        )
        assert (missing.data, missing.exit_code) == ({"space": "user"}, 3)
        fails(
            env.g1,
            "memory.replace",
            {"space": "user", "old_text": " \n\t", "content": "x"},
            "invalid_params.old_text",
            param="old_text",
        )
        # Onto another memory's text: memory.update's own refusal.
        duplicate = fails(
            env.g1,
            "memory.replace",
            {"space": "user", "old_text": "tiny", "content": PRS},
            "conflict.memory_duplicate",
        )
        assert duplicate.data == {"id": "m1"}
        fails(
            env.unknown,
            "memory.replace",
            {"space": "user", "old_text": "tiny", "content": "x"},
            "denied.write",
        )
        assert env.snapshot() == before

    def test_replace_sees_only_live_memories_the_caller_reads(self, env: Env) -> None:
        env.add(CI, space="a")
        deleted = env.add(DEPLOYS, space="a")
        env.g1.call("memory.delete", {"id": deleted, "revision": 1})
        mine = env.as_(SELF_ONLY).call("memory.add", {"space": "a", "content": CI + " Mine."})
        params = {"space": "a", "old_text": "GitHub Actions", "content": "Mine, on Buildkite."}
        result = env.as_(SELF_ONLY).call("memory.replace", params)
        assert (result["id"], result["match"]) == (mine["id"], "substring")
        fails(
            env.g1,
            "memory.replace",
            {"space": "a", "old_text": "Fridays", "content": "x"},
            "not_found.memory_text",
        )

    def test_replace_checks_content_size(self, env: Env) -> None:
        env.add(CI)
        limit = env.app.settings.max_content_bytes
        fails(
            env.g1,
            "memory.replace",
            {"space": "user", "old_text": "CI", "content": "x" * (limit + 1)},
            "invalid_params.range",
            param="content",
        )

    # -- memory.forget ---------------------------------------------------------------------

    def test_forget_deletes_softly_and_restore_brings_it_back(self, env: Env) -> None:
        env.add(PRS)
        env.add(CI)
        result = env.g1.call("memory.forget", {"space": "user", "old_text": "Actions"})
        assert (result["id"], result["revision"], result["match"]) == ("m2", 2, "substring")
        assert result["deleted"]
        got = env.g1.call("memory.get", {"id": "m2", "include_deleted": True})
        assert got["deleted"] == result["deleted"]
        assert env.g1.call("memory.restore", {"id": "m2"}) == {"id": "m2", "revision": 3}
        whole = env.g2.call("memory.forget", {"space": "user", "old_text": PRS})
        assert (whole["id"], whole["revision"], whole["match"]) == ("m1", 2, "exact")
        assert env.g1.call("memory.history", {"id": "m1"})["versions"][0]["by"]["principal"] == "g2"

    def test_forget_refusals_change_nothing(self, env: Env) -> None:
        env.add(PRS)
        env.add(PRS.replace("small", "tiny"))
        before = env.snapshot()
        error = fails(
            env.g1,
            "memory.forget",
            {"space": "user", "old_text": "prefers"},
            "conflict.memory_text_ambiguous",
        )
        assert error.data["candidates"] == ["m1", "m2"]
        fails(
            env.g1,
            "memory.forget",
            {"space": "user", "old_text": "Fridays"},
            "not_found.memory_text",
        )
        fails(
            env.g1,
            "memory.forget",
            {"space": "user", "old_text": PRS.upper()},
            "not_found.memory_text",
        )
        fails(
            env.g1, "memory.forget", {"space": "user", "old_text": "  "}, "invalid_params.old_text"
        )
        fails(env.unknown, "memory.forget", {"space": "user", "old_text": "tiny"}, "denied.write")
        assert env.snapshot() == before
