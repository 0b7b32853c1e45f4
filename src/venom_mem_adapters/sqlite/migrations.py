"""The schema ladder: ``user_version`` is the schema version, and rung N takes N to N + 1.

RFC-0020 section 6: before each step on an existing database the file is copied with
``VACUUM INTO '<path>.bak-<old version>'``; each step runs in one transaction with the new
``user_version``, so a failure leaves the old schema (``failed.store_migration``). A database
newer than the ladder is ``unsupported.store_schema`` and is left byte-for-byte alone, which is
why :func:`inspect_store` looks at it through a connection that cannot create or change a file,
before anything opens it for writing (switching to WAL alone would rewrite its header).

Rung 0 creates schema 1 in an empty database, rung 1 takes it to schema 2 and rung 2 to
schema 3 (links, inactive spaces; docs/adr/0042), so a new store
and an upgraded one are built by the same code. A new database is not backed up: there is
nothing in it to lose. The ladder is a plain sequence so tests can append synthetic rungs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import apsw
import attrs

from venom_mem_core.errors import VenomError

from .connection import open_inspection, transaction
from .errors import translated
from .paths import backup_path, create_private_file
from .schema import APPLICATION_ID, SCHEMA_V1, SCHEMA_V2, SCHEMA_V3

__all__ = [
    "DEFAULT_MIGRATIONS",
    "Migration",
    "inspect_store",
    "migrate",
]


@attrs.frozen(kw_only=True)
class Migration:
    """One rung of the ladder: ``apply`` runs inside the step's transaction."""

    name: str
    apply: Callable[[apsw.Connection], None]


def _statements(statements: Sequence[str]) -> Callable[[apsw.Connection], None]:
    def apply(connection: apsw.Connection) -> None:
        for statement in statements:
            connection.execute(statement).fetchall()

    return apply


DEFAULT_MIGRATIONS: tuple[Migration, ...] = (
    Migration(name="create schema 1", apply=_statements(SCHEMA_V1)),
    Migration(name="importance, branches and space descriptions", apply=_statements(SCHEMA_V2)),
    Migration(
        name="links, inactive spaces and an imported memory's origin",
        apply=_statements(SCHEMA_V3),
    ),
)


def _unsupported(path: Path, found: int, supported: int) -> VenomError:
    return VenomError(
        "unsupported.store_schema",
        f"{path} has schema version {found}, newer than this venom-mem supports ({supported});"
        " it was left untouched",
        {"path": str(path), "found": found, "supported": supported},
    )


def _not_a_store(path: Path, reason: str) -> VenomError:
    return VenomError(
        "failed.store", f"{path} is not a venom-mem store: {reason}", {"path": str(path)}
    )


_HEADER = b"SQLite format 3\x00"


def _refuse_by_header(path: Path, supported: int) -> None:
    """Refuse another application's database or a newer store from the file header alone.

    Opening a database that has a ``-wal`` beside it creates its ``-shm``, even read-only;
    the header (user_version at byte 60, application_id at 68) answers without SQLite, so a
    database this binary must not use is left exactly as it was (RFC-0020 section 6).
    """
    with path.open("rb") as handle:
        header = handle.read(100)
    if len(header) < 100 or not header.startswith(_HEADER):
        return  # not SQLite, or too short: the inspection below says what it is
    version = int.from_bytes(header[60:64], "big", signed=True)
    application_id = int.from_bytes(header[68:72], "big", signed=True)
    if application_id not in (0, APPLICATION_ID):
        raise _not_a_store(path, f"its application_id is {application_id}, not {APPLICATION_ID}")
    if application_id == APPLICATION_ID and version > supported:
        raise _unsupported(path, version, supported)


def inspect_store(path: Path, *, supported: int, vfs: str | None = None) -> int:
    """The schema version of the database at ``path``, 0 for a new one, without touching it.

    Raises ``failed.store`` for a file that is not SQLite or belongs to another application,
    and ``unsupported.store_schema`` for a version above ``supported``.
    """
    if not path.exists() or path.stat().st_size == 0:
        return 0
    _refuse_by_header(path, supported)
    try:
        connection = open_inspection(path, vfs=vfs)
        try:
            with translated(str(path)):
                application_id: int = connection.pragma("application_id")
                version: int = connection.pragma("user_version")
                objects = connection.execute("SELECT count(*) FROM sqlite_schema").fetchall()[0][0]
        finally:
            connection.close()
    except VenomError as error:
        if error.code == "failed.store":
            raise _not_a_store(path, error.message) from error
        raise
    if application_id == 0 and version == 0 and objects == 0:
        return 0  # an empty SQLite database: the same as a new file
    if application_id != APPLICATION_ID:
        raise _not_a_store(path, f"its application_id is {application_id}, not {APPLICATION_ID}")
    if version > supported:
        raise _unsupported(path, version, supported)
    if version < 1:
        raise _not_a_store(path, f"its schema version is {version}")
    return int(version)


def _backup(connection: apsw.Connection, path: Path, version: int) -> None:
    """Copy the database to ``<path>.bak-<version>``, 0600, replacing an older copy only
    once the new one is complete and on disk."""
    target = backup_path(path, version)
    partial = Path(f"{target}.partial")
    partial.unlink(missing_ok=True)
    create_private_file(partial)  # VACUUM INTO accepts an empty file and keeps its mode
    try:
        connection.execute("VACUUM INTO ?", (str(partial),)).fetchall()
        fd = os.open(partial, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def migrate(connection: apsw.Connection, path: Path, ladder: Sequence[Migration]) -> int:
    """Run every rung from the database's version to the top, on its read-write connection.

    Returns the final schema version.
    """
    supported = len(ladder)
    with translated(str(path)):
        version: int = connection.pragma("user_version")
    if version > supported:
        raise _unsupported(path, version, supported)
    for current in range(version, supported):
        rung = ladder[current]
        try:
            if version > 0:  # an existing store: keep a copy of each version it leaves
                _backup(connection, path, current)
            with transaction(connection, str(path), immediate=True):
                rung.apply(connection)
                connection.pragma("user_version", current + 1)
        except Exception as exc:
            raise VenomError(
                "failed.store_migration",
                f"{path}: migration {current} -> {current + 1} ({rung.name}) failed: {exc};"
                f" the store keeps schema version {current}",
                {"path": str(path), "from": current, "to": current + 1},
            ) from exc
    return supported
