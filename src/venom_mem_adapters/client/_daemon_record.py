"""``<store path>.daemon``: where the daemon that holds a store's lock listens.

Harnesses filter the environment of what they launch, so two processes of one user can
resolve different runtime directories for one store (CONTRACT section 1). The store decides:
the daemon holding the store lock writes this record (0600 JSON ``socket``, ``pid``,
``source``) while it holds that lock, and removes it at a clean stop. A client that finds no
daemon at its own socket reads it and connects there, after the usual trust checks: the
record says where to look, never whom to trust.

Standard library only: the CLI's client reads it.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat

__all__ = ["read_record", "record_path", "remove_record", "write_record"]

_MAX_BYTES = 4096


def record_path(store_path: str) -> str:
    return f"{store_path}.daemon"


def write_record(store_path: str, *, socket: str, pid: int, source: str) -> None:
    """Replace the record atomically, 0600 (private_files.py); raises OSError."""
    from pathlib import Path  # the daemon writes it; the client only reads, without pathlib

    from ..private_files import write_private_file

    text = json.dumps({"socket": socket, "pid": pid, "source": source}) + "\n"
    write_private_file(Path(record_path(store_path)), text)


def read_record(store_path: str) -> dict[str, object] | None:
    """The record, or ``None`` when there is none or it isn't a private file of ours with a
    socket path in it (a record another user could have written is no record)."""
    path = record_path(store_path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        raw = os.read(fd, _MAX_BYTES)
    finally:
        os.close(fd)
    try:
        record = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("socket"), str):
        return None
    if not os.path.isabs(record["socket"]):
        return None
    return record


def remove_record(store_path: str, pid: int) -> None:
    """Remove the record if it is still this daemon's."""
    record = read_record(store_path)
    if record is not None and record.get("pid") == pid:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(record_path(store_path))
