"""Human output: tables for hits, memories and sessions; key-value lines for the rest."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from venom_mem_core.manifest_types import Verb

__all__ = ["render"]

console = Console()


def _who(p: dict[str, Any] | None) -> str:
    if not p:
        return ""
    return str(p.get("label") or p.get("principal", ""))


def _hits(rows: list[dict[str, Any]], *, search: bool) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("id", "space", "kind", "title", "author", "rev", "snippet"):
        table.add_column(column, overflow="fold")
    if search:
        table.add_column("score", justify="right")
    for row in rows:
        cells = [
            row["id"],
            row["space"],
            row["kind"],
            row.get("title", ""),
            _who(row.get("author")),
            str(row["revision"]),
            row.get("snippet", ""),
        ]
        if search:
            cells.append(f"{row.get('score', 0):.4f}")
        table.add_row(*cells)
    console.print(table)


def _sessions(rows: list[dict[str, Any]]) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("session", "harness", "parent", "relation", "cwd", "reported by", "started"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["session"],
            row["harness"],
            row.get("parent", ""),
            row.get("relation", ""),
            row.get("cwd", ""),
            _who(row.get("reported_by")),
            row["started"],
        )
    console.print(table)


def render(verb: Verb, result: dict[str, Any]) -> None:
    if verb.name == "memory.search":
        if result.get("fallback"):
            console.print(f"[yellow]mode {result['mode']} ({result['fallback']})[/]")
        _hits(result["results"], search=True)
        return
    if verb.name == "memory.list":
        _hits(result["memories"], search=False)
    elif verb.name in ("session.list", "session.chain"):
        _sessions(result.get("sessions") or result.get("chain") or [])
        if result.get("truncated"):
            console.print("[yellow]older sessions are not shown[/]")
    elif verb.name == "memory.get":
        title = result.get("title", "")
        console.print(f"[bold]{result['id']}[/] {title}  ({result['space']}, {result['kind']})")
        console.print(
            f"revision {result['revision']} by {_who(result.get('updated_by'))}, "
            f"created by {_who(result.get('author'))} at {result['created']}"
        )
        console.print(result["content"], markup=False, highlight=False)
        return
    elif verb.name == "skill":
        console.print(result.get("content", ""), markup=False, highlight=False)
        return
    else:
        for key, value in result.items():
            console.print(f"[bold]{key}[/]: {value}", highlight=False)
        return
    if result.get("next"):
        console.print(f"more: --after {result['next']}")
