"""space.list, space.describe and store.status."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..grants import Access, Resource, check
from ..ports import SpaceSummary
from ..records import InactiveSpace, Principal, SpaceDescription
from .app import App
from .space_states import activate_on_write

if TYPE_CHECKING:
    from ..commands import ActivateSpace, DeactivateSpace, DescribeSpace, ListSpaces, StoreStatus

__all__ = [
    "activate_space",
    "deactivate_space",
    "describe_space",
    "list_spaces",
    "store_status",
]


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
        summaries = {s.space: s for s in tx.space_summaries(access)}
        inactive = tx.inactive_spaces()
    # An inactive space is listed even when it holds nothing the caller can read, as a
    # described one is, so that it can be found and activated again.
    for space, state in inactive.items():
        if space not in summaries and (access.everything or space in access.spaces):
            summaries[space] = SpaceSummary(space=space, memories=0, updated=state.since)
    return {"spaces": [_space_json(summaries[s], s in inactive) for s in sorted(summaries)]}


def _space_json(summary: SpaceSummary, inactive: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "space": summary.space,
        "memories": summary.memories,
        "updated": summary.updated,
    }
    if summary.description is not None:
        out["description"] = summary.description
    if inactive:  # absent while active: space.list reads as RFC-0020's until one is not
        out["active"] = False
    return out


def deactivate_space(app: App, who: Principal, cmd: DeactivateSpace) -> dict[str, Any]:
    """Leave a space out of reads that name none; needs write on it (docs/adr/0042)."""
    check(who, "write", Resource.of_space(cmd.space))
    with app.store.write() as tx:
        changed = cmd.space not in tx.inactive_spaces()
        if changed:
            state = InactiveSpace(space=cmd.space, by=who.provenance, since=app.clock.now())
            tx.set_space_inactive(state)
    if changed:
        app.events.emit("space.deactivated", f"space:{cmd.space}", {"space": cmd.space})
    return {"space": cmd.space, "active": False, "changed": changed}


def activate_space(app: App, who: Principal, cmd: ActivateSpace) -> dict[str, Any]:
    check(who, "write", Resource.of_space(cmd.space))
    with app.store.write() as tx:
        changed = activate_on_write(tx, cmd.space)
    if changed:
        app.events.emit("space.activated", f"space:{cmd.space}", {"space": cmd.space})
    return {"space": cmd.space, "active": True, "changed": changed}


def describe_space(app: App, who: Principal, cmd: DescribeSpace) -> dict[str, Any]:
    """Set what belongs in a space and when to recall it; an empty description clears it.

    Needs write on the space, as adding to it does. A described space is listed even while it
    holds no live memory (ADR 0018)."""
    space, description = cmd.space, cmd.description
    check(who, "write", Resource.of_space(space))
    with app.store.write() as tx:
        activate_on_write(tx, space)
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
