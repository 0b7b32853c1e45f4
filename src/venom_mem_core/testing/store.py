"""The whole store contract: every mixin, and RFC-0020 section 1's transcript in process.

In the manner of zarr's ``StoreTests`` (``zarr/testing/store.py``): subclass
:class:`StoreContract` as ``class TestMyStore(StoreContract)`` and supply one fixture,
``store_factory``; pytest then runs every case on your store. A store proves less by combining
only some mixins (:class:`PortContract`, :class:`MemoryContract`, :class:`SearchContract`,
:class:`SessionContract`, :class:`PrincipalContract`, :class:`ContextContract`).

It drives the store through the use cases, with :class:`~venom_mem_core.local.LocalClient`
calling verbs exactly as the daemon does after ``hello``, so a pass means the store gives the
domain everything RFC-0020 needs: dedup, revisions, versions, soft delete, tombstones, purge,
paging, filters, search that ranks only what the caller can read (MEM-06), lineage and
durable clients. The port cases use the store directly, for what only it can show.

The classes have no ``Test`` prefix, so pytest collects them only through a subclass.
"""

from __future__ import annotations

from ..local import LocalClient
from ..usecases.principals import resolve_token
from .context import ContextContract
from .links import LinkContract
from .memories import MemoryContract
from .port import PortContract
from .principals import PrincipalContract
from .search import SearchContract
from .sessions import SessionContract
from .space_states import SpaceStateContract
from .support import READ_ALL, Env, fails
from .text_edits import TextEditContract

__all__ = ["StoreContract"]


class StoreContract(
    PortContract,
    MemoryContract,
    SearchContract,
    SessionContract,
    PrincipalContract,
    ContextContract,
    TextEditContract,
    LinkContract,
    SpaceStateContract,
):
    """Every behaviour the use cases need from a store. Subclass it; see the module doc."""

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
