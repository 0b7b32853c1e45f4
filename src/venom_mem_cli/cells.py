"""One value of a result as the text a person reads: stored text made safe to print, times
relative and local, provenance as its label, grants as ``read:*``.

Everything shown comes from other agents (RFC-0020 T1), so it is printed as text: never
parsed as rich markup, with control characters (terminal escapes) removed, and without the
bidirectional formatting characters that could make text read other than it is stored.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.text import Text

__all__ = [
    "Clock",
    "clean",
    "compact_json",
    "event_line",
    "is_grant",
    "is_provenance",
    "is_time",
    "one_line",
    "origin_text",
    "plain",
    "scalar",
    "when",
    "who",
]

_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # bidi marks, embeddings, isolates
)
_SPACES = re.compile(r"\s+")
TIME_KEYS = frozenset(
    {"created", "updated", "started", "ended", "ts", "deleted", "expires", "unlinked"}
)
_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def clean(value: object) -> str:
    """Stored text as plain text: no escapes, newlines and tabs kept."""
    return _CONTROLS.sub("", str(value))


def plain(value: object, style: str = "") -> Text:
    return Text(clean(value), style=style)


def one_line(value: object) -> str:
    """Text for a table cell: newlines and runs of blanks as one space."""
    return _SPACES.sub(" ", clean(value)).strip()


def is_time(key: str, value: object) -> bool:
    return key in TIME_KEYS and isinstance(value, str) and bool(_TS.match(value))


class Clock:
    """Now, and the local zone times are shown in; tests fix both."""

    def __init__(self, now: datetime | None = None, tz: Any = None) -> None:
        self.now = now or datetime.now(UTC)
        self.tz = tz  # None: the machine's local zone

    def local(self, value: datetime) -> datetime:
        return value.astimezone(self.tz)


def _parse(value: str) -> datetime:
    return datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def _span(delta: timedelta) -> str:
    seconds = int(abs(delta.total_seconds()))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def when(value: str, clock: Clock, *, full: bool, long: bool = False) -> str:
    """``5 min ago`` (``long``: with the local date and time); ``full``: as stored."""
    if full:
        return value
    moment = _parse(value)
    delta = clock.now - moment
    local = clock.local(moment)
    if abs(delta) < timedelta(seconds=45):
        relative = "just now"
    elif abs(delta) < timedelta(days=7):
        relative = f"{_span(delta)} ago" if delta > timedelta(0) else f"in {_span(delta)}"
    else:
        relative = local.strftime("%Y-%m-%d")
    if long:
        return f"{relative} ({local.strftime('%Y-%m-%d %H:%M:%S %Z').rstrip()})"
    return relative


def who(value: dict[str, Any], *, long: bool = False) -> str:
    """Provenance as a person reads it: the label, with the principal in a block."""
    label = value.get("label")
    principal = value.get("principal", "")
    if label and long:
        return f"{one_line(label)} ({one_line(principal)})"
    return one_line(label or principal)


def is_provenance(value: object) -> bool:
    return isinstance(value, dict) and "principal" in value and set(value) <= {"principal", "label"}


def origin_text(value: dict[str, Any]) -> str:
    """An imported memory's origin as one line: ``server-memory Zig pin, by Ada, 2025-01-02``
    (what the source said, as it said it: its time is not this store's)."""
    text = one_line(value.get("format", ""))
    if value.get("id"):
        text += f" {one_line(value['id'])}"
    if value.get("author"):
        text += f", by {one_line(value['author'])}"
    if value.get("created"):
        text += f", {one_line(value['created'])}"
    return text


def is_grant(value: object) -> bool:
    return isinstance(value, dict) and set(value) == {"right", "scope"}


def scalar(key: str, value: object, clock: Clock, *, full: bool, long: bool = False) -> str:
    """Any value that isn't a list of objects, as one line of text."""
    if value is None:
        return "-" if key != "expires" else "never"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if is_time(key, value):
        return when(str(value), clock, full=full, long=long)
    if is_provenance(value):
        return who(value, long=long)  # type: ignore[arg-type]
    if is_grant(value):
        return f"{one_line(value['right'])}:{one_line(value['scope'])}"  # type: ignore[index]
    if key == "origin" and isinstance(value, dict):
        return origin_text(value)
    if isinstance(value, list):
        return ", ".join(scalar(key, item, clock, full=full) for item in value) or (
            "none" if long else ""
        )
    if isinstance(value, dict):
        return " ".join(
            f"{one_line(k)}={scalar(str(k), v, clock, full=full)}" for k, v in value.items()
        )
    if isinstance(value, float):
        return f"{value:.4g}"
    return one_line(value)


def compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def event_line(obj: dict[str, Any], clock: Clock, *, full: bool) -> str:
    """One line per event for ``events --follow``: local time, type, resource, data; a
    snapshot entity as ``snapshot <entity> <resource> <data>``."""
    data = scalar("data", obj.get("data") or {}, clock, full=full)
    if "type" in obj:
        ts = obj.get("ts")
        at = (
            ts
            if full or not isinstance(ts, str) or not _TS.match(ts)
            else clock.local(_parse(ts)).strftime("%H:%M:%S")
        )
        words = [str(at), one_line(obj["type"]), one_line(obj.get("resource", "")), data]
    else:
        words = [
            "snapshot",
            one_line(obj.get("entity", "")),
            one_line(obj.get("resource", "")),
            data,
        ]
    return "  ".join(word for word in words if word)
