"""Writes per day by principal, as a small stacked bar chart drawn by the server in SVG.

Counted from memory records, since that is what verbs can show: each memory's creation by its
author, and its latest change (revision above 1) by its ``updated_by``. The template draws the
bars from :class:`Chart`; every label goes through Jinja's escaping like any other text.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["Bar", "Chart", "Series", "count_writes", "writes_chart"]

PALETTE = ("#3b6ea5", "#d9822b", "#3f9e57", "#b8453b", "#7c5aa6", "#8a6d3b", "#c060a1", "#5f6b7a")
WIDTH, HEIGHT, MARGIN = 640, 180, 28


@attrs.frozen
class Series:
    who: str
    color: str
    total: int


@attrs.frozen
class Bar:
    x: float
    y: float
    width: float
    height: float
    color: str
    title: str


@attrs.frozen
class Chart:
    days: tuple[str, ...]
    series: tuple[Series, ...]
    bars: tuple[Bar, ...]
    labels: tuple[tuple[float, str], ...]  # (x, day) under every few bars
    peak: int
    width: int = WIDTH
    height: int = HEIGHT
    baseline: int = HEIGHT - MARGIN


def _who(provenance: Any) -> str:
    if not isinstance(provenance, Mapping):
        return "?"
    return str(provenance.get("label") or provenance.get("principal") or "?")


def count_writes(memories: Iterable[Mapping[str, Any]]) -> Counter[tuple[str, str]]:
    """``(day, who)`` -> writes, from memory.list hits."""
    counts: Counter[tuple[str, str]] = Counter()
    for memory in memories:
        created, updated = str(memory.get("created", "")), str(memory.get("updated", ""))
        if created:
            counts[created[:10], _who(memory.get("author"))] += 1
        if int(memory.get("revision", 1)) > 1 and updated:
            counts[updated[:10], _who(memory.get("updated_by"))] += 1
    return counts


def writes_chart(counts: Counter[tuple[str, str]], today: dt.date, days: int = 14) -> Chart:
    span = tuple((today - dt.timedelta(days=days - 1 - i)).isoformat() for i in range(days))
    totals: Counter[str] = Counter()
    for (day, who), n in counts.items():
        if day in span:
            totals[who] += n
    whos = [who for who, _ in totals.most_common()]
    colors = {who: PALETTE[i % len(PALETTE)] for i, who in enumerate(whos)}
    per_day = {day: sum(counts.get((day, w), 0) for w in whos) for day in span}
    peak = max(per_day.values(), default=0)
    plot = HEIGHT - 2 * MARGIN
    step = (WIDTH - 2 * MARGIN) / days
    bars: list[Bar] = []
    for i, day in enumerate(span):
        y = float(HEIGHT - MARGIN)
        for who in whos:
            n = counts.get((day, who), 0)
            if not n or not peak:
                continue
            h = plot * n / peak
            y -= h
            x = MARGIN + i * step + step * 0.15
            bars.append(Bar(x, y, step * 0.7, h, colors[who], f"{day}: {n} by {who}"))
    labels = tuple(
        (MARGIN + i * step + step / 2, day[5:]) for i, day in enumerate(span) if i % 2 == 0
    )
    return Chart(
        days=span,
        series=tuple(Series(w, colors[w], totals[w]) for w in whos),
        bars=tuple(bars),
        labels=labels,
        peak=peak,
    )
