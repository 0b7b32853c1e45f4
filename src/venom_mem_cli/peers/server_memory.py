"""The MCP reference memory server's ``memory.jsonl``: one entity or relation a line.

An entity ``{"type":"entity","name","entityType","observations":[...]}`` becomes one memory
per observation (its text the content, the entity's name the title, its type a tag, kind
fact); an entity without observations one memory saying what it is. A relation
``{"type":"relation","from","to","relationType"}`` becomes a memory ``from relationType to``
tagged ``relation``. The file holds no author and no time, so origin is the format and where
in the graph it was (docs/adr/0040)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .lines import Entry, bad, memory_line, tag

__all__ = ["read"]

FORMAT = "server-memory"


def read(path: str) -> Iterator[Entry]:
    try:
        source = open(path, "rb")  # noqa: SIM115  # closed below, read line by line
    except OSError as error:
        raise bad(path, 0, f": {error.strerror}", code="file") from None
    count = 0
    with source:
        for number, raw in enumerate(source, start=1):
            if not raw.strip():
                continue
            where = f"line {number}"
            record = _record(raw, where, number)
            for line in _memories(record, where, number, count):
                count += 1
                yield where, number, line


def _record(raw: bytes, where: str, number: int) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise bad(where, number, f"is not JSON ({error})") from None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind not in ("entity", "relation"):
        code = "import_format" if number == 1 else "import_line"
        raise bad(where, number, "is not a server-memory entity or relation", code=code)
    fields = ("name", "entityType") if kind == "entity" else ("from", "to", "relationType")
    for key in fields:
        if not isinstance(value.get(key), str) or not value[key]:
            raise bad(where, number, f"has no {key}")
    if kind == "entity":
        observations = value.get("observations", [])
        if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
            raise bad(where, number, "has observations that are not strings")
    record: dict[str, Any] = value
    return record


def _memories(
    record: dict[str, Any], where: str, number: int, count: int
) -> Iterator[dict[str, Any]]:
    if record["type"] == "relation":
        text = f"{record['from']} {record['relationType']} {record['to']}"
        origin = {"format": FORMAT, "id": f"relation {text}"}
        yield memory_line(count + 1, text, origin=origin, title_text=record["from"], kind="fact",
                          tags=["relation", tag(record["relationType"])])  # fmt: skip
        return
    name, kind = record["name"], record["entityType"]
    observations = [o for o in record.get("observations", []) if o.strip()]
    if not observations:
        observations = [f"{name} ({kind})"]
    for index, text in enumerate(observations):
        origin = {"format": FORMAT, "id": f"entity {name} observation {index + 1}"}
        yield memory_line(count + index + 1, text, origin=origin, title_text=name, kind="fact",
                          tags=[tag(kind)])  # fmt: skip
