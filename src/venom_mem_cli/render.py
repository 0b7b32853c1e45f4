"""Human output: tables for hits, memories and sessions; key-value lines for the rest.

Everything shown comes from other agents (RFC-0020 T1), so it is printed as text: never
parsed as rich markup, with control characters (terminal escapes) removed, and without the
bidirectional formatting characters that could make text read other than it is stored.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from venom_mem_core.manifest_types import Verb

__all__ = ["render"]

console = Console()
_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # bidi marks, embeddings, isolates
)
_STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red"}


def _text(value: object) -> Text:
    """Stored text as plain text: no markup, no escapes, newlines and tabs kept."""
    return Text(_CONTROLS.sub("", str(value)))


def _who(p: dict[str, Any] | None) -> Text:
    if not p:
        return Text()
    return _text(p.get("label") or p.get("principal", ""))


def _value(value: object) -> Text:
    """A value in a key-value line: nested objects and lists as JSON, not Python reprs."""
    if isinstance(value, dict | list | bool) or value is None:
        return _text(json.dumps(value, ensure_ascii=False))
    return _text(value)


def _id(row: dict[str, Any]) -> Text:
    """The ID, marked when the memory is deleted (shown with --include-deleted)."""
    if row.get("deleted"):
        return Text.assemble(_text(row["id"]), (" deleted", "red"))
    return _text(row["id"])


def _hits(rows: list[dict[str, Any]], *, search: bool) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("id", "space", "kind", "title", "author", "rev", "snippet"):
        table.add_column(column, overflow="fold")
    if search:
        table.add_column("score", justify="right")
    for row in rows:
        cells = [
            _id(row),
            _text(row["space"]),
            _text(row["kind"]),
            _text(row.get("title", "")),
            _who(row.get("author")),
            _text(row["revision"]),
            _text(row.get("snippet", "")),
        ]
        if search:
            cells.append(Text(f"{row.get('score', 0):.4f}"))
        table.add_row(*cells)
    console.print(table)


def _sessions(rows: list[dict[str, Any]]) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("session", "harness", "parent", "relation", "cwd", "reported by", "started"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            *(
                _text(row.get(key, ""))
                for key in ("session", "harness", "parent", "relation", "cwd")
            ),
            _who(row.get("reported_by")),
            _text(row["started"]),
        )
    console.print(table)


def _doctor(result: dict[str, Any]) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("check", "status", "detail", "fix"):
        table.add_column(column, overflow="fold")
    for check in result.get("checks", []):
        status = str(check.get("status", ""))
        table.add_row(
            _text(check.get("id", "")),
            Text(status, style=_STATUS_STYLE.get(status, "")),
            _text(check.get("message", "")),
            _text(check.get("fix", "")) if status != "ok" else Text(),
        )
    console.print(table)


def render(verb: Verb, result: dict[str, Any]) -> None:
    if verb.name == "memory.search":
        if result.get("fallback"):
            console.print(Text(f"mode {result['mode']} ({result['fallback']})", style="yellow"))
        _hits(result["results"], search=True)
        return
    if verb.name == "memory.list":
        _hits(result["memories"], search=False)
    elif verb.name in ("session.list", "session.chain"):
        _sessions(result.get("sessions") or result.get("chain") or [])
        if result.get("truncated"):
            console.print("[yellow]older sessions are not shown[/]")
    elif verb.name == "doctor":
        _doctor(result)
        return
    elif verb.name == "memory.get":
        heading = Text.assemble(
            (str(result["id"]), "bold"),
            " ",
            _text(result.get("title", "")),
            "  (",
            _text(result["space"]),
            ", ",
            _text(result["kind"]),
            ")",
        )
        console.print(heading)
        console.print(
            Text.assemble(
                f"revision {result['revision']} by ",
                _who(result.get("updated_by")),
                ", created by ",
                _who(result.get("author")),
                f" at {result['created']}",
            )
        )
        if result.get("deleted"):
            console.print(Text(f"deleted at {result['deleted']}", style="red"))
        for key in ("tags", "session"):
            if result.get(key):
                console.print(Text.assemble(f"{key}: ", _value(result[key])), highlight=False)
        console.print(_text(result["content"]), highlight=False)
        return
    elif verb.name == "skill":
        # As generated, line for line: ``venom-mem skill > SKILL.md`` is a manual install.
        console.print(_text(result.get("content", "")), highlight=False, soft_wrap=True)
        return
    elif verb.name == "memory.context":
        # As it is (it ends with a newline): a SessionStart hook prints it into the session.
        console.print(_text(result.get("text", "")), highlight=False, soft_wrap=True, end="")
        return
    else:
        for key, value in result.items():
            console.print(Text.assemble((key, "bold"), ": ", _value(value)), highlight=False)
        return
    if result.get("next"):
        console.print(Text(f"more: --after {result['next']}"))
