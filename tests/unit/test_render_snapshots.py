"""The human output of every verb at 80 and 120 columns, against committed snapshots in
tests/snapshots/render/ (reviewed by eye when they change: run with UPDATE_SNAPSHOTS=1 and
read the diff). Plus the rules every table keeps, checked on every case: no line wider than
the terminal, no ID, space or time split across lines, no raw score."""

from __future__ import annotations

import io
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tests.unit.render_cases import CASES
from venom_mem_cli.cells import Clock
from venom_mem_cli.render import render
from venom_mem_core.manifest_types import Verb

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots" / "render"
NOW = Clock(datetime(2026, 11, 9, 12, 0, tzinfo=UTC), UTC)
WIDTHS = (80, 120)
# Words that must never be cut: memory and session IDs and spaces (principals show as their
# labels, times as relative words, which the snapshots pin).
ATOMS = re.compile(r"[ms]\d+|project/[\w./-]+")


def shown(verb: Verb, result: dict[str, Any], params: dict[str, Any], width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, highlight=False)
    render(verb, result, params=params, console=console, clock=NOW)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("name", "verb", "result", "params"), CASES, ids=[c[0] for c in CASES])
def test_snapshot(
    name: str, verb: Verb, result: dict[str, Any], params: dict[str, Any], width: int
) -> None:
    text = shown(verb, result, params, width)
    path = SNAPSHOTS / f"{name}.{width}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: run with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("name", "verb", "result", "params"), CASES, ids=[c[0] for c in CASES])
def test_tables_fit_and_never_split_a_word_that_must_stay_whole(
    name: str, verb: Verb, result: dict[str, Any], params: dict[str, Any], width: int
) -> None:
    text = shown(verb, result, params, width)
    if verb.name in ("skill", "memory.context"):
        return  # printed as generated, line for line (a hook pipes the context into a session)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), name
    words = set(re.findall(r"[\w./-]+", text))
    for value in _atoms(result):
        assert value in words, (name, value)
    assert "0.0164" not in text
    assert "0.0328" not in text


def _atoms(value: object) -> list[str]:
    if isinstance(value, dict):
        return [a for v in value.values() for a in _atoms(v)]
    if isinstance(value, list):
        return [a for v in value for a in _atoms(v)]
    if isinstance(value, str) and ATOMS.fullmatch(value):
        return [value]
    return []


def test_search_shows_rank_and_a_no_match_line() -> None:
    by_name = {c[0]: c for c in CASES}
    _, verb, result, params = by_name["search-long"]
    text = shown(verb, result, params, 80)
    rows = [line for line in text.splitlines() if re.match(r"^\d+ +m\d+", line)]
    assert [row.split()[:2] for row in rows] == [["1", "m12"], ["2", "m7"], ["3", "m123"]]
    assert all(row.endswith("…") for row in rows[:2])  # snippets cut to the row
    _, verb, result, params = by_name["search-empty"]
    assert shown(verb, result, params, 80).strip() == (
        "mode  fts\nno memories match 'nothing like it'"
    )


def test_times_are_relative_unless_asked_in_full() -> None:
    _, verb, result, params = next(c for c in CASES if c[0] == "example-space.list")
    assert "1 h ago" in shown(verb, result, params, 80)
    console = Console(width=80, file=io.StringIO(), color_system=None)
    render(verb, result, params=params, console=console, clock=NOW, full_times=True)
    assert "2026-11-09T10:05:00.000Z" in console.file.getvalue()  # type: ignore[attr-defined]


def test_stored_text_is_never_markup_nor_escapes() -> None:
    _, verb, result, params = next(c for c in CASES if c[0] == "example-memory.get")
    evil = {**result, "title": "[bold red]x[/] \x1b[31mred\u202e", "content": "[link]\x1b]8;;x\x07"}
    text = shown(verb, evil, params, 80)
    assert "[bold red]x[/]" in text
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "\x07" not in text
