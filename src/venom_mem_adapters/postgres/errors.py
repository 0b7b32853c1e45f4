"""The one place psycopg exceptions become :class:`VenomError` codes (docs/adr/0030).

As for SQLite (``sqlite/errors.py``): a unique violation on ``memories_live_content`` is
``conflict.memory_duplicate`` and on ``clients`` ``conflict.client_exists`` (the use cases
check first; these are the backstop); the store's own mistakes (bad SQL, bad data for a
column) are ``failed.internal``. Messages name the database by its public URL (url.py), never
with credentials.

What SQLite's rule can't say: the server owns durability, so a lost connection is not a disk
that may have lied. Every failure that passes once the server or the link is back is
*transient*, an ``unavailable.*`` with ``data.reason`` and ``data.fix``, and never stops the
daemon's writes:

* a lock not had (``55P03``), a deadlock PostgreSQL broke (``40P01``) or a serialization
  failure (``40001``): ``unavailable.store_busy``, the code RFC-0020 gives a locked store;
* a lost or refused connection (``08*``, or an ``OperationalError`` with no SQLSTATE, which is
  how libpq reports a socket that closed), a server shutting down (``57P01`` admin_shutdown,
  ``57P02`` crash_shutdown), one starting up (``57P03`` cannot_connect_now), too many
  connections or no resources (``53*``), our own ``statement_timeout`` (``57014``):
  ``unavailable.store``.

Only what says the stored data itself is unsafe latches (:func:`latches`): ``XX001``
data_corrupted and ``XX002`` index_corrupted, ``failed.store`` with that reason. Any other
server error is ``failed.store`` without a latch: the next write may well succeed, and
nothing it could acknowledge is less durable for it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg import errors as pg

from venom_mem_core.errors import VenomError

from ..sql import translating
from .connection import NoAnswer

__all__ = [
    "LOST",
    "UNSAFE",
    "is_lost_connection",
    "latches",
    "to_venom_error",
    "translated",
    "unreachable",
]

# data.reason of the failures that mean the stored data is unsafe: only these latch.
UNSAFE = {"XX001": "data_corrupted", "XX002": "index_corrupted"}
# data.reason of a connection that is gone, whatever the server meant to say.
LOST = "connection_lost"

_BUSY = {"55P03": "lock_timeout", "40P01": "deadlock", "40001": "serialization_failure"}
_TRANSIENT = {
    "57P01": "server_shutdown",  # admin_shutdown: pg_ctl stop, a failover
    "57P02": "server_shutdown",  # crash_shutdown: another backend crashed
    "57P03": "server_starting",  # cannot_connect_now: recovery, or still starting
    "57014": "statement_timeout",  # query_canceled: our statement_timeout (store.py)
    "53300": "too_many_connections",
}
_INTERNAL = (psycopg.ProgrammingError, psycopg.DataError, psycopg.InterfaceError)

BUSY_FIX = "retry: another daemon held the rows this write needs"
WAIT_FIX = (
    "retry in a few seconds: the daemon reconnects by itself once the server answers"
    " (venom-mem doctor shows store.reachable)"
)


def _detail(exc: psycopg.Error) -> str:
    primary = exc.diag.message_primary if exc.diag else None
    if primary:
        return primary
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def is_lost_connection(exc: BaseException) -> bool:
    """True when ``exc`` means the connection is gone or the server is going, so what was
    sent may or may not have run (a COMMIT's outcome is then in doubt: store.py)."""
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, pg.PipelineAborted):
        return False  # PipelineAborted: an earlier statement failed, the connection is fine
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in ("57P01", "57P02", "57P03")


def unreachable(where: str, reason: str, detail: str, **more: Any) -> VenomError:
    """The transient error of a server that can't be reached now."""
    return VenomError(
        "unavailable.store",
        f"the store {where} is unreachable ({reason}): {detail}",
        {"path": where, "reason": reason, "fix": WAIT_FIX, **more},
    )


def to_venom_error(exc: psycopg.Error, where: str) -> VenomError:
    detail = _detail(exc)
    data = {"path": where}
    state = exc.sqlstate or ""
    if isinstance(exc, pg.UniqueViolation):
        constraint = exc.diag.constraint_name or ""
        if constraint == "memories_live_content":
            return VenomError.duplicate_memory()
        if constraint.startswith("clients_"):
            return VenomError("conflict.client_exists", "a client with this name already exists")
    if isinstance(exc, psycopg.IntegrityError):
        return VenomError("failed.internal", f"constraint failed in {where}: {detail}", data)
    if state in _BUSY:
        return VenomError(
            "unavailable.store_busy",
            f"the store {where} is busy (another daemon holds a lock): {detail}",
            {**data, "reason": _BUSY[state], "fix": BUSY_FIX},
        )
    if state in UNSAFE:
        return VenomError(
            "failed.store",
            f"store {where}: the server reports its data is corrupt ({state}"
            f" {UNSAFE[state]}): {detail}",
            {
                **data,
                "reason": UNSAFE[state],
                "fix": "have the database's administrator check and repair it"
                " (the server log names the relation), then restart: venom-mem serve",
            },
        )
    if state in _TRANSIENT:
        return unreachable(where, _TRANSIENT[state], detail)
    if state.startswith("53"):
        return unreachable(where, "server_resources", detail)
    if isinstance(exc, NoAnswer):
        return unreachable(where, "no_answer", detail)
    if is_lost_connection(exc):
        return unreachable(where, LOST, detail)
    if isinstance(exc, _INTERNAL):
        return VenomError("failed.internal", f"store driver misuse on {where}: {detail}", data)
    return VenomError("failed.store", f"store {where}: {detail}", data)


def latches(error: VenomError) -> bool:
    """Whether the daemon must stop taking writes after ``error`` (until a restart): only
    when the server says the stored data itself is corrupt."""
    return error.code == "failed.store" and error.data.get("reason") in UNSAFE.values()


def translated(where: str) -> AbstractContextManager[None]:
    """Run a block, turning any psycopg error into the matching VenomError (chained)."""
    return translating(psycopg.Error, to_venom_error, where)
