"""doctor's checks of a SQLite store (RFC-0020 section 11): ``store.open`` (the file opens,
passes ``quick_check`` and still takes writes), ``store.schema`` and ``store.sqlite`` (a
SQLite new enough for FTS5 secure-delete, built with FTS5).

Doctor is read-only: it opens its own read-only connection to the file, never the daemon's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import attrs

from venom_mem_core.errors import VenomError

from ..health import FIX_STATUS, Check, Inputs, VectorCounts, check, schema_check, unopened
from .connection import open_connection
from .migrations import DEFAULT_MIGRATIONS
from .paths import sidecar_paths
from .schema import APPLICATION_ID

__all__ = ["MIN_SQLITE", "SqliteExam", "examine", "store_files"]

MIN_SQLITE = (3, 42, 0)


@attrs.frozen(kw_only=True)
class SqliteExam:
    checks: list[Check]
    vectors: VectorCounts | None
    files: tuple[Path, ...]


@contextmanager
def examine(inputs: Inputs, *, vectors: bool) -> Iterator[SqliteExam]:
    """The store checks on a read-only connection of doctor's own, kept open for the
    vector counts (``vectors``: embeddings are on) until the caller is done."""
    connection: apsw.Connection | None = None
    error = ""
    try:
        connection = open_connection(inputs.store, readonly=True)
    except VenomError as err:
        error = err.message
    try:
        checks = _store_checks(inputs, connection, error)
        checks.append(_sqlite_check(connection))
        table = None
        if connection is not None and vectors:
            from .vectors import SqliteVectors  # numpy: only when embeddings are on

            table = SqliteVectors(connection)
        yield SqliteExam(checks=checks, vectors=table, files=tuple(store_files(inputs.store)))
    finally:
        if connection is not None:
            connection.close()


def store_files(path: Path) -> Iterator[Path]:
    """The store's own files, for store.permissions: the file, its sidecars, its backups."""
    yield path
    yield from sidecar_paths(path)
    yield from sorted(path.parent.glob(f"{path.name}.bak-*"))


def _store_checks(inputs: Inputs, connection: apsw.Connection | None, error: str) -> list[Check]:
    path = inputs.store
    if connection is None:
        return unopened(f"Can't open the store at {path}: {error}")
    checks = [_open_check(inputs, connection)]
    supported = len(DEFAULT_MIGRATIONS)
    version = int(connection.pragma("user_version"))
    application_id = int(connection.pragma("application_id"))
    if application_id != APPLICATION_ID:
        checks.append(
            check(
                "store.schema",
                "fail",
                f"Schema version {version}, but the file is not a venom-mem store "
                f"(application_id {application_id})",
                FIX_STATUS,
            )
        )
    else:
        fix = "venom-mem serve  # a restart migrates an older store"
        checks.append(schema_check(version, supported, fix))
    return checks


def _open_check(inputs: Inputs, connection: apsw.Connection) -> Check:
    """Open, readable page by page (quick_check), and still taking writes."""
    path = inputs.store
    recover = (
        f"stop the daemon, keep a copy of {path}, then: sqlite3 '{path}' .recover"
        f" | sqlite3 '{path}.recovered'  # venom-mem never repairs a store itself"
    )
    try:
        problems = [str(row[0]) for row in connection.execute("PRAGMA quick_check")]
    except apsw.Error as exc:
        problems = [str(exc)]
    if problems != ["ok"]:
        return check(
            "store.open", "fail", f"The store at {path} is corrupt: {problems[0]}", recover
        )
    if inputs.write_failure is not None:
        return check(
            "store.open",
            "fail",
            f"The store at {path} stopped taking writes: {inputs.write_failure}",
            "check the disk (space, I/O errors), then restart the daemon: venom-mem serve",
        )
    if inputs.disk_full is not None:
        return check(
            "store.open",
            "warn",
            f"The disk under {path} is full: writes are refused until there is room, then"
            f" resume by themselves ({inputs.disk_full})",
            f"df -h '{path.parent}'  # free space there",
        )
    return check("store.open", "ok", f"Store open at {path}", FIX_STATUS)


def _sqlite_check(connection: apsw.Connection | None) -> Check:
    if connection is None:
        version, options = apsw.sqlite_lib_version(), set(apsw.compile_options)
    else:
        version = str(next(connection.execute("SELECT sqlite_version()"))[0])
        options = {str(row[0]) for row in connection.execute("PRAGMA compile_options")}
    numbers = tuple(int(part) for part in version.split(".")[:3] if part.isdigit())
    fts5 = "ENABLE_FTS5" in options
    fix = "pip install --upgrade venom-mem  # it ships its own SQLite"
    if numbers < MIN_SQLITE:
        return check(
            "store.sqlite",
            "fail",
            f"SQLite {version} is older than 3.42, which FTS5 secure-delete needs",
            fix,
        )
    if not fts5:
        return check("store.sqlite", "fail", f"SQLite {version} was built without FTS5", fix)
    return check("store.sqlite", "ok", f"SQLite {version} with FTS5", FIX_STATUS)
