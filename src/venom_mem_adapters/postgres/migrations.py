"""The schema ladder on PostgreSQL: ``meta.schema_version`` is the version, rung N takes N
to N + 1, each rung one transaction that also writes the new version (RFC-0020 section 6).

The same shape as the SQLite ladder (``sqlite/migrations.py``): rung 0 creates schema 1 in an
empty database and rung 1 takes it to schema 2; a database newer than the ladder is
``unsupported.store_schema`` and is left alone; a failed rung rolls back and is
``failed.store_migration`` with the old version kept. Two differences:

* Several daemons may start on one new database at once, so each rung first takes a
  transaction advisory lock and reads the version again under it: one daemon migrates, the
  others find the work done.
* A daemon can't copy a server's database, so the ``VACUUM INTO`` backup before a rung is the
  human's ``pg_dump`` (docs/team-store.md); the daemon logs that it is about to migrate.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import attrs
import psycopg

from venom_mem_core.errors import VenomError

from .errors import translated
from .schema import APPLICATION_ID, SCHEMA_V1, SCHEMA_V2, SCHEMA_V3

__all__ = ["DEFAULT_MIGRATIONS", "Migration", "migrate", "schema_version"]

log = logging.getLogger("venom_mem.store")

Connection = psycopg.Connection[tuple[object, ...]]
_MIGRATION_LOCK = 0x564D454D  # "VMEM": one advisory lock number for the ladder


@attrs.frozen(kw_only=True)
class Migration:
    """One rung of the ladder: ``apply`` runs inside the step's transaction."""

    name: str
    apply: Callable[[Connection], None]


def _statements(statements: Sequence[str]) -> Callable[[Connection], None]:
    def apply(connection: Connection) -> None:
        for statement in statements:
            connection.execute(statement.encode("utf-8"))

    return apply


DEFAULT_MIGRATIONS: tuple[Migration, ...] = (
    Migration(name="create schema 1", apply=_statements(SCHEMA_V1)),
    Migration(name="importance, branches and space descriptions", apply=_statements(SCHEMA_V2)),
    Migration(
        name="links, inactive spaces and an imported memory's origin",
        apply=_statements(SCHEMA_V3),
    ),
)


def _not_a_store(where: str, reason: str) -> VenomError:
    return VenomError(
        "failed.store", f"{where} is not a venom-mem store: {reason}", {"path": where}
    )


def schema_version(connection: Connection, where: str) -> int:
    """The database's schema version, 0 for an empty one; ``failed.store`` for a database
    that holds other tables, or a meta table that is not ours."""
    with translated(where):
        has_meta = connection.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()
        if has_meta is None or not has_meta[0]:
            tables = connection.execute(
                "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
            ).fetchone()
            if tables is not None and int(str(tables[0])) > 0:
                raise _not_a_store(where, "it has tables but no venom-mem meta table")
            return 0
        found = connection.execute(
            "SELECT key, value FROM meta WHERE key IN ('application_id', 'schema_version')"
        ).fetchall()
        rows = {str(key): str(value) for key, value in found}
    if rows.get("application_id") != APPLICATION_ID:
        raise _not_a_store(where, f"its meta.application_id is {rows.get('application_id')}")
    return int(str(rows.get("schema_version", "0")))


def migrate(connection: Connection, where: str, ladder: Sequence[Migration]) -> int:
    """Run every rung from the database's version to the top, on an autocommit connection.
    Returns the final schema version."""
    supported = len(ladder)
    existed = schema_version(connection, where) > 0
    while True:
        version = schema_version(connection, where)
        if version > supported:
            raise VenomError(
                "unsupported.store_schema",
                f"{where} has schema version {version}, newer than this venom-mem supports"
                f" ({supported}); it was left untouched",
                {"path": where, "found": version, "supported": supported},
            )
        if version == supported:
            return supported
        rung = ladder[version]
        if existed:
            log.warning(
                "%s: migrating schema %d -> %d; pg_dump keeps the copy (docs/team-store.md)",
                where,
                version,
                version + 1,
            )
        try:
            with translated(where), connection.transaction():
                connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                if schema_version(connection, where) != version:
                    continue  # another daemon took this rung meanwhile: look again
                rung.apply(connection)
                connection.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(version + 1),),
                )
        except Exception as exc:
            detail = exc.message if isinstance(exc, VenomError) else str(exc)
            raise VenomError(
                "failed.store_migration",
                f"{where}: migration {version} -> {version + 1} ({rung.name}) failed:"
                f" {detail}; the store keeps schema version {version}",
                {"path": where, "from": version, "to": version + 1},
            ) from exc
