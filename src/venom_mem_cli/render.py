"""Human output for every verb, keyed on the result's shape (ADR 0014).

An object is a block of ``key  value`` lines; each member that is a list of objects is a
table under it; a member that is long text (``content``) follows as it is stored. Tables
fit the terminal: IDs, spaces, times and other short words are never split (columns of
least use are dropped first when it is narrow), and free text is cut to the row with an
ellipsis. Times are relative and local (``--full-times``: as stored). A search shows the
rank, not the raw score. A verb this module has never heard of renders by the same rules.
Stored text is printed as text (see :mod:`.cells`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from venom_mem_core.manifest_types import Verb

from .cells import Clock, clean, is_grant, is_provenance, one_line, plain, scalar
from .headlines import headline

__all__ = ["render"]

_STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red"}
LONG_TEXT = ("content",)  # shown after the block, as stored
# Never shown in a table: raw ranking numbers (the rank is), the daemon's random source, the
# reviser beside the author, the text itself, and the tombstone (marked on the ID).
HIDDEN = frozenset(
    {"score", "fts_rank", "vector_rank", "similarity", "source", "updated_by", "content"}
)
# Free text: cut to the row with an ellipsis, one line, and the first to give up width.
FLEXIBLE = frozenset({"snippet", "title", "cwd", "data", "label", "sha256", "origin"})
# Wrapped at blanks (a word too long for the column ends in an ellipsis, never folds).
WRAPPING = frozenset({"grants", "tags", "changed", "restart_required", "paths", "message"})
# Lower is kept longer when the terminal is narrow; IDs and spaces (0 and 1) never go.
PRIORITY = {
    "#": 0, "id": 0, "session": 0, "client": 0, "principal": 0, "seq": 0, "check": 0,
    "space": 1, "type": 1, "status": 1, "harness": 1, "action": 1, "entity": 1,
    "snippet": 1, "title": 2, "message": 2, "grants": 2, "resource": 2, "memories": 2,
    "origin": 2,
    "revision": 5, "author": 3, "by": 3, "reported_by": 3, "updated": 3, "ts": 3,
    "started": 3, "data": 3, "label": 3, "kind": 4, "parent": 4, "relation": 4,
    "expires": 4, "ended": 4, "cwd": 5, "tags": 5, "created": 5, "bytes": 5,
    "harness_session": 6,
}  # fmt: skip
NUMERIC = frozenset({"#", "seq", "memories", "bytes", "revision", "pid"})
HEADERS = {"reported_by": "by", "updated_by": "updated by", "harness_session": "harness id"}
FLEX_MIN = 12
_SHARES = {"snippet": 2, "message": 2}  # what a row is read for gets twice the free width


def render(
    verb: Verb,
    result: Mapping[str, Any],
    *,
    full_times: bool = False,
    params: Mapping[str, Any] | None = None,
    console: Console | None = None,
    clock: Clock | None = None,
) -> None:
    out = console or Console(highlight=False)
    view = View(out, clock or Clock(), full=full_times)
    if verb.name == "skill":
        # As generated, line for line: ``venom-mem skill > SKILL.md`` is a manual install.
        out.print(plain(result.get("content", "")), soft_wrap=True)
        return
    if verb.name == "memory.context":
        # As it is (it ends with a newline): a SessionStart hook prints it into the session.
        out.print(plain(result.get("text", "")), soft_wrap=True, end="")
        return
    line = headline(verb, result, params or {})
    if line is not None:
        out.print(line)
    view.object(verb, result, params or {}, skip_scalars=line is not None)


class View:
    def __init__(self, console: Console, clock: Clock, *, full: bool) -> None:
        self.console = console
        self.clock = clock
        self.full = full

    def object(
        self,
        verb: Verb,
        obj: Mapping[str, Any],
        params: Mapping[str, Any],
        *,
        skip_scalars: bool = False,
    ) -> None:
        lists = {k: v for k, v in obj.items() if _is_rows(v, _row_type(verb, k))}
        scalars = {
            k: v
            for k, v in obj.items()
            if k not in lists and k not in LONG_TEXT and k != "next" and not _quiet(k, v)
        }
        if scalars and not skip_scalars:
            self.block(scalars)
        for key, rows in lists.items():
            if rows and (len(lists) > 1 or (scalars and not skip_scalars)):
                self.console.print(Text(key, style="bold"))
            self.rows(verb, key, rows, params)
        for key in LONG_TEXT:
            if isinstance(obj.get(key), str):
                self.console.print()
                self.console.print(plain(obj[key]), soft_wrap=True)
        if obj.get("next"):
            from .helptext import command_line

            more = command_line(verb, {**params, "after": obj["next"]})
            self.console.print(Text(f"more: {more}", style="dim"), soft_wrap=True)

    def block(self, scalars: Mapping[str, Any]) -> None:
        entries = list(_flatten(scalars))
        width = max(len(label) for label, _, _ in entries)
        for label, key, value in entries:
            text = scalar(key, value, self.clock, full=self.full, long=True)
            style = _STATUS_STYLE.get(text, "") if key == "status" else ""
            line = Text.assemble((label.ljust(width), "dim"), "  ", (text, style))
            self.console.print(line, soft_wrap=True)

    def rows(self, verb: Verb, key: str, rows: list[dict[str, Any]], params: Any) -> None:
        if not rows:
            self.console.print(Text(_nothing(verb, key, params), style="dim"))
            return
        ranked = verb.name == "memory.search" or key == "results"
        columns = _columns(rows, ranked=ranked)
        cells = [self._cells(columns, row, n) for n, row in enumerate(rows, 1)]
        columns = self._fit(columns, cells)
        table = Table(
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            padding=(0, 1, 0, 0),  # with the separator: two blanks between columns
            header_style="bold",
        )
        widths = self._widths(columns, cells)
        for column in columns:
            table.add_column(
                HEADERS.get(column, column.replace("_", " ")),
                no_wrap=column not in WRAPPING,
                overflow="ellipsis",
                justify="right" if column in NUMERIC else "left",
                width=widths[column],
            )
        for row_cells in cells:
            table.add_row(*(row_cells[c] for c in columns))
        self.console.print(table)
        fixes = [(row.get("check") or row.get("id"), row["fix"]) for row in rows if _needs_fix(row)]
        for name, fix in fixes:
            self.console.print(Text(f"fix {one_line(name)}: {one_line(fix)}"), soft_wrap=True)

    def _cells(self, columns: list[str], row: dict[str, Any], rank: int) -> dict[str, Text]:
        cells: dict[str, Text] = {}
        for column in columns:
            if column == "#":
                cells[column] = Text(str(rank))
                continue
            value = row.get(column if column != "check" else "id")
            text = (
                Text(scalar(column, value, self.clock, full=self.full))
                if value is not None
                else Text("")
            )
            if column == "status":
                text.stylize(_STATUS_STYLE.get(text.plain, ""))
            if column in ("id", "check") and row.get("deleted"):
                text.append(" deleted", style="red")
            cells[column] = text
        return cells

    def _widths(self, columns: list[str], cells: list[dict[str, Text]]) -> dict[str, int]:
        """Every fixed column its widest cell; the free text shares what is left, each
        column no wider than its own widest cell (rich would shrink an ID to fit instead)."""
        widths = {c: _width(c, cells) for c in columns}
        free = sorted(
            (c for c in columns if c in FLEXIBLE or c in WRAPPING), key=lambda c: widths[c]
        )
        left = self.console.width - 2 * (len(columns) - 1)
        left -= sum(w for c, w in widths.items() if c not in free)
        shares = sum(_SHARES.get(c, 1) for c in free)
        for column in free:  # narrowest first: what one doesn't need, the next may take
            share = max(left * _SHARES.get(column, 1) // max(shares, 1), 4)
            widths[column] = min(widths[column], share, 40 if column == "title" else share)
            left -= widths[column]
            shares -= _SHARES.get(column, 1)
        return widths

    def _fit(self, columns: list[str], cells: list[dict[str, Text]]) -> list[str]:
        """Drop the columns of least use until the fixed ones and a readable width of the
        free text fit the terminal."""
        width = self.console.width
        kept = list(columns)
        while True:
            need = sum(_least(c, cells) for c in kept) + 2 * (len(kept) - 1)
            droppable = [c for c in kept if PRIORITY.get(c, 3) >= 2]
            if need <= width or not droppable:
                return kept
            kept.remove(max(reversed(droppable), key=lambda c: PRIORITY.get(c, 3)))


def _flatten(scalars: Mapping[str, Any], *, dotted: bool = False) -> Iterator[tuple[str, str, Any]]:
    """(label, key, value) per line of a block: a nested object becomes dotted lines named as
    the keys are (``daemon.idle_timeout_ms``, which config set takes), and ``config get``'s
    ``value`` is labelled by its ``key``."""
    for key, value in scalars.items():
        if (
            isinstance(value, dict)
            and value
            and not is_provenance(value)
            and not is_grant(value)
            and key != "origin"  # one line, as the source said it (cells.origin_text)
        ):
            prefix = str(scalars.get("key") or "") if key == "value" else key
            for label, inner_key, inner in _flatten(value, dotted=True):
                yield (f"{prefix}.{label}" if prefix else label), inner_key, inner
        elif not (key == "key" and isinstance(scalars.get("value"), dict)):
            yield (key if dotted else HEADERS.get(key, key.replace("_", " "))), key, value


def _least(column: str, cells: list[dict[str, Text]]) -> int:
    """The width a column needs to be worth showing: free text gets at least FLEX_MIN (the
    snippet twice that, since it is what a search is read for)."""
    if column in FLEXIBLE or column in WRAPPING:
        least = FLEX_MIN * 2 if column == "snippet" else FLEX_MIN
        return min(least, _width(column, cells))
    return _width(column, cells)


def _quiet(key: str, value: object) -> bool:
    """A flag that says nothing when false: ``truncated``, ``more``."""
    return value is False and key in ("truncated", "more")


def _row_type(verb: Verb, key: str) -> bool:
    """Whether the manifest says member ``key`` is a list of objects (so empty, it is an
    empty table, not an empty list of words)."""
    for f in verb.result.fields:
        if f.name == key:
            return (
                f.type.kind == "array"
                and f.type.items is not None
                and (f.type.items.kind == "object")
            )
    return False


def _is_rows(value: object, rows_by_manifest: bool) -> bool:
    if not isinstance(value, list):
        return False
    return isinstance(value[0], dict) if value else rows_by_manifest


def _needs_fix(row: dict[str, Any]) -> bool:
    return bool(row.get("fix")) and row.get("status") not in (None, "ok")


def _columns(rows: list[dict[str, Any]], *, ranked: bool) -> list[str]:
    seen: dict[str, None] = {"#": None} if ranked else {}
    for row in rows:
        for key in row:
            if key in HIDDEN or key == "fix" or (key == "deleted" and "id" in row):
                continue
            if key == "created" and "updated" in row:
                continue  # the last change is what a list is read for
            seen.setdefault("check" if key == "id" and "status" in row else key)
    return list(seen)


def _width(column: str, cells: list[dict[str, Text]]) -> int:
    header = len(HEADERS.get(column, column))
    return max([header, *(cell[column].cell_len for cell in cells if column in cell)])


def _nothing(verb: Verb, key: str, params: Mapping[str, Any]) -> str:
    if verb.name == "memory.search" and params.get("query"):
        return f"no memories match {clean(params['query'])!r}"
    if key in ("results", "memories"):
        return "no memories match"
    return f"no {key.replace('_', ' ')}"
