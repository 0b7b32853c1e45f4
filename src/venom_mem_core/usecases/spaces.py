"""space.list and store.status."""

from __future__ import annotations

from typing import Any

from ..grants import Access, Resource, check
from ..records import Principal
from .app import App

__all__ = ["list_spaces", "store_status"]


def _space_access(who: Principal) -> Access:
    """Spaces the caller can read as a whole: memory-level and ``self`` grants don't count."""
    if who.is_owner:
        return Access(everything=True)
    spaces: set[str] = set()
    for grant in who.grants:
        if grant.right != "read":
            continue
        if grant.scope in ("*", "space:*"):
            return Access(everything=True)
        if grant.scope.startswith("space:"):
            spaces.add(grant.scope[len("space:") :])
    return Access(spaces=frozenset(spaces))


def list_spaces(app: App, who: Principal) -> dict[str, Any]:
    access = _space_access(who)
    if access.nothing:
        return {"spaces": []}
    with app.store.read() as tx:
        summaries = tx.space_summaries(access)
    return {
        "spaces": [
            {"space": s.space, "memories": s.memories, "updated": s.updated} for s in summaries
        ]
    }


def store_status(app: App, who: Principal) -> dict[str, Any]:
    """Counts, sizes and versions. Unscoped: it needs read on the whole store (``*``)."""
    check(who, "read", Resource.store())
    facts = app.store.describe()
    with app.store.read() as tx:
        counts = tx.counts()
    embedder = app.embedder
    return {
        "path": facts["path"],
        "schema_version": facts["schema_version"],
        "sqlite_version": facts["sqlite_version"],
        "bytes": facts["bytes"],
        "memories": counts.memories,
        "deleted": counts.deleted,
        "versions": counts.versions,
        "sessions": counts.sessions,
        "vectors": counts.vectors,
        "pending": counts.pending if embedder is not None else 0,
        "embeddings": "off" if embedder is None else embedder.model,
    }
