"""PostgreSQL's ladder from version 2 to 3 (docs/adr/0042), on the throwaway server: a store
written at schema 2 through the use cases upgrades keeping every row, and a failure halfway
through the rung leaves version 2 whole."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.postgres_server import PostgresServer, postgres_server
from venom_mem_core import App, LocalClient
from venom_mem_core.clock import FixedClock
from venom_mem_core.errors import VenomError
from venom_mem_core.usecases.principals import OWNER

__all__ = ["postgres_server"]  # the fixture, imported for pytest

# Every table of a version-2 store, and the columns that order its rows.
TABLES = {
    "meta": "key",
    "sessions": "id",
    "memories": "id",
    "memory_versions": "memory, revision",
    "memory_vectors": "memory",
    "clients": "name",
    "memory_fts": "memory",
    "memory_fts_terms": "term, memory",
    "spaces": "space",
}


@pytest.fixture
def v2_url(postgres_server: PostgresServer) -> str:
    """A database at schema 2 with memories, versions, postings, a session, clients and a
    description. Today's use cases read version 3's tables, so the rows are written at 3 and
    then what rung 2 -> 3 adds is dropped: rung 3 only adds, so that is version 2 exactly."""
    import psycopg

    from venom_mem_adapters.postgres import PostgresStore

    url = postgres_server.url(postgres_server.create_database())
    with PostgresStore.open(url) as store:
        owner = LocalClient(App(store=store, clock=FixedClock()), OWNER)
        grants = [{"right": "read", "scope": "*"}, {"right": "write", "scope": "*"}]
        owner.call("client.add", {"name": "codex", "grants": grants})
        session = owner.call("session.start", {"harness": "codex"})["session"]
        pin = owner.call(
            "memory.add",
            {"space": "project/x", "content": "Zig 0.16.", "tags": ["zig"], "session": session},
        )["id"]
        owner.call("memory.update", {"id": pin, "revision": 1, "importance": "critical"})
        gone = owner.call("memory.add", {"space": "user", "content": "Deleted."})["id"]
        owner.call("memory.delete", {"id": gone, "revision": 1})
        owner.call("memory.add", {"space": "user", "content": "On a branch.", "branches": ["b"]})
        owner.call("space.describe", {"space": "project/x", "description": "X's facts."})
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("DROP TABLE links, inactive_spaces")
        connection.execute("ALTER TABLE memories DROP COLUMN origin")
        connection.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    return url


def _rows(url: str) -> dict[str, list[tuple[object, ...]]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        out = {}
        for table, key in TABLES.items():
            # Version 2's columns: rung 3 adds memories.origin, NULL on every row it kept.
            columns = connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
                " AND table_schema = current_schema() AND column_name <> 'origin'"
                " ORDER BY ordinal_position",
                (table,),
            ).fetchall()
            listed = ", ".join(str(c) for (c,) in columns)
            out[table] = connection.execute(
                f"SELECT {listed} FROM {table} ORDER BY {key}"
            ).fetchall()
    # The ladder writes the version itself: every other meta row must stay.
    out["meta"] = [row for row in out["meta"] if row[0] != "schema_version"]
    return out


def _tables(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    return {str(row[0]) for row in rows}


def test_a_version_2_store_upgrades_to_3_keeping_every_row(v2_url: str) -> None:
    from venom_mem_adapters.postgres import PostgresStore

    before = _rows(v2_url)
    assert len(before["memories"]) == 3
    assert len(before["memory_versions"]) == 5
    assert len(before["memory_fts_terms"]) > 0
    with PostgresStore.open(v2_url) as store:
        assert store.describe()["schema_version"] == 3
        client = LocalClient(App(store=store, clock=FixedClock()), OWNER)
        client.call("memory.get", {"id": "m1"})
    assert _rows(v2_url) == before
    assert {"links", "inactive_spaces"} <= _tables(v2_url)
    import psycopg

    with psycopg.connect(v2_url, autocommit=True) as connection:
        origins = connection.execute("SELECT DISTINCT origin FROM memories").fetchall()
    assert origins == [(None,)]


def _rung_3_then_fails(after: int) -> Callable[[object], None]:
    from venom_mem_adapters.postgres.schema import SCHEMA_V3

    def apply(connection: object) -> None:
        for statement in SCHEMA_V3[:after]:
            connection.execute(statement.encode("utf-8"))  # type: ignore[attr-defined]
        raise RuntimeError(f"rung 2 -> 3 broke after {after} statements")

    return apply


@pytest.mark.parametrize("after", [1, 3])
def test_a_failure_halfway_through_rung_3_leaves_version_2(v2_url: str, after: int) -> None:
    from venom_mem_adapters.postgres import DEFAULT_MIGRATIONS, Migration, PostgresStore

    before = _rows(v2_url)
    ladder = (*DEFAULT_MIGRATIONS[:2], Migration(name="breaks", apply=_rung_3_then_fails(after)))
    with pytest.raises(VenomError) as info:
        PostgresStore.open(v2_url, migrations=ladder)
    assert info.value.code == "failed.store_migration"
    assert (info.value.data["from"], info.value.data["to"]) == (2, 3)
    assert not {"links", "inactive_spaces"} & _tables(v2_url)
    assert _rows(v2_url) == before
    with PostgresStore.open(v2_url) as store:  # the real rung then takes it to 3
        assert store.describe()["schema_version"] == 3
