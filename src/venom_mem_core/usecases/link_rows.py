"""The link rows the memory use cases share: writing one, and who supersedes a memory
(docs/adr/0042). Below both :mod:`.memories` (memory.add's ``supersedes``, memory.get's
``superseded_by``) and :mod:`.links` (the link verbs)."""

from __future__ import annotations

from typing import Any

from ..errors import VenomError
from ..grants import Access, readable_memories
from ..ports import ReadTx, WriteTx
from ..records import Link, Principal
from ..shapes import memory_id, provenance_json

__all__ = ["SUPERSEDES", "add_link", "link_history", "superseded_by", "visible"]

SUPERSEDES = "supersedes"


def add_link(
    tx: WriteTx, who: Principal, now: str, *, source: int, target: int, relation: str
) -> bool:
    """Write the link unless it is there; whether it was written. A supersedes link that
    would close a cycle is refused (``conflict.link_cycle``)."""
    if tx.find_link(source, target, relation) is not None:
        return False
    if relation == SUPERSEDES:
        _refuse_cycle(tx, source, target)
    tx.insert_link(
        Link(id=0, source=source, target=target, relation=relation, by=who.provenance, created=now)
    )
    return True


def _refuse_cycle(tx: ReadTx, source: int, target: int) -> None:
    """``conflict.link_cycle`` when ``target`` already supersedes ``source``, directly or
    through others: with the new link each memory of the cycle would be superseded by a
    live one, and every one of them would be left out of the reads (docs/adr/0042).

    Walks up from ``source`` (who supersedes it, and who supersedes those): the new fact of
    a chain is superseded by nothing, so the usual link costs one lookup. Links whose ends
    are deleted count, so a restore can't bring a cycle back."""
    above: dict[int, int] = {source: source}  # memory -> the one it supersedes on the way
    todo = [source]
    while todo:
        below = todo.pop()
        for link in tx.links_of(below):
            if link.relation != SUPERSEDES or link.target != below or link.source in above:
                continue
            above[link.source] = below
            if link.source == target:
                path = [target]
                while path[-1] != source:
                    path.append(above[path[-1]])
                chain = " supersedes ".join(memory_id(id) for id in path)
                raise VenomError(
                    "conflict.link_cycle",
                    f"{memory_id(source)} can't supersede {memory_id(target)}: {chain},"
                    " and the link would close a cycle in which every memory is superseded",
                    {
                        "cycle": [memory_id(id) for id in (source, *path)],
                        "fix": "memory.unlink one supersedes link of the cycle first, or"
                        " link with another relation",
                    },
                )
            todo.append(link.source)


def visible(tx: ReadTx, access: Access, id: int) -> bool:
    """Whether memory ``id`` is live and readable through ``access``."""
    other = tx.get_memory(id)
    return (
        other is not None
        and other.deleted is None
        and access.allows(id=other.id, owner=other.author.principal, space=other.space)
    )


def superseded_by(tx: ReadTx, who: Principal, id: int) -> list[str]:
    """The live memories the caller can read that supersede ``id``, oldest link first."""
    access = readable_memories(who)
    return [
        memory_id(link.source)
        for link in tx.links_of(id)
        if link.relation == SUPERSEDES and link.target == id and visible(tx, access, link.source)
    ]


def link_history(tx: ReadTx, who: Principal, id: int) -> list[dict[str, Any]]:
    """memory.history's ``links``: each link and unlink of memory ``id`` whose other end the
    caller can read, newest first (docs/adr/0042)."""
    access = readable_memories(who)
    events: list[dict[str, Any]] = []
    for link in tx.links_of(id, include_removed=True):
        outgoing = link.source == id
        other = link.target if outgoing else link.source
        if not visible(tx, access, other):
            continue
        said = {"id": memory_id(other), "relation": link.relation}
        said["direction"] = "out" if outgoing else "in"
        events.append(
            {"action": "link", **said, "by": provenance_json(link.by), "ts": link.created}
        )
        if link.removed is not None and link.removed_by is not None:
            removed = provenance_json(link.removed_by)
            events.append({"action": "unlink", **said, "by": removed, "ts": link.removed})
    # Newest first; at one timestamp, the later event (an unlink after its link) first.
    order = sorted(range(len(events)), key=lambda i: (str(events[i]["ts"]), i), reverse=True)
    return [events[i] for i in order]
