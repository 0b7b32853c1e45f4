"""Grant selectors, containment and readable sets (CONTRACT section 5, RFC-0020 section 3)."""

from __future__ import annotations

import pytest

from venom_mem_core.errors import VenomError
from venom_mem_core.grants import (
    Access,
    Resource,
    check,
    holds,
    holds_grant,
    parse_grants,
    readable_memories,
    readable_sessions,
    scope_covers,
)
from venom_mem_core.records import Grant, Principal

STORE = Resource.store()
SPACE_A = Resource.of_space("a")
SPACE_AB = Resource.of_space("ab")
SPACE_A_SUB = Resource.of_space("a/b")
MEMORY_3_IN_A = Resource.of_memory(3, "a", "g1")
MEMORY_30_IN_B = Resource.of_memory(30, "b", "g2")
SESSION_2 = Resource.of_session(2, "g1")
SESSION_20 = Resource.of_session(20, "g2")
NEW_SESSION = Resource.of_session(None)
ALL = (
    STORE,
    SPACE_A,
    SPACE_AB,
    SPACE_A_SUB,
    MEMORY_3_IN_A,
    MEMORY_30_IN_B,
    SESSION_2,
    SESSION_20,
    NEW_SESSION,
)

# scope -> the resources in ALL it contains, for principal g1.
CONTAINS = {
    "*": set(ALL),
    "space:*": {SPACE_A, SPACE_AB, SPACE_A_SUB, MEMORY_3_IN_A, MEMORY_30_IN_B},
    "space:a": {SPACE_A, MEMORY_3_IN_A},  # flat: not a/b, and not the prefix of ab
    "memory:*": {MEMORY_3_IN_A, MEMORY_30_IN_B},
    "memory:m3": {MEMORY_3_IN_A},
    "session:*": {SESSION_2, SESSION_20, NEW_SESSION},
    "session:s2": {SESSION_2},
    "self": {MEMORY_3_IN_A, SESSION_2},  # what g1 created; a space has no owner
}


def _who(*grants: tuple[str, str], id: str = "g1") -> Principal:
    return Principal(id=id, grants=tuple(Grant(right=r, scope=s) for r, s in grants))


@pytest.mark.parametrize("scope", sorted(CONTAINS))
def test_containment(scope: str) -> None:
    who = _who(("read", scope))
    held = {resource for resource in ALL if holds(who, "read", resource)}
    assert held == CONTAINS[scope]


def test_rights_do_not_imply_each_other() -> None:
    who = _who(("write", "*"), ("admin", "*"))
    assert not holds(who, "read", SPACE_A)
    assert holds(who, "write", SPACE_A)
    reader = _who(("read", "*"))
    assert not holds(reader, "write", SPACE_A)
    assert not holds(reader, "admin", STORE)


def test_owner_holds_everything() -> None:
    owner = Principal(id="owner", label="owner")
    for right in ("read", "write", "admin", "spawn", "files"):
        for resource in ALL:
            assert holds(owner, right, resource)


def test_check_raises_the_contract_shape() -> None:
    with pytest.raises(VenomError) as caught:
        check(_who(("write", "space:a"), id="g3"), "write", Resource.of_space("b"))
    error = caught.value
    assert error.code == "denied.write"
    assert error.exit_code == 4
    assert error.message == "principal g3 lacks 'write' on space:b"
    assert error.data == {
        "right": "write",
        "resource": "space:b",
        "principal": "g3",
        "fix": "venom-mem whoami  # this token's grants; the owner can add a client with "
        "--grant write:space:b",
    }


def test_resource_names() -> None:
    assert [str(r) for r in (STORE, SPACE_A, MEMORY_3_IN_A, SESSION_2, NEW_SESSION)] == [
        "*",
        "space:a",
        "memory:m3",
        "session:s2",
        "session:*",
    ]


@pytest.mark.parametrize(
    ("grants", "expected"),
    [
        ((("read", "*"),), Access(everything=True)),
        ((("read", "space:*"),), Access(everything=True)),
        ((("read", "memory:*"),), Access(everything=True)),
        ((("read", "space:a"), ("read", "space:b")), Access(spaces=frozenset({"a", "b"}))),
        ((("read", "memory:m7"),), Access(ids=frozenset({7}))),
        ((("read", "self"),), Access(owner="g1")),
        ((("write", "*"), ("read", "session:*")), Access()),
    ],
)
def test_readable_memories(grants: tuple[tuple[str, str], ...], expected: Access) -> None:
    assert readable_memories(_who(*grants)) == expected


