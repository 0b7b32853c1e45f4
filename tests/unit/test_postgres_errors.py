"""postgres/errors.py: what the server and libpq raise, classified once (docs/adr/0030).

Transient failures are ``unavailable.*`` with a reason and a fix and never latch; only the
server's own word that its data is corrupt latches the daemon's writes. The SQLite store
keeps RFC-0020's rule (every ``failed.store`` but a full disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("psycopg")

import psycopg
from psycopg import errors as pg

from venom_mem_adapters.postgres.backend import PostgresBackend
from venom_mem_adapters.postgres.connection import NoAnswer
from venom_mem_adapters.postgres.errors import (
    is_lost_connection,
    latches,
    to_venom_error,
)
from venom_mem_adapters.sqlite.backend import SqliteBackend
from venom_mem_core.errors import VenomError

WHERE = "postgresql://db.example/venom_mem"


@pytest.mark.parametrize(
    ("exc", "code", "reason"),
    [
        (pg.AdminShutdown("terminating connection due to administrator command"),
         "unavailable.store", "server_shutdown"),
        (pg.CrashShutdown("terminating connection because of crash"),
         "unavailable.store", "server_shutdown"),
        (pg.CannotConnectNow("the database system is starting up"),
         "unavailable.store", "server_starting"),
        (pg.ConnectionFailure("connection failure"), "unavailable.store", "connection_lost"),
        (psycopg.OperationalError("server closed the connection unexpectedly"),
         "unavailable.store", "connection_lost"),
        (NoAnswer("the server did not answer within 8 s"), "unavailable.store", "no_answer"),
        (pg.QueryCanceled("canceling statement due to statement timeout"),
         "unavailable.store", "statement_timeout"),
        (pg.TooManyConnections("sorry, too many clients already"),
         "unavailable.store", "too_many_connections"),
        (pg.DiskFull("could not extend file"), "unavailable.store", "server_resources"),
        (pg.SerializationFailure("could not serialize access"),
         "unavailable.store_busy", "serialization_failure"),
        (pg.DeadlockDetected("deadlock detected"), "unavailable.store_busy", "deadlock"),
        (pg.LockNotAvailable("canceling statement due to lock timeout"),
         "unavailable.store_busy", "lock_timeout"),
        (pg.DataCorrupted("invalid page in block 0"), "failed.store", "data_corrupted"),
        (pg.IndexCorrupted("index contains unexpected zero page"),
         "failed.store", "index_corrupted"),
    ],
)  # fmt: skip
def test_each_failure_gets_its_code_and_reason(exc: psycopg.Error, code: str, reason: str) -> None:
    error = to_venom_error(exc, WHERE)
    assert (error.code, error.data["reason"]) == (code, reason)
    assert error.data["path"] == WHERE
    assert error.data["fix"]
    assert latches(error) == (code == "failed.store"), error


def test_other_server_errors_are_failed_store_without_a_latch() -> None:
    error = to_venom_error(pg.InternalError_("unexpected"), WHERE)
    assert error.code == "failed.store"
    assert not latches(error)


def test_an_aborted_pipeline_is_not_a_lost_connection() -> None:
    """PipelineAborted has no SQLSTATE, like a lost connection, but the connection is fine:
    an earlier statement failed, and that error is the one reported."""
    assert not is_lost_connection(pg.PipelineAborted("pipeline aborted"))
    assert is_lost_connection(psycopg.OperationalError("consuming input failed"))
    assert not is_lost_connection(pg.UniqueViolation("duplicate key"))


def test_sqlite_keeps_rfc_0020s_rule(tmp_path: Path) -> None:
    latch = SqliteBackend(tmp_path / "store.db").latches
    assert latch(VenomError("failed.store", "disk I/O error"))
    assert not latch(VenomError("failed.store", "full", {"reason": "disk_full"}))
    assert not latch(VenomError("unavailable.store", "away"))


def test_the_postgres_backend_latches_only_on_corruption(tmp_path: Path) -> None:
    latch = PostgresBackend("postgresql:///x", tmp_path / "anchor").latches
    assert not latch(VenomError("failed.store", "unexpected"))
    assert not latch(VenomError("unavailable.store", "away", {"reason": "connection_lost"}))
    corrupt = to_venom_error(pg.DataCorrupted("invalid page in block 7"), WHERE)
    assert latch(corrupt)
