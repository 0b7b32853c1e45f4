"""mcp-memory-service's SQLite database (its sqlite-vec backend): table ``memories`` with
``content_hash``, ``content``, ``tags`` (comma-separated), ``memory_type``, ``metadata``
(JSON), ``created_at_iso`` and ``deleted_at`` (a tombstone).

Each live row becomes one memory: its content, its tags and memory_type as tags, kind
``decision`` for memory_type decision and ``note`` otherwise (the service's types are not
ours); origin holds the content hash and created_at_iso. A tombstoned row is left out. The
database is opened read-only and immutable, so reading it changes nothing (docs/adr/0040)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from .lines import Entry, bad, memory_line, tag

__all__ = ["read"]

FORMAT = "mcp-memory-service"
_COLUMNS = ("id", "content_hash", "content", "tags", "memory_type", "created_at_iso", "deleted_at")


def read(path: str) -> Iterator[Entry]:
    if not Path(path).is_file():
        raise bad(path, 0, "is not a file", code="file")
    uri = f"{Path(path).resolve().as_uri()}?mode=ro&immutable=1"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as error:
        raise bad(path, 0, f"can't be opened ({error})", code="import_format") from None
    try:
        try:
            rows = connection.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM memories ORDER BY id"
            ).fetchall()
        except sqlite3.Error as error:
            raise bad(
                path, 0, f"is not an mcp-memory-service database ({error})", code="import_format"
            ) from None
    finally:
        connection.close()
    for row_id, content_hash, content, tags, memory_type, created, deleted_at in rows:
        where = f"row {row_id}"
        if deleted_at is not None:
            continue
        if not isinstance(content, str) or not content.strip():
            raise bad(where, row_id, "has no content")
        names = [t.strip() for t in (tags or "").split(",") if t.strip() and t != "untagged"]
        origin = {"format": FORMAT, "id": str(content_hash), "created": created or ""}
        kind = "decision" if memory_type == "decision" else "note"
        labels = [*map(tag, names), tag(memory_type or "")]
        yield where, row_id, memory_line(row_id, content, origin=origin, kind=kind, tags=labels)
