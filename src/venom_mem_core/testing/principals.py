"""Principals on the store: grants on spaces, the unknown principal, durable clients and their
tokens (CONTRACT sections 4 and 5)."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest

from ..errors import VenomError
from ..records import Grant, Principal
from ..usecases.principals import OWNER, recheck, resolve_token
from .support import READ_ALL, TOKEN_RE, UNKNOWN, Env, StoreFixtures, fails, search_ids

__all__ = ["PrincipalContract"]


class PrincipalContract(StoreFixtures):
    """Grants, clients and tokens, where the store keeps what they rest on."""

    # -- grants -----------------------------------------------------------------------------

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
        # its whole JSON is pinned by store.py's test_section_1_transcript, the same call
        fails(env.unknown, "memory.add", {"space": "user", "content": "hello"}, "denied.write")
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

    # -- clients and tokens -----------------------------------------------------------------

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

    def test_client_name_in_use(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        env.owner.call("client.add", {"name": "codex", "grants": grants})
        fails(
            env.owner, "client.add", {"name": "codex", "grants": grants}, "conflict.client_exists"
        )
        assert len(env.owner.call("client.list")["clients"]) == 1

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

    def test_removed_client_token_is_revoked(self, env: Env) -> None:
        grants = [{"right": "read", "scope": "*"}]
        token = env.owner.call("client.add", {"name": "codex", "grants": grants})["token"]
        env.owner.call("client.remove", {"name": "codex"})
        with pytest.raises(VenomError) as caught:
            resolve_token(env.app, token, unknown=(READ_ALL,))
        assert caught.value.code == "denied.token"
        assert caught.value.data["reason"] == "revoked"
        fails(env.owner, "client.remove", {"name": "codex"}, "not_found.client")

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
