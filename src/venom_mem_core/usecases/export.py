"""store.export: one page of an export of what the caller may read (docs/adr/0039).

The export runs in five parts, each newest first as the store lists them: memories with their
kept revisions, then sessions with their chains, then described spaces, then the links between
exported memories (read memory by memory), then inactive spaces. ``next`` names the part and
the last ID sent (``memories:m12``, ``sessions:s3``, ``spaces``, ``links:m7``,
``inactive_spaces``), so a page reads only what it returns and the caller's memory stays
bounded. A page stops once its lines would pass :data:`PAGE_BYTES`, well inside the 1 MiB
frame, or once it has read :data:`PAGE_ROWS` rows (a links page reads many memories for few
lines).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from ..errors import VenomError
from ..export_format import (
    header_line,
    inactive_space_line,
    link_line,
    memory_line,
    session_line,
    space_line,
)
from ..grants import Resource, check, readable_memories, readable_sessions
from ..ids import id_number
from ..ports import MemoryFilter, ReadTx, SessionFilter
from ..records import Memory, Principal, Session
from ..shapes import memory_id, provenance_json, session_id
from .app import App
from .memories import _kept
from .sessions import lineage, visible
from .spaces import _space_access

__all__ = ["PAGE_BYTES", "PAGE_ROWS", "export_page"]

# JSON as the wire may escape it (every non-ASCII character as \uXXXX): a page of this many
# bytes, plus one line that passes it, stays under the frame.
PAGE_BYTES = 256 * 1024
PAGE_ROWS = 1000
_BATCH = 20


class ExportPage(Protocol):
    spaces: tuple[str, ...] | None
    include_deleted: bool
    after: str | None


def export_page(app: App, who: Principal, cmd: ExportPage) -> dict[str, Any]:
    if cmd.spaces is not None:
        for space in cmd.spaces:
            check(who, "read", Resource.of_space(space))
    part, last = _cursor(cmd.after)
    page = _Page()
    with app.store.read() as tx:
        if part == "memories":
            last = _memories(app, tx, who, cmd, after=last, page=page)
            part, last = ("memories", last) if page.full else ("sessions", None)
        if part == "sessions" and not page.full:
            last = _sessions(tx, who, last, page)
            part, last = ("sessions", last) if page.full else ("spaces", None)
        if part == "spaces" and not page.full:
            _spaces(tx, who, cmd, page)
            part = "links"
        if part == "links" and not page.full:
            last = _links(tx, _memory_filter(who, cmd), after=last, page=page)
            part, last = ("links", last) if page.full else ("inactive_spaces", None)
        if part == "inactive_spaces" and not page.full:
            _inactive_spaces(tx, who, cmd, page)
            part = "done"
    out: dict[str, Any] = {"lines": page.lines, "next": _next(part, last)}
    if cmd.after is None:  # the file's first line, once
        by = provenance_json(who.provenance)
        out["header"] = header_line(_store(app, who), app.clock.now(), by)
    return out


class _Row(Protocol):
    @property
    def id(self) -> int: ...


_R = TypeVar("_R", bound=_Row)


class _Page:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.bytes = 0
        self.rows = 0

    @property
    def full(self) -> bool:
        return self.bytes >= PAGE_BYTES or self.rows >= PAGE_ROWS

    def add(self, line: dict[str, Any]) -> None:
        self.lines.append(line)
        self.bytes += len(json.dumps(line))

    def fill(
        self,
        after: int | None,
        rows_after: Callable[[int | None], Sequence[_R]],
        lines: Callable[[_R], Sequence[dict[str, Any]]],
    ) -> int | None:
        """Add ``lines(row)`` for the rows listed after ``after``, a batch at a time, until
        the page is full or the rows end; the ID of the last row read."""
        while not self.full:
            rows = rows_after(after)
            for row in rows:
                for line in lines(row):
                    self.add(line)
                self.rows += 1
                after = row.id
                if self.full:
                    return after
            if len(rows) < _BATCH:
                return after
        return after


def _memory_filter(who: Principal, cmd: ExportPage) -> MemoryFilter:
    """The memories exported: readable, in the named spaces, deleted ones when asked. Inactive
    spaces' memories too: the export names what is inactive rather than leaving it out."""
    return MemoryFilter(
        access=readable_memories(who),
        spaces=frozenset(cmd.spaces) if cmd.spaces is not None else None,
        include_deleted=cmd.include_deleted,
    )


