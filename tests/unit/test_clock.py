"""parse_ts reads what format_ts writes without ``strptime`` (whose first use loads
``_strptime`` at a daemon's start), and reads everything as ``strptime`` does."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from venom_mem_core.clock import format_ts, parse_ts

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def _strptime(text: str) -> datetime | str:
    try:
        return datetime.strptime(text, FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return "ValueError"


def _parsed(text: str) -> datetime | str:
    try:
        return parse_ts(text)
    except ValueError:
        return "ValueError"


def test_what_format_ts_writes_reads_back() -> None:
    moment = datetime(2026, 11, 9, 10, 0, 0, 123_000, tzinfo=UTC)
    assert parse_ts(format_ts(moment)) == moment
    assert parse_ts("2026-11-09T10:00:00.000Z").tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-09T10:00:00.000Z",
        "0001-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
        "2024-02-29T12:30:45.5Z",
        "2026-1-9T1:2:3.4Z",
        "2026-11-09t10:00:00.000z",
        "2026-11-09T10:00:00.123456Z",
        "2026-11-09T10:00:00,000Z",
        "2026-11-09 10:00:00.000Z",
        "2026-11-09T10:00:00.000",
        "2026-11-09T10:00:00.000+00:00",
        "2026-11-09T24:00:00.000Z",
        "2026-11-09T10:60:00.000Z",
        "2026-11-09T10:00:60.000Z",
        "2026-11-09T10:00:61.000Z",
        "2025-02-29T10:00:00.000Z",
        "2026-13-09T10:00:00.000Z",
        "2026-00-09T10:00:00.000Z",
        "0000-11-09T10:00:00.000Z",
        "2026-11-00T10:00:00.000Z",
        "２０２６-11-09T10:00:00.000Z",
        "2026-11-09T10:00:00.00１Z",
        "",
        "2026-11-09T10:00:00.000ZZ",
    ],
)
def test_it_reads_each_text_as_strptime_does(text: str) -> None:
    assert _parsed(text) == _strptime(text)


def test_it_reads_random_moments_and_near_misses_as_strptime_does() -> None:
    rng = random.Random(7)
    start = datetime(1900, 1, 1, tzinfo=UTC)
    for _ in range(2000):
        text = format_ts(start + timedelta(seconds=rng.uniform(0, 200 * 365 * 86400)))
        assert _parsed(text) == _strptime(text)
        at = rng.randrange(len(text))
        changed = text[:at] + rng.choice("0123456789-T:.Z ") + text[at + 1 :]
        assert _parsed(changed) == _strptime(changed), changed
