"""space.list, space.describe and store.status."""

from __future__ import annotations

from typing import Any

from ..commands import DescribeSpace, ListSpaces, StoreStatus
from ..grants import Access, Resource, check
from ..ports import SpaceSummary
from ..records import Principal, SpaceDescription
from .app import App

__all__ = ["describe_space", "list_spaces", "store_status"]


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


def list_spaces(app: App, who: Principal, cmd: ListSpaces) -> dict[str, Any]:
    access = _space_access(who)
    if access.nothing:
        return {"spaces": []}
    with app.store.read() as tx:
        summaries = tx.space_summaries(access)
    return {"spaces": [_space_json(s) for s in summaries]}


def _space_json(summary: SpaceSummary) -> dict[str, Any]:
    out: dict[str, Any] = {
        "space": summary.space,
        "memories": summary.memories,
        "updated": summary.updated,
    }
    if summary.description is not None:
        out["description"] = summary.description
    return out


def describe_space(app: App, who: Principal, cmd: DescribeSpace) -> dict[str, Any]:
    """Set what belongs in a space and when to recall it; an empty description clears it.

    Needs write on the space, as adding to it does. A described space is listed even while it
    holds no live memory (ADR 0018)."""
    space, description = cmd.space, cmd.description
    check(who, "write", Resource.of_space(space))
    with app.store.write() as tx:
        current = tx.space_descriptions([space]).get(space)
        old = current.description if current is not None else ""
        if old == description:
            return {"space": space, "changed": False}
        if description:
            record = SpaceDescription(
                space=space, description=description, by=who.provenance, updated=app.clock.now()
            )
            tx.set_space_description(record)
        else:
            tx.delete_space_description(space)
    app.events.emit("space.described", f"space:{space}", {"space": space})
    return {"space": space, "changed": True}


def store_status(app: App, who: Principal, cmd: StoreStatus) -> dict[str, Any]:
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
        **({"engine": facts["engine"]} if "engine" in facts else {}),  # optional, additive
        "bytes": facts["bytes"],
        "memories": counts.memories,
        "deleted": counts.deleted,
        "versions": counts.versions,
        "sessions": counts.sessions,
        "vectors": counts.vectors,
        "pending": counts.pending if embedder is not None else 0,
        "embeddings": "off" if embedder is None else embedder.model,
    }
