"""Every SQLite connection the store makes is opened and configured here, and only here.

RFC-0020 section 6 fixes the settings: journal_mode = WAL, synchronous = FULL (an ok means
the memory survives power loss), foreign_keys = ON (purges cascade), secure_delete = ON
(purged text does not linger in free pages) and busy_timeout = 5000. Read-only connections
open with SQLITE_OPEN_READONLY, so a read can never write, whatever SQL it runs.

The PyPI apsw wheel does not compile out extension loading (and ships loadable extensions of
its own), so each connection turns it off three ways: ``enable_load_extension(False)`` (the
SQL function and the C API), ``SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION = 0`` (the C API), and a
``load_extension`` SQL function of our own that shadows the built-in one and always fails.
``SQLITE_DBCONFIG_DEFENSIVE`` also stops SQL from corrupting the file through
``writable_schema`` or writes to FTS5 shadow tables. See docs/adr/0002.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import quote

import apsw

from venom_mem_core.errors import VenomError

from .errors import translated
from .paths import sidecar_paths

__all__ = ["CONNECTION_PRAGMAS", "open_connection", "open_inspection", "transaction"]

CONNECTION_PRAGMAS: tuple[tuple[str, str], ...] = (
    ("synchronous", "FULL"),
    ("foreign_keys", "ON"),
    ("secure_delete", "ON"),
    ("busy_timeout", "5000"),
)

# NOFOLLOW: the database path itself may not be a symlink. EXRESCODE: extended result codes
# reach apsw's exceptions, so errors.py can tell constraint kinds apart.
_COMMON_FLAGS = apsw.SQLITE_OPEN_NOFOLLOW | apsw.SQLITE_OPEN_EXRESCODE


def _refuse_load_extension(*_args: apsw.SQLiteValue) -> apsw.SQLiteValue:
    raise apsw.ExtensionLoadingError("load_extension is disabled in venom-mem (RFC-0020 T9)")


def _lock_down(connection: apsw.Connection) -> None:
    """Make loading code through this connection impossible from SQL or the C API."""
    connection.enable_load_extension(False)
    connection.config(apsw.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0)
    connection.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    # A function the application registers wins over the built-in of the same name and arity.
    for arity in (1, 2):
        connection.create_scalar_function("load_extension", _refuse_load_extension, arity)


def _configure(
    connection: apsw.Connection, path: Path, *, readonly: bool, exclusive: bool = False
) -> None:
    _lock_down(connection)
    if exclusive:
        # Before the first access: SQLite then keeps the WAL index in this process's memory
        # and never needs the -shm file (which a full disk may have no room for).
        connection.pragma("locking_mode", "exclusive")
    if not readonly:
        mode = connection.pragma("journal_mode", "wal")
        if mode != "wal":
            raise VenomError(
                "failed.store",
                f"{path}: cannot switch the store to WAL (journal_mode is {mode})",
                {"path": str(path)},
            )
    for name, value in CONNECTION_PRAGMAS:
        connection.pragma(name, value)


def open_connection(
    path: str | os.PathLike[str],
    *,
    readonly: bool,
    vfs: str | None = None,
    exclusive: bool = False,
) -> apsw.Connection:
    """Open the store database with the settings every connection must have.

    The file must exist (the store creates it 0600 first, so SQLite never creates it with
    its own default mode). A writer also switches the database to WAL. ``vfs`` names a
    registered SQLite VFS (tests run the real store on a fault-injecting shim); ``None`` is
    the default one. ``exclusive`` opens in ``locking_mode = EXCLUSIVE``, which needs no
    ``-shm`` file but keeps every other connection out (the store's full-disk fallback).
    """
    path = Path(path)
    flags = _COMMON_FLAGS | (apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE)
    with translated(str(path)):
        connection = apsw.Connection(str(path), flags=flags, vfs=vfs)
        try:
            _configure(connection, path, readonly=readonly, exclusive=exclusive)
        except BaseException:
            connection.close()
            raise
    return connection


def open_inspection(path: str | os.PathLike[str], *, vfs: str | None = None) -> apsw.Connection:
    """A read-only look at a database that creates and changes no file at all.

    A plain read-only connection to a WAL database creates ``-wal`` and ``-shm`` beside it,
    which would touch a database we may be about to refuse. With no ``-wal`` file there is
    nothing outside the main file, so ``immutable=1`` (no locks, no shared memory) reads it
    exactly. With a ``-wal`` left by a crash, committed pages may be in it, so we read it
    through an ordinary read-only connection, which uses the files that are already there.
    """
    path = Path(path).absolute()
    wal, _ = sidecar_paths(path)
    flags = _COMMON_FLAGS | apsw.SQLITE_OPEN_READONLY
    name = str(path)
    if not os.path.lexists(wal):
        name = f"file:{quote(name)}?immutable=1"
        flags |= apsw.SQLITE_OPEN_URI
    with translated(str(path)):
        connection = apsw.Connection(name, flags=flags, vfs=vfs)
        try:
            _lock_down(connection)
        except BaseException:
            connection.close()
            raise
    return connection


@contextmanager
def transaction(connection: apsw.Connection, path: str, *, immediate: bool) -> Iterator[None]:
    """``BEGIN [IMMEDIATE]`` ... ``COMMIT``, or ``ROLLBACK`` when the block raises.

    Written out rather than ``with connection:``: under contention apsw's context manager
    kept failing with SQLITE_BUSY for the whole busy_timeout even after the other writer had
    committed, where the same ``BEGIN IMMEDIATE`` through ``execute`` got the lock at once
    (docs/adr/0002). A failed COMMIT also rolls back, so the connection is never left inside
    a transaction.
    """
    with translated(path):
        connection.execute("BEGIN IMMEDIATE" if immediate else "BEGIN").fetchall()
    try:
        yield
        with translated(path):
            connection.execute("COMMIT").fetchall()
    except BaseException:
        if connection.in_transaction:
            with suppress(apsw.Error):  # the original error is the one worth reporting
                connection.execute("ROLLBACK").fetchall()
        raise
