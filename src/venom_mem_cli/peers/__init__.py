"""Readers of the peer tools' stores (docs/adr/0040): each turns what the tool wrote into the
memory lines of the venom export format, with an ``origin``, so one import path checks and
writes them all. A reader raises ``invalid_params.import_line`` or ``.import_format`` naming
the line (or row, or note) it could not read; it writes nothing."""

from __future__ import annotations

from .lines import Entry, Reader

__all__ = ["DEFAULT_SPACES", "READERS", "Entry", "Reader", "reader"]

DEFAULT_SPACES = {
    "server-memory": "imported/server-memory",
    "basic-memory": "imported/basic-memory",
    "mcp-memory-service": "imported/mcp-memory-service",
}


def reader(format_name: str) -> Reader:
    if format_name == "server-memory":
        from .server_memory import read
    elif format_name == "basic-memory":
        from .basic_memory import read
    else:
        from .mcp_memory_service import read
    return read


READERS = tuple(DEFAULT_SPACES)
