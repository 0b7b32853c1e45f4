"""Clocks: the system's, and a settable one for tests and fixtures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs

__all__ = ["FixedClock", "SystemClock", "format_ts", "parse_ts"]


def format_ts(moment: datetime) -> str:
    """RFC 3339 UTC with milliseconds: ``2026-11-09T10:00:00.000Z``."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


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
