"""The one place apsw exceptions become :class:`VenomError` codes.

RFC-0020 section 8: an external writer shows up as SQLITE_BUSY after busy_timeout and is
``unavailable.store_busy``; corruption, I/O and a full disk are ``failed.store``. The store's
own mistakes (bad SQL, misuse of the driver) are ``failed.internal``. A unique violation on
``memories_live_content`` is ``conflict.memory_duplicate`` and on ``clients.name``
``conflict.client_exists``: the use cases check first, these are the backstop when they did
not. Every message names the database path, since a person reading it has to find the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import apsw

from venom_mem_core.errors import VenomError

__all__ = ["to_venom_error", "translated"]

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
            return VenomError(
                "conflict.memory_duplicate",
                "a live memory with the same content already exists in this space",
            )
        if _DUPLICATE_CLIENT in detail:
            return VenomError("conflict.client_exists", "a client with this name already exists")
        return VenomError("failed.internal", f"constraint failed in {path}: {detail}", data)
    if isinstance(exc, _INTERNAL):
        return VenomError("failed.internal", f"store driver misuse on {path}: {detail}", data)
    # Corrupt, NotADB, IOError, Full, CantOpen, ReadOnly, Permissions, NoMem, SQLError, ...
    return VenomError("failed.store", f"store {path}: {detail}", data)


@contextmanager
def translated(path: str) -> Iterator[None]:
    """Run a block, turning any apsw error into the matching VenomError (chained)."""
    try:
        yield
    except apsw.Error as exc:
        raise to_venom_error(exc, path) from exc
