"""Links between memories: memory.link, memory.unlink, memory.related, and what superseding
means for the reads (docs/adr/0042).

A link is "from <relation> to". It needs write on ``from`` and read on ``to``, both live;
memory.related shows a link only when the caller can read the memory at its other end and
that memory is live. A link stays through a delete of either end (hidden while that end is
deleted, back on restore) and goes with a purge. An unlink keeps the row, stamped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import VenomError
from ..grants import readable_memories
from ..ports import ReadTx
from ..records import Memory, Principal
from ..shapes import memory_id, provenance_json
from .app import App
from .link_rows import add_link, visible
from .memories import load_checked

if TYPE_CHECKING:
    from ..commands import LinkMemories, RelatedMemories, UnlinkMemories

__all__ = ["link_memories", "related_memories", "unlink_memories"]


def _ends(tx: ReadTx, who: Principal, source: int, target: int) -> tuple[Memory, Memory]:
    """Both ends, live, after write is checked on ``source`` and read on ``target``."""
    if source == target:
        raise VenomError.param("link_self", "to", f"{memory_id(source)} can't be linked to itself")
    return load_checked(tx, who, "write", source), load_checked(tx, who, "read", target)


def _link_json(source: int, target: int, relation: str) -> dict[str, Any]:
    return {"from": memory_id(source), "to": memory_id(target), "relation": relation}


def _emit(app: App, type_: str, memory: Memory, link: dict[str, Any]) -> None:
    app.events.emit(type_, f"space:{memory.space}", {"space": memory.space, **link})


def link_memories(app: App, who: Principal, cmd: LinkMemories) -> dict[str, Any]:
    with app.store.write() as tx:
        source, _ = _ends(tx, who, cmd.from_, cmd.to)
        changed = add_link(
            tx, who, app.clock.now(), source=cmd.from_, target=cmd.to, relation=cmd.relation
        )
    out = _link_json(cmd.from_, cmd.to, cmd.relation)
    if changed:
        _emit(app, "memory.linked", source, out)
    return {**out, "changed": changed}


def unlink_memories(app: App, who: Principal, cmd: UnlinkMemories) -> dict[str, Any]:
    with app.store.write() as tx:
        source, _ = _ends(tx, who, cmd.from_, cmd.to)
        link = tx.find_link(cmd.from_, cmd.to, cmd.relation)
        if link is None:
            raise VenomError.not_found(
                "link",
                f"{memory_id(cmd.from_)} has no live {cmd.relation} link to {memory_id(cmd.to)}",
            )
        now = app.clock.now()
        tx.remove_link(link.id, now, who.provenance)
    out = _link_json(cmd.from_, cmd.to, cmd.relation)
    _emit(app, "memory.unlinked", source, out)
    return {**out, "unlinked": now}


def related_memories(app: App, who: Principal, cmd: RelatedMemories) -> dict[str, Any]:
    access = readable_memories(who)
    with app.store.read() as tx:
        load_checked(tx, who, "read", cmd.id)
        links = tx.links_of(cmd.id, include_removed=cmd.include_unlinked)
        out = []
        for link in links:
            outgoing = link.source == cmd.id
            other = link.target if outgoing else link.source
            if not visible(tx, access, other):
                continue
            entry: dict[str, Any] = {
                "id": memory_id(other),
                "relation": link.relation,
                "direction": "out" if outgoing else "in",
                "by": provenance_json(link.by),
                "created": link.created,
            }
            if link.removed is not None and link.removed_by is not None:
                entry["unlinked"] = link.removed
                entry["unlinked_by"] = provenance_json(link.removed_by)
            out.append(entry)
    return {"id": memory_id(cmd.id), "links": out}