def test_readable_sessions() -> None:
    assert readable_sessions(_who(("read", "session:*"))) == Access(everything=True)
    assert readable_sessions(_who(("read", "session:s4"), ("read", "self"))) == Access(
        ids=frozenset({4}), owner="g1"
    )
    assert readable_sessions(_who(("read", "space:*"))).nothing
    assert readable_sessions(Principal(id="owner")) == Access(everything=True)


def test_access_allows() -> None:
    access = Access(spaces=frozenset({"a"}), ids=frozenset({9}), owner="g1")
    assert access.allows(id=1, owner="g2", space="a")
    assert access.allows(id=9, owner="g2", space="b")
    assert access.allows(id=2, owner="g1", space="b")
    assert not access.allows(id=2, owner="g2", space="b")
    assert not access.allows(id=2, owner="g2")
    assert Access().nothing
    assert not access.nothing


def test_parse_grants() -> None:
    value = [{"right": "read", "scope": "*"}, {"right": "write", "scope": "space:project/x"}]
    assert parse_grants(value) == (
        Grant(right="read", scope="*"),
        Grant(right="write", scope="space:project/x"),
    )
    assert parse_grants([]) == ()


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("*", "invalid_params.type"),
        ([["read", "*"]], "invalid_params.type"),
        ([{"right": "read"}], "invalid_params.type"),
        ([{"right": "read", "scope": "*", "extra": 1}], "invalid_params.type"),
        ([{"right": 1, "scope": "*"}], "invalid_params.type"),
        ([{"right": "fly", "scope": "*"}], "invalid_params.client_right"),
        ([{"right": "spawn", "scope": "*"}], "invalid_params.client_right"),  # never granted
        ([{"right": "files", "scope": "*"}], "invalid_params.client_right"),
        ([{"right": "read", "scope": "everything"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "space:"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "space:Bad"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "memory:m0"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "memory:3"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "session:s01"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "memory:s1"}], "invalid_params.grant_scope"),
        # Selectors that could never name anything: too long a space, too big an ID.
        ([{"right": "read", "scope": "space:" + "a" * 129}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "memory:m9223372036854775808"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "session:s" + "9" * 23}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "memory:m\u00b2"}], "invalid_params.grant_scope"),
        ([{"right": "read", "scope": "session"}], "invalid_params.grant_scope"),
    ],
)
def test_parse_grants_refuses(value: object, code: str) -> None:
    with pytest.raises(VenomError) as caught:
        parse_grants(value)
    assert caught.value.code == code
    assert caught.value.data == {"param": "grants"}


@pytest.mark.parametrize("right", ["admin", "spawn", "files"])
def test_client_rights_are_restricted(right: str) -> None:
    with pytest.raises(VenomError) as caught:
        parse_grants([{"right": right, "scope": "*"}], allowed_rights=("read", "write"))
    assert caught.value.code == "invalid_params.client_right"
    assert caught.value.data == {"param": "grants"}


@pytest.mark.parametrize("scope", ["*\n", "space:a\n", "memory:m1\n", "session:s1\n", "self\n"])
def test_scope_with_a_trailing_newline_is_refused(scope: str) -> None:
    with pytest.raises(VenomError) as caught:
        parse_grants([{"right": "read", "scope": scope}])
    assert caught.value.code == "invalid_params.grant_scope"


def test_longest_selectors_are_valid() -> None:
    assert parse_grants([{"right": "read", "scope": "space:" + "a" * 128}])
    assert parse_grants([{"right": "read", "scope": "memory:m9223372036854775807"}])


@pytest.mark.parametrize(
    ("outer", "inner", "covered"),
    [
        ("*", "self", True),
        ("*", "space:user", True),
        ("space:*", "space:user", True),
        ("space:*", "memory:m3", True),
        ("space:*", "memory:*", True),
        ("space:*", "session:s1", False),
        ("space:user", "space:user", True),
        ("space:user", "space:user/sub", False),
        ("space:user", "memory:m3", False),  # m3 may be in user today; memories move
        ("memory:*", "memory:m3", True),
        ("memory:*", "space:user", False),
        ("memory:m3", "memory:m4", False),
        ("session:*", "session:s2", True),
        ("session:s2", "session:*", False),
        ("self", "self", True),
        ("self", "space:user", False),
        ("space:user", "*", False),
    ],
)
def test_scope_covers(outer: str, inner: str, covered: bool) -> None:
    assert scope_covers(outer, inner) is covered


def test_holds_grant() -> None:
    who = Principal(id="g7", grants=(Grant(right="read", scope="space:*"),))
    assert holds_grant(who, Grant(right="read", scope="space:user"))
    assert not holds_grant(who, Grant(right="write", scope="space:user"))
    assert not holds_grant(who, Grant(right="read", scope="*"))
    assert holds_grant(Principal(id="owner", label="owner"), Grant(right="admin", scope="*"))
