"""Active and inactive spaces through the use cases: space.deactivate, space.activate, what
reads leave out or refuse, and writes that activate (docs/adr/0042)."""

from __future__ import annotations

from .support import Env, StoreFixtures, fails, list_ids, search_ids

__all__ = ["SpaceStateContract"]


def _states(env: Env) -> dict[str, bool]:
    return {s["space"]: s.get("active", True) for s in env.owner.call("space.list")["spaces"]}


class SpaceStateContract(StoreFixtures):
    """space.deactivate and space.activate on the store."""

    def test_an_inactive_space_leaves_reads_that_name_no_space(self, env: Env) -> None:
        env.add("Kept in the old project.", space="project/old")
        env.add("Kept in the new project.", space="project/new")
        result = env.g1.call("space.deactivate", {"space": "project/old"})
        assert result == {"space": "project/old", "active": False, "changed": True}
        assert env.g1.call("space.deactivate", {"space": "project/old"})["changed"] is False
        assert search_ids(env.g2, "kept project") == ["m2"]
        assert list_ids(env.g2) == ["m2"]
        assert list_ids(env.g2, spaces=["project/new"]) == ["m2"]
        listed = env.g2.call("space.list")["spaces"]
        assert listed[0] == {
            "space": "project/new",
            "memories": 1,
            "updated": listed[0]["updated"],
        }  # an active space reads as before: no active member
        assert (listed[1]["active"], listed[1]["memories"]) == (False, 1)
        # Nothing was deleted: memory.get by ID still reads it.
        assert env.g2.call("memory.get", {"id": "m1"})["content"] == "Kept in the old project."
        back = env.g2.call("space.activate", {"space": "project/old"})
        assert back == {"space": "project/old", "active": True, "changed": True}
        assert list_ids(env.g2) == ["m2", "m1"]
        assert _states(env) == {"project/new": True, "project/old": True}

    def test_a_read_naming_an_inactive_space_is_refused(self, env: Env) -> None:
        env.add("Kept in the old project.", space="project/old")
        env.g1.call("space.deactivate", {"space": "project/old"})
        spaces = {"spaces": ["project/new", "project/old"]}
        for verb, params in (
            ("memory.search", {"query": "kept", **spaces}),
            ("memory.list", spaces),
            ("memory.context", spaces),
        ):
            error = fails(env.g2, verb, params, "conflict.space_inactive")
            assert error.data["space"] == "project/old"
            assert "space.activate" in error.message

    def test_a_write_to_an_inactive_space_activates_it(self, env: Env) -> None:
        env.add("first", space="project/old")
        for write in (
            lambda: env.add("second", space="project/old"),
            lambda: env.g1.call(
                "memory.update", {"id": "m1", "revision": 1, "content": "first, changed"}
            ),
            lambda: env.g1.call(
                "space.describe", {"space": "project/old", "description": "Old things."}
            ),
        ):
            env.g1.call("space.deactivate", {"space": "project/old"})
            assert _states(env) == {"project/old": False}
            write()
            assert _states(env) == {"project/old": True}
        assert env.g1.call("space.activate", {"space": "project/old"})["changed"] is False

    def test_an_inactive_empty_space_is_still_listed(self, env: Env) -> None:
        env.g1.call("space.deactivate", {"space": "project/empty"})
        (listed,) = env.owner.call("space.list")["spaces"]
        assert (listed["space"], listed["memories"], listed["active"]) == (
            "project/empty",
            0,
            False,
        )

    def test_deactivating_needs_write_on_the_space(self, env: Env) -> None:
        env.add("in user")
        before = env.snapshot()
        fails(env.g3, "space.deactivate", {"space": "user"}, "denied.write")
        fails(env.g3, "space.activate", {"space": "user"}, "denied.write")
        fails(env.g1, "space.deactivate", {"space": "Not A Space"}, "invalid_params.space")
        assert env.snapshot() == before
        assert env.g3.call("space.deactivate", {"space": "a"})["changed"] is True
