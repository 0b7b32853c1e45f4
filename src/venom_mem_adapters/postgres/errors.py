"""The one place psycopg exceptions become :class:`VenomError` codes.

As for SQLite (``sqlite/errors.py``): a unique violation on ``memories_live_content`` is
``conflict.memory_duplicate`` and on ``clients`` ``conflict.client_exists`` (the use cases
check first; these are the backstop); a lock that could not be had (a deadlock PostgreSQL
broke, a lock or statement timeout, a serialization failure) is ``unavailable.store_busy``;
a server that cannot be reached or fails is ``failed.store``; the store's own mistakes (bad
SQL, bad data for a column) are ``failed.internal``. Messages name the database by its
public URL (url.py), never with credentials.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import errors as pg

from venom_mem_core.errors import VenomError

__all__ = ["to_venom_error", "translated"]

_BUSY = (
    pg.DeadlockDetected,
    pg.SerializationFailure,
    pg.LockNotAvailable,
    pg.QueryCanceled,
)
_INTERNAL = (psycopg.ProgrammingError, psycopg.DataError, psycopg.InterfaceError)


def _detail(exc: psycopg.Error) -> str:
    primary = exc.diag.message_primary if exc.diag else None
    if primary:
        return primary
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def to_venom_error(exc: psycopg.Error, where: str) -> VenomError:
    detail = _detail(exc)
    data = {"path": where}
    if isinstance(exc, pg.UniqueViolation):
        constraint = exc.diag.constraint_name or ""
        if constraint == "memories_live_content":
            return VenomError.duplicate_memory()
        if constraint.startswith("clients_"):
            return VenomError("conflict.client_exists", "a client with this name already exists")
    if isinstance(exc, psycopg.IntegrityError):
        return VenomError("failed.internal", f"constraint failed in {where}: {detail}", data)
    if isinstance(exc, _BUSY):
        return VenomError(
            "unavailable.store_busy",
            f"the store {where} is busy (another daemon holds a lock): {detail}",
            data,
        )
    if isinstance(exc, _INTERNAL):
        return VenomError("failed.internal", f"store driver misuse on {where}: {detail}", data)
    return VenomError("failed.store", f"store {where}: {detail}", data)


@contextmanager
def translated(where: str) -> Iterator[None]:
    """Run a block, turning any psycopg error into the matching VenomError (chained)."""
    try:
        yield
    except psycopg.Error as exc:
        raise to_venom_error(exc, where) from exc
