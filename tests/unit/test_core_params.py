"""Params checked against the manifest before any handler runs (CONTRACT section 2)."""

from __future__ import annotations

from typing import Any

import pytest

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Param, Type, Verb
from venom_mem_core.params import check_params


def _verb(name: str) -> Verb:
    verb = MANIFEST.verb(name)
    assert verb is not None
    return verb


def _fails(verb: Verb, params: Any, code: str, param: str) -> None:
    with pytest.raises(VenomError) as caught:
        check_params(verb, params)
    assert caught.value.code == f"invalid_params.{code}"
    assert caught.value.data == {"param": param}


def test_defaults_are_filled_in() -> None:
    assert check_params(_verb("memory.search"), {"query": "zig"}) == {
        "query": "zig",
        "lineage": False,
        "mode": "auto",
        "limit": 10,
    }
    assert check_params(_verb("memory.add"), {"space": "user", "content": "x"}) == {
        "space": "user",
        "content": "x",
        "kind": "note",
    }
    assert check_params(_verb("memory.list"), None) == {
        "lineage": False,
        "include_deleted": False,
        "limit": 50,
    }
    assert check_params(_verb("space.list"), {}) == {}


def test_given_values_win_over_defaults() -> None:
    checked = check_params(_verb("memory.search"), {"query": "q", "limit": 100, "mode": "fts"})
    assert (checked["limit"], checked["mode"]) == (100, "fts")


def test_unknown_param() -> None:
    _fails(_verb("memory.add"), {"space": "u", "content": "x", "author": "g1"}, "unknown", "author")
    _fails(_verb("space.list"), {"spaces": []}, "unknown", "spaces")


def test_missing_param() -> None:
    _fails(_verb("memory.add"), {"content": "x"}, "missing", "space")
    _fails(_verb("memory.update"), {"id": "m1"}, "missing", "revision")
    _fails(_verb("memory.search"), {}, "missing", "query")


@pytest.mark.parametrize(
    ("verb", "params", "param"),
    [
        ("memory.add", {"space": 1, "content": "x"}, "space"),
        ("memory.add", {"space": "u", "content": None}, "content"),
        ("memory.add", {"space": "u", "content": "x", "tags": "zig"}, "tags"),
        ("memory.add", {"space": "u", "content": "x", "tags": ["zig", 1]}, "tags"),
        ("memory.add", {"space": "u", "content": "x", "kind": "bogus"}, "kind"),
        ("memory.search", {"query": "q", "limit": "10"}, "limit"),
        ("memory.search", {"query": "q", "limit": 1.5}, "limit"),
        ("memory.search", {"query": "q", "limit": True}, "limit"),
        ("memory.search", {"query": "q", "lineage": "true"}, "lineage"),
        ("memory.search", {"query": "q", "lineage": 1}, "lineage"),
        ("memory.search", {"query": "q", "mode": "semantic"}, "mode"),
        ("memory.search", {"query": "q", "kinds": ["bogus"]}, "kinds"),
        ("memory.update", {"id": "m1", "revision": "1"}, "revision"),
        ("client.add", {"name": "x", "grants": {"right": "read"}}, "grants"),
    ],
)
def test_wrong_type(verb: str, params: dict[str, Any], param: str) -> None:
    _fails(_verb(verb), params, "type", param)


def test_params_must_be_an_object() -> None:
    _fails(_verb("memory.add"), ["space", "user"], "type", "params")


@pytest.mark.parametrize(
    ("verb", "params", "param"),
    [
        ("memory.search", {"query": "q", "limit": 0}, "limit"),
        ("memory.search", {"query": "q", "limit": 101}, "limit"),
        ("memory.list", {"limit": 201}, "limit"),
        ("memory.update", {"id": "m1", "revision": 0}, "revision"),
        ("memory.get", {"id": "m1", "revision": -1}, "revision"),
        ("client.add", {"name": "x", "grants": [], "ttl": 0}, "ttl"),
    ],
)
def test_out_of_range(verb: str, params: dict[str, Any], param: str) -> None:
    _fails(_verb(verb), params, "range", param)


def test_limits_at_their_bounds() -> None:
    assert check_params(_verb("memory.search"), {"query": "q", "limit": 1})["limit"] == 1
    assert check_params(_verb("memory.list"), {"limit": 200})["limit"] == 200


def test_relation_choices_have_their_own_code() -> None:
    params = {"harness": "codex", "parent": "s1", "relation": "sibling"}
    _fails(_verb("session.start"), params, "relation", "relation")


def test_generic_types() -> None:
    verb = Verb(
        "x.y",
        "A verb for the test",
        params=(
            Param("n", "A number", Type("number")),
            Param("maybe", "Nullable", Type("string", nullable=True)),
            Param("few", "At most two", Type("array", items=Type("integer"), max_items=2)),
            Param("anything", "Any JSON", Type("any")),
        ),
    )
    checked = check_params(verb, {"n": 3, "maybe": None, "few": [1, 2], "anything": {"a": [1]}})
    assert checked == {"n": 3, "maybe": None, "few": [1, 2], "anything": {"a": [1]}}
    assert check_params(verb, {"n": 2.5})["n"] == 2.5
    _fails(verb, {"n": "3"}, "type", "n")
    _fails(verb, {"few": [1, 2, 3]}, "range", "few")
    _fails(verb, {"few": [1, "2"]}, "type", "few")