def _memories(
    app: App, tx: ReadTx, who: Principal, cmd: ExportPage, *, after: int | None, page: _Page
) -> int | None:
    where = _memory_filter(who, cmd)

    def lines(memory: Memory) -> list[dict[str, Any]]:
        versions = [v for v in tx.list_versions(memory.id) if _kept(app, memory, v.revision)]
        return [memory_line(memory, versions)]

    return page.fill(after, lambda last: tx.list_memories(where, last, _BATCH), lines)


def _links(tx: ReadTx, where: MemoryFilter, *, after: int | None, page: _Page) -> int | None:
    """Each exported memory's outgoing links, unlinked ones too, whose other end is exported
    as well (the import can map both ends; the caller can read both)."""

    def lines(memory: Memory) -> list[dict[str, Any]]:
        out = []
        for link in tx.links_of(memory.id, include_removed=True):
            target = tx.get_memory(link.target) if link.source == memory.id else None
            if target is not None and where.matches(target):
                out.append(link_line(link))
        return out

    return page.fill(after, lambda last: tx.list_memories(where, last, _BATCH), lines)


def _sessions(tx: ReadTx, who: Principal, after: int | None, page: _Page) -> int | None:
    where = SessionFilter(access=readable_sessions(who))

    def lines(row: Session) -> list[dict[str, Any]]:
        session = visible(tx, who, row)
        chain, _ = lineage(tx, who, session)
        return [session_line(session, chain)]

    return page.fill(after, lambda last: tx.list_sessions(where, last, _BATCH), lines)


def _spaces(tx: ReadTx, who: Principal, cmd: ExportPage, page: _Page) -> None:
    access = _space_access(who)
    if access.nothing:
        return
    described = [s.space for s in tx.space_summaries(access) if s.description is not None]
    if cmd.spaces is not None:
        described = [s for s in described if s in cmd.spaces]
    records = tx.space_descriptions(described)
    for space in described:
        if space in records:
            page.add(space_line(records[space]))


def _inactive_spaces(tx: ReadTx, who: Principal, cmd: ExportPage, page: _Page) -> None:
    """Inactive spaces readable as a whole (space.list's rule), by name."""
    access = _space_access(who)
    for space, state in sorted(tx.inactive_spaces().items()):
        named = cmd.spaces is None or space in cmd.spaces
        if named and (access.everything or space in access.spaces):
            page.add(inactive_space_line(state))


def _store(app: App, who: Principal) -> dict[str, Any]:
    """Which store: its engine and schema, and its path for a caller who may read it all
    (store.status's right: a client reading some spaces learns no path)."""
    facts = app.store.describe()
    out: dict[str, Any] = {k: facts[k] for k in ("engine", "schema_version") if k in facts}
    try:
        check(who, "read", Resource.store())
    except VenomError:
        return out
    out["path"] = facts.get("path")
    return out


def _cursor(after: str | None) -> tuple[str, int | None]:
    if after is None:
        return "memories", None
    part, _, last = after.partition(":")
    if part in ("spaces", "inactive_spaces") and not last:
        return part, None
    prefix = {"memories": "m", "sessions": "s", "links": "m"}.get(part)
    number = id_number(last, prefix) if prefix is not None and last else None
    if prefix is not None and (number is not None or not last):
        return part, number
    raise VenomError.param("cursor", "after", f"{after!r} is not a next store.export returned")


def _next(part: str, last: int | None) -> str | None:
    if part == "done":
        return None
    if part in ("spaces", "inactive_spaces"):
        return part
    text = (session_id if part == "sessions" else memory_id)(last) if last is not None else ""
    return f"{part}:{text}"
