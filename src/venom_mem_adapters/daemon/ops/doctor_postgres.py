"""``doctor`` on a PostgreSQL store (docs/adr/0028): the checks of RFC-0020 section 11 that
mean something for a server's database, and one more that says what a purge cannot promise.

The store is the daemon's own (doctor reads it through one read transaction); its name is
the public URL, so no credential appears. ``store.purge`` is always a warning on this store:
a purge deletes the rows, but their text stays in dead tuples until VACUUM reuses the space
(and VACUUM does not zero it), in WAL segments until they are recycled, and in any base
backup, WAL archive, replica or pg_dump for as long as those are kept. SQLite's
secure_delete and WAL checkpoint erase it from the store's files; a client of a server can't.
"""

from __future__ import annotations

from typing import Any

from venom_mem_core.errors import VenomError

from ...postgres import DEFAULT_MIGRATIONS
from .doctor import (
    _RANK,
    FIX_STATUS,
    Inputs,
    Status,
    _audit_check,
    _check,
    _embedding_checks,
    _lifetime_check,
    _permissions_check,
    _schema_check,
    _unopened,
)

__all__ = ["PURGE_FIX", "run_postgres_checks"]

MIN_SERVER = 13  # identity columns, hashtextextended and the SQL this store runs
PURGE_FIX = (
    "VACUUM FULL memories, memory_versions, memory_fts_terms  # as the database owner; then"
    " let WAL recycle and expire backups and archives holding the purged text"
)


REACH_FIX = (
    "check that the server runs and this machine reaches it (pg_isready, the server's log);"
    " the daemon reconnects by itself once it answers, no restart needed"
)


def _reachable_check(store: Any) -> dict[str, str]:
    """store.reachable: whether the server answers now, and if not, since when and why
    (the store notes an outage at its first unavailable.store: postgres/store.py)."""
    outage = getattr(store, "outage", None)
    if outage is None:
        return _check("store.reachable", "ok", f"The server of {store.url} answers", FIX_STATUS)
    return _check(
        "store.reachable",
        "fail",
        f"The server of {store.url} has not answered since {outage.since}"
        f" ({outage.reason}): {outage.detail}",
        REACH_FIX,
    )


def _store_checks(inputs: Inputs, store: Any) -> list[dict[str, str]]:
    try:
        facts = store.describe()
    except Exception as exc:  # a VenomError from the store, already free of credentials
        message = getattr(exc, "message", str(exc))
        return [*_unopened(f"Can't reach the store: {message}"), _reachable_check(store)]
    where, version, server = facts["path"], facts["schema_version"], facts["postgres_version"]
    checks = []
    if inputs.write_failure is not None:
        checks.append(
            _check(
                "store.open",
                "fail",
                f"The store at {where} stopped taking writes: {inputs.write_failure}",
                "check the server, then restart the daemon: venom-mem serve",
            )
        )
    else:
        checks.append(_check("store.open", "ok", f"Store open at {where}", FIX_STATUS))
    checks.append(_reachable_check(store))
    fix = "pg_dump the database, then: venom-mem serve  # a restart migrates it"
    checks.append(_schema_check(version, len(DEFAULT_MIGRATIONS), fix))
    major = int(server.split(".")[0]) if server.split(".")[0].isdigit() else 0
    status: Status = "ok" if major >= MIN_SERVER else "fail"
    checks.append(
        _check(
            "store.postgres",
            status,
            f"PostgreSQL {server}" + ("" if status == "ok" else f", older than {MIN_SERVER}"),
            FIX_STATUS,
        )
    )
    checks.append(
        _check(
            "store.purge",
            "warn",
            "On PostgreSQL a purge deletes the rows, but their text stays in dead tuples until"
            " VACUUM reuses the space, in WAL segments until they are recycled, and in backups,"
            " WAL archives and replicas for as long as they are kept",
            PURGE_FIX,
        )
    )
    return checks


def run_postgres_checks(inputs: Inputs, store: Any) -> dict[str, Any]:
    """Every check for a PostgreSQL store, in section 11's order. Blocking."""
    checks = _store_checks(inputs, store)
    checks.append(_permissions_check(inputs.store))  # this machine's anchor: lock, audit log
    checks.append(_audit_check(inputs.store))
    checks.append(_lifetime_check(inputs))
    embedding_checks = None
    if inputs.config.embeddings.provider != "off":
        try:
            with store.vector_rows().read() as table:
                embedding_checks = _embedding_checks(inputs, table)
        except VenomError:  # the database is away: store.open has said so
            embedding_checks = None
    checks.extend(embedding_checks or _embedding_checks(inputs, None))
    status = max(_RANK[c["status"]] for c in checks)
    return {"status": status, "checks": checks}
