"""Use-case rules that hold before any store is asked: grammars, limits, rights, tokens.

They were cases of the store contract, but no store can change their outcome (the input is
refused before the store is read, or the answer comes from the app's own registry), so they
run here once, on the in-memory store.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from venom_mem_core.clock import parse_ts
from venom_mem_core.errors import VenomError
from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.records import Grant
from venom_mem_core.testing.support import READ_ALL, UNKNOWN, Env, fails, list_ids, search_ids
from venom_mem_core.usecases.principals import resolve_token
from venom_mem_core.usecases.settings import MemorySettings

# Looks like an RFC-0005 token to the secret check; it is not a real one.
FAKE_TOKEN = "vnt1.venom-mem.g1." + "Q" * 43

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


class _Unreadable:
    """A store that fails every access: what is answered in spite of it needs no store."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store was used: {name}")


class TestUseCaseRules:
    @pytest.fixture
    def env(self) -> Iterator[Env]:
        with InMemoryStore() as store:
            yield Env.on(store)

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

    def test_update_needs_something_to_change(self, env: Env) -> None:
        env.add("text")
        fails(
            env.g1,
            "memory.update",
            {"id": "m1", "revision": 1},
            "invalid_params.missing",
            "content",
        )

    def test_purge_needs_admin(self, env: Env) -> None:
        env.add("text")
        error = fails(env.g1, "memory.purge", {"id": "m1"}, "denied.admin")
        assert error.data["principal"] == "g1"
        assert list_ids(env.owner) == ["m1"]

    @pytest.mark.parametrize("query", ["", " ", "\t\n  "])
    @pytest.mark.parametrize("query_mode", ["rfc", "natural"])
    def test_search_needs_words(self, env: Env, query: str, query_mode: str) -> None:
        params = {"query": query, "query_mode": query_mode}
        fails(env.g1, "memory.search", params, "invalid_params.query", "query")

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

    def test_client_add_by_a_client_is_denied(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        error = fails(env.g1, "client.add", {"name": "mine", "grants": grants}, "denied.admin")
        assert error.data["principal"] == "g1"
        fails(env.g1, "client.list", None, "denied.admin")
        assert env.owner.call("client.list") == {"clients": []}

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
