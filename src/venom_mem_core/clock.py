"""Clocks: the system's, and a settable one for tests and fixtures."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta

import attrs

__all__ = ["FixedClock", "SystemClock", "format_ts", "parse_ts"]


def format_ts(moment: datetime) -> str:
    """RFC 3339 UTC with milliseconds: ``2026-11-09T10:00:00.000Z``."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def _as_written(text: str) -> bool:
    """Whether ``text`` has the shape :func:`format_ts` writes, ASCII digits and all."""
    digits = text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    return (
        len(text) == 24
        and text.isascii()
        and text[4] + text[7] + text[10] + text[13] + text[16] + text[19] + text[23] == "--T::.Z"
        and (digits + text[20:23]).isdigit()
    )


def parse_ts(text: str) -> datetime:
    """The moment ``text`` names, read as ``strptime`` reads its format (a
    ``ValueError`` when it names none). What :func:`format_ts` writes is read by
    ``fromisoformat``, to the same moment: ``strptime`` loads ``_strptime`` and its locale's
    tables on first use, and a daemon's start reads its clock (the tombstone sweep)."""
    if _as_written(text):
        with contextlib.suppress(ValueError):  # a field out of range: strptime says so
            return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


class SystemClock:
    def now(self) -> str:
        return format_ts(datetime.now(UTC))


@attrs.define
class FixedClock:
    """A clock that moves only when told to; each reading may advance it by ``step``."""

    current: datetime = attrs.field(factory=lambda: datetime(2026, 11, 9, 10, 0, tzinfo=UTC))
    step: timedelta = timedelta(0)

    def now(self) -> str:
        value = format_ts(self.current)
        self.current += self.step
        return value

    def advance(self, delta: timedelta) -> None:
        self.current += delta
