"""The one place apsw exceptions become :class:`VenomError` codes.

RFC-0020 section 8: an external writer shows up as SQLITE_BUSY after busy_timeout and is
``unavailable.store_busy``; corruption, I/O and a full disk are ``failed.store``. The store's
own mistakes (bad SQL, misuse of the driver) are ``failed.internal``. A unique violation on
``memories_live_content`` is ``conflict.memory_duplicate`` and on ``clients.name``
``conflict.client_exists``: the use cases check first, these are the backstop when they did
not. Every message names the database path, since a person reading it has to find the file.

A full disk is ``failed.store`` too, with ``data.reason = "disk_full"`` and a fix that says to
free space: SQLITE_FULL (a write the kernel refused with ENOSPC, so nothing half-written was
acknowledged), and SQLITE_IOERR_SHMSIZE when the disk has no room left for the ``-shm``
file. The daemon retries those by itself (docs/adr/0013); every other I/O error is final.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager

import apsw

from venom_mem_core.errors import VenomError

from ..sql import translating

__all__ = ["DISK_FULL", "is_disk_full", "to_venom_error", "translated"]

DISK_FULL = "disk_full"

# The column lists SQLite names in "UNIQUE constraint failed: ..." for our unique indexes.
_DUPLICATE_MEMORY = "memories.space, memories.content_sha256"
_DUPLICATE_CLIENT = "clients.name"

_BUSY = (apsw.BusyError, apsw.LockedError)
# Errors that mean the store's code, not the file, is wrong.
_INTERNAL = (
    apsw.MisuseError,
    apsw.RangeError,
    apsw.MismatchError,
    apsw.BindingsError,
    apsw.ThreadingViolationError,
    apsw.ConnectionClosedError,
    apsw.CursorClosedError,
    apsw.ExecutionCompleteError,
    apsw.IncompleteExecutionError,
    apsw.InvalidContextError,
    apsw.InternalError,
    apsw.ExtensionLoadingError,
)


def to_venom_error(exc: apsw.Error, path: str) -> VenomError:
    """The VenomError a caller should see for ``exc`` raised on the database at ``path``."""
    detail = str(exc)
    data = {"path": path}
    if isinstance(exc, _BUSY):
        return VenomError(
            "unavailable.store_busy",
            f"the store {path} is busy (another writer holds it): {detail}",
            data,
        )
    if isinstance(exc, apsw.ConstraintError):
        if _DUPLICATE_MEMORY in detail:
            return VenomError.duplicate_memory()
        if _DUPLICATE_CLIENT in detail:
            return VenomError("conflict.client_exists", "a client with this name already exists")
        return VenomError("failed.internal", f"constraint failed in {path}: {detail}", data)
    if isinstance(exc, _INTERNAL):
        return VenomError("failed.internal", f"store driver misuse on {path}: {detail}", data)
    if _out_of_space(exc, path):
        directory = os.path.dirname(path) or "."
        return VenomError(
            "failed.store",
            f"store {path}: the disk is full ({detail}); writes resume once there is room",
            {
                "path": path,
                "reason": DISK_FULL,
                "fix": f"free space on the disk that holds {directory} (df -h '{directory}')",
            },
        )
    # Corrupt, NotADB, IOError, CantOpen, ReadOnly, Permissions, NoMem, SQLError, ...
    return VenomError("failed.store", f"store {path}: {detail}", data)


def _out_of_space(exc: apsw.Error, path: str) -> bool:
    if isinstance(exc, apsw.FullError):
        return True
    if getattr(exc, "extendedresult", None) != apsw.SQLITE_IOERR_SHMSIZE:
        return False
    try:  # the -shm couldn't grow: only a disk with no room left makes that a full disk
        facts = os.statvfs(os.path.dirname(path) or ".")
    except OSError:
        return False
    return facts.f_bavail * facts.f_frsize < 64 * 1024


def is_disk_full(error: VenomError) -> bool:
    return error.code == "failed.store" and error.data.get("reason") == DISK_FULL


def translated(path: str) -> AbstractContextManager[None]:
    """Run a block, turning any apsw error into the matching VenomError (chained)."""
    return translating(apsw.Error, to_venom_error, path)
