"""Records to the exact JSON shapes of RFC-0020: the one place the wire shapes are written.

Absent members are absent, never null: ``title`` when empty, ``session``, ``label``,
``deleted``, ``parent``, ``relation``, ``cwd``, ``harness_session`` and ``ended``.

``importance`` and ``branches`` (ADR 0017): memory.get always carries both; a hit carries
``importance`` only when it isn't ``normal`` and ``branches`` only when there are some, so a
hit of a memory that uses neither is exactly RFC-0020's (its section 1 transcript pins it).
``origin`` (ADR 0040) is present only on an imported memory that was given one.
"""

from __future__ import annotations

from typing import Any

from .records import Client, Grant, Hit, Memory, Origin, Provenance, Session, Version
from .validation import utf8_len

__all__ = [
    "client_json",
    "grant_json",
    "hit_json",
    "memory_id",
    "memory_json",
    "origin_json",
    "provenance_json",
    "session_id",
    "session_json",
    "version_entry_json",
]


def memory_id(id: int) -> str:
    return f"m{id}"


def session_id(id: int) -> str:
    return f"s{id}"


def provenance_json(p: Provenance) -> dict[str, Any]:
    out: dict[str, Any] = {"principal": p.principal}
    if p.label is not None:
        out["label"] = p.label
    return out


def origin_json(o: Origin) -> dict[str, str]:
    out = {"format": o.format}
    for name in ("author", "created", "id"):
        value = getattr(o, name)
        if value is not None:
            out[name] = value
    return out


def grant_json(g: Grant) -> dict[str, str]:
    return {"right": g.right, "scope": g.scope}


def _memory_common(m: Memory, *, full: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": memory_id(m.id), "space": m.space, "kind": m.kind}
    if m.title:
        out["title"] = m.title
    out["tags"] = list(m.tags)
    if full or m.importance != "normal":
        out["importance"] = m.importance
    if full or m.branches:
        out["branches"] = list(m.branches)
    out["revision"] = m.revision
    out["author"] = provenance_json(m.author)
    out["updated_by"] = provenance_json(m.updated_by)
    if m.session is not None:
        out["session"] = session_id(m.session)
    out["created"] = m.created
    out["updated"] = m.updated
    if m.origin is not None:
        out["origin"] = origin_json(m.origin)
    return out


def memory_json(m: Memory, *, embedding: str | None = None) -> dict[str, Any]:
    """The Memory shape of section 2, as memory.get returns it."""
    out = _memory_common(m, full=True)
    out["content"] = m.content
    if m.deleted is not None:
        out["deleted"] = m.deleted
    if embedding is not None:
        out["embedding"] = embedding
    return out


def hit_json(h: Hit, *, search: bool = True) -> dict[str, Any]:
    """The Hit shape of section 5; lists (``search=False``) carry no ranking members."""
    out = _memory_common(h.memory, full=False)
    if h.memory.deleted is not None:
        out["deleted"] = h.memory.deleted
    out["snippet"] = h.snippet
    if search:
        out["score"] = h.score
        if h.fts_rank is not None:
            out["fts_rank"] = h.fts_rank
        if h.vector_rank is not None:
            out["vector_rank"] = h.vector_rank
        if h.similarity is not None:
            out["similarity"] = h.similarity
    return out


def version_entry_json(v: Version) -> dict[str, Any]:
    return {
        "revision": v.revision,
        "action": v.action,
        "by": provenance_json(v.by),
        "ts": v.ts,
        "bytes": utf8_len(v.content, "content"),
    }


def session_json(s: Session) -> dict[str, Any]:
    out: dict[str, Any] = {"session": session_id(s.id), "harness": s.harness}
    if s.harness_session is not None:
        out["harness_session"] = s.harness_session
    if s.parent is not None:
        out["parent"] = session_id(s.parent)
    if s.relation is not None:
        out["relation"] = s.relation
    if s.cwd is not None:
        out["cwd"] = s.cwd
    out["reported_by"] = provenance_json(s.reported_by)
    out["started"] = s.started
    if s.ended is not None:
        out["ended"] = s.ended
    return out


def client_json(c: Client) -> dict[str, Any]:
    return {
        "client": c.name,
        "principal": c.principal,
        "grants": [grant_json(g) for g in c.grants],
        "created": c.created,
        "expires": c.expires,
    }
