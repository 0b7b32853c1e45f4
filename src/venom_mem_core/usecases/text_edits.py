"""memory.replace and memory.forget: a memory named by its text instead of its ID (ADR 0043).

Each is one writer transaction: the space's live memories the caller can read are matched
(:mod:`..text_match`), and the one found is updated or deleted at the revision just read,
through memory.update's and memory.delete's own rules, so nothing can slip in between the
match and the write. A refusal changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .. import commands
from .. import validation as v
from ..grants import Resource, check, readable_memories
from ..ports import MemoryFilter, ReadTx
from ..records import Memory, Principal
from ..shapes import memory_id
from ..text_match import TextMatch, match_text
from .app import App
from .memories import _emit, delete_in, load_checked, update_in

if TYPE_CHECKING:
    from ..commands import ForgetMemory, ReplaceMemory

__all__ = ["forget_memory", "replace_memory"]

_PAGE = 500


def _live(tx: ReadTx, where: MemoryFilter) -> Iterator[Memory]:
    after: int | None = None
    while True:
        page = tx.list_memories(where, after, _PAGE)
        yield from page
        if len(page) < _PAGE:
            return
        after = page[-1].id


def _match(tx: ReadTx, who: Principal, space: str, old_text: str) -> tuple[TextMatch, Memory]:
    """The match, and its memory reloaded with the write right on it checked."""
    check(who, "write", Resource.of_space(space))
    where = MemoryFilter(access=readable_memories(who), spaces=frozenset({space}))
    found = match_text(_live(tx, where), old_text, space)
    return found, load_checked(tx, who, "write", found.memory.id)


def replace_memory(app: App, who: Principal, cmd: ReplaceMemory) -> dict[str, Any]:
    v.check_content_size(cmd.content, app.settings.max_content_bytes)
    with app.store.write() as tx:
        found, memory = _match(tx, who, cmd.space, cmd.old_text)
        update = commands.UpdateMemory(id=memory.id, revision=memory.revision, content=cmd.content)
        result, updated = update_in(app, tx, who, memory, update)
    if updated is not None:
        _emit(app, "memory.updated", updated)
    return {**result, "match": found.match}


def forget_memory(app: App, who: Principal, cmd: ForgetMemory) -> dict[str, Any]:
    with app.store.write() as tx:
        found, memory = _match(tx, who, cmd.space, cmd.old_text)
        memory = delete_in(app, tx, who, memory, memory.revision)
    _emit(app, "memory.deleted", memory)
    return {
        "id": memory_id(memory.id),
        "revision": memory.revision,
        "deleted": memory.deleted,
        "match": found.match,
    }
