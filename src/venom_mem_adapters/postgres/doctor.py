"""doctor on a PostgreSQL store (docs/adr/0028): the checks of RFC-0020 section 11 that
mean something for a server's database, and one more that says what a purge cannot promise.

The store is the daemon's own (doctor reads it through one read transaction); its name is
the public URL, so no credential appears. ``store.purge`` is always a warning on this store:
a purge deletes the rows, but their text stays in dead tuples until VACUUM reuses the space
(and VACUUM does not zero it), in WAL segments until they are recycled, and in any base
backup, WAL archive, replica or pg_dump for as long as those are kept. SQLite's
secure_delete and WAL checkpoint erase it from the store's files; a client of a server can't.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import attrs

from venom_mem_core.errors import VenomError

from ..health import FIX_STATUS, Check, Inputs, Status, VectorCounts, check, schema_check, unopened
from .migrations import DEFAULT_MIGRATIONS

__all__ = ["MIN_SERVER", "PURGE_FIX", "PostgresExam", "examine"]

MIN_SERVER = 13  # identity columns, hashtextextended and the SQL this store runs
PURGE_FIX = (
    "VACUUM FULL memories, memory_versions, memory_fts_terms  # as the database owner; then"
    " let WAL recycle and expire backups and archives holding the purged text"
)


@attrs.frozen(kw_only=True)
class PostgresExam:
    checks: list[Check]
    vectors: VectorCounts | None
    files: tuple[Path, ...] = ()  # none on this machine: the anchor's lock and log are doctor's


@contextmanager
def examine(inputs: Inputs, store: Any, *, vectors: bool) -> Iterator[PostgresExam]:
    """The store checks through the daemon's own store; with ``vectors``, one read
    transaction for the vector counts, held until the caller is done."""
    checks = _store_checks(inputs, store)
    stack = ExitStack()
    table = None
    if vectors and store is not None:
        try:
            table = stack.enter_context(store.vector_rows().read())
        except VenomError:  # the database is away: store.open has said so
            table = None
    try:
        yield PostgresExam(checks=checks, vectors=table)
    finally:
        with suppress(VenomError):  # ending a read on a database that went away
            stack.close()


def _store_checks(inputs: Inputs, store: Any) -> list[Check]:
    try:
        if store is None:
            raise VenomError("failed.store", "the daemon has no open store")
        facts = store.describe()
    except Exception as exc:  # a VenomError from the store, already free of credentials
        message = getattr(exc, "message", str(exc))
        return unopened(f"Can't reach the store: {message}")
    where, version, server = facts["path"], facts["schema_version"], facts["postgres_version"]
    checks = []
    if inputs.write_failure is not None:
        checks.append(
            check(
                "store.open",
                "fail",
                f"The store at {where} stopped taking writes: {inputs.write_failure}",
                "check the server, then restart the daemon: venom-mem serve",
            )
        )
    else:
        checks.append(check("store.open", "ok", f"Store open at {where}", FIX_STATUS))
    fix = "pg_dump the database, then: venom-mem serve  # a restart migrates it"
    checks.append(schema_check(version, len(DEFAULT_MIGRATIONS), fix))
    major = int(server.split(".")[0]) if server.split(".")[0].isdigit() else 0
    status: Status = "ok" if major >= MIN_SERVER else "fail"
    checks.append(
        check(
            "store.postgres",
            status,
            f"PostgreSQL {server}" + ("" if status == "ok" else f", older than {MIN_SERVER}"),
            FIX_STATUS,
        )
    )
    checks.append(
        check(
            "store.purge",
            "warn",
            "On PostgreSQL a purge deletes the rows, but their text stays in dead tuples until"
            " VACUUM reuses the space, in WAL segments until they are recycled, and in backups,"
            " WAL archives and replicas for as long as they are kept",
            PURGE_FIX,
        )
    )
    return checks
