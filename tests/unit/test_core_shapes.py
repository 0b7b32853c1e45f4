"""Records to the exact JSON shapes: absent members are absent, never null."""

from __future__ import annotations

from typing import Any

import attrs

from venom_mem_core.records import Client, Grant, Hit, Memory, Provenance, Session, Version
from venom_mem_core.shapes import (
    client_json,
    hit_json,
    memory_json,
    provenance_json,
    session_json,
    version_entry_json,
)

G1 = Provenance(principal="g1", label="claude-code")
MEMORY = Memory(
    id=1,
    space="user",
    kind="note",
    content="Prefers small PRs.",
    content_sha256=b"\x00" * 32,
    author=G1,
    updated_by=G1,
    created="2026-11-09T10:00:00.000Z",
    updated="2026-11-09T10:00:00.000Z",
)
SESSION = Session(id=1, harness="codex", reported_by=G1, started="2026-11-09T10:05:00.000Z")


def _no_nulls(value: Any) -> bool:
    if isinstance(value, dict):
        return all(v is not None and _no_nulls(v) for v in value.values())
    if isinstance(value, list):
        return all(_no_nulls(v) for v in value)
    return True


def test_provenance() -> None:
    assert provenance_json(G1) == {"principal": "g1", "label": "claude-code"}
    assert provenance_json(Provenance(principal="unknown")) == {"principal": "unknown"}


def test_minimal_memory() -> None:
    out = memory_json(MEMORY)
    assert out == {
        "id": "m1",
        "space": "user",
        "kind": "note",
        "tags": [],
        "importance": "normal",
        "branches": [],
        "revision": 1,
        "author": {"principal": "g1", "label": "claude-code"},
        "updated_by": {"principal": "g1", "label": "claude-code"},
        "created": "2026-11-09T10:00:00.000Z",
        "updated": "2026-11-09T10:00:00.000Z",
        "content": "Prefers small PRs.",
    }
    assert _no_nulls(out)


def test_full_memory() -> None:
    full = attrs.evolve(
        MEMORY,
        title="PRs",
        tags=("git",),
        session=4,
        deleted="2026-11-10T00:00:00.000Z",
        updated_by=Provenance(principal="g2"),
    )
    out = memory_json(full, embedding="pending")
    assert (out["title"], out["tags"], out["session"]) == ("PRs", ["git"], "s4")
    assert (out["deleted"], out["embedding"]) == ("2026-11-10T00:00:00.000Z", "pending")
    assert out["updated_by"] == {"principal": "g2"}


def test_search_hit() -> None:
    out = hit_json(Hit(memory=MEMORY, snippet="Prefers", score=1 / 61, fts_rank=1))
    assert out["snippet"] == "Prefers"
    assert (out["score"], out["fts_rank"]) == (1 / 61, 1)
    for absent in ("content", "vector_rank", "similarity", "title", "session", "deleted"):
        assert absent not in out
    assert _no_nulls(out)
    vector_only = hit_json(
        Hit(memory=MEMORY, snippet="s", score=1 / 61, vector_rank=1, similarity=0.5)
    )
    assert "fts_rank" not in vector_only
    assert (vector_only["vector_rank"], vector_only["similarity"]) == (1, 0.5)


def test_list_hit_has_no_search_members() -> None:
    out = hit_json(Hit(memory=MEMORY, snippet="Prefers"), search=False)
    for absent in ("score", "fts_rank", "vector_rank", "similarity", "content"):
        assert absent not in out
    deleted = hit_json(
        Hit(memory=attrs.evolve(MEMORY, deleted="2026-11-10T00:00:00.000Z"), snippet="x"),
        search=False,
    )
    assert deleted["deleted"] == "2026-11-10T00:00:00.000Z"


def test_sessions() -> None:
    assert session_json(SESSION) == {
        "session": "s1",
        "harness": "codex",
        "reported_by": {"principal": "g1", "label": "claude-code"},
        "started": "2026-11-09T10:05:00.000Z",
    }
    full = attrs.evolve(
        SESSION,
        harness_session="abc",
        parent=3,
        relation="fork",
        cwd="/home/u",
        ended="2026-11-09T11:00:00.000Z",
    )
    out = session_json(full)
    assert (out["parent"], out["relation"], out["cwd"]) == ("s3", "fork", "/home/u")
    assert (out["harness_session"], out["ended"]) == ("abc", "2026-11-09T11:00:00.000Z")


def test_version_entry_counts_bytes() -> None:
    version = Version(
        memory=1,
        revision=2,
        action="update",
        kind="note",
        title="",
        content="héllo",
        tags=(),
        by=Provenance(principal="owner", label="owner"),
        ts="2026-11-09T10:00:00.000Z",
    )
    assert version_entry_json(version) == {
        "revision": 2,
        "action": "update",
        "by": {"principal": "owner", "label": "owner"},
        "ts": "2026-11-09T10:00:00.000Z",
        "bytes": 6,
    }


def test_client_expires_is_nullable_not_absent() -> None:
    client = Client(
        name="codex",
        principal="g2",
        grants=(Grant(right="read", scope="*"),),
        token_hash=b"\x01" * 32,
        created="2026-11-09T10:00:00.000Z",
    )
    assert client_json(client) == {
        "client": "codex",
        "principal": "g2",
        "grants": [{"right": "read", "scope": "*"}],
        "created": "2026-11-09T10:00:00.000Z",
        "expires": None,
    }
