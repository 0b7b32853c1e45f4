"""venom-mem store copy: SQLite -> PostgreSQL -> SQLite through real daemons, CLI
subprocesses and a real PostgreSQL server (docs/adr/0041).

The tables are compared here by reading each store with its own driver, independently of the
copy's code: every data table's rows (the full-text index and the engines' own meta keys
aside, which each store keeps for itself) and the ID counters.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from tests.support.daemon_env import World, make_world
from tests.support.postgres_server import PostgresServer, postgres_server
from tests.support.varied_store import write_history
from venom_mem_core.errors import VenomError

__all__ = ["postgres_server"]  # the fixture, imported for pytest

READ_ONLY = '[{"right":"read","scope":"space:user"}]'
INDEX = {"memory_fts", "memory_fts_terms"}  # derived: each store builds its own
OWN_META = {"application_id", "schema_version", "clients_version", "erase_pending"}
Tables = dict[str, list[tuple[Any, ...]]]


def _sqlite_tables(path: Path) -> tuple[Tables, dict[str, int]]:
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [
            str(r[0])
            for r in connection.execute(
                "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'"
                " AND name NOT LIKE 'sqlite_%'"
            )
        ]
        tables: Tables = {}
        for name in names:
            if name in INDEX:
                continue
            columns = sorted(str(r[1]) for r in connection.execute(f"PRAGMA table_info({name})"))
            rows = connection.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall()
            tables[name] = sorted((tuple(row) for row in rows), key=repr)
        counters = {
            str(n): int(s) for n, s in connection.execute("SELECT name, seq FROM sqlite_sequence")
        }
    finally:
        connection.close()
    return _without_own_meta(tables), {k: v for k, v in counters.items() if v}


def _pg_tables(url: str) -> tuple[Tables, dict[str, int]]:
    import psycopg

    tables: Tables = {}
    counters: dict[str, int] = {}
    with psycopg.connect(url) as connection:
        names = [
            str(r[0])
            for r in connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        ]
        for name in names:
            if name in INDEX:
                continue
            columns = sorted(
                str(r[0])
                for r in connection.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = current_schema() AND table_name = %s",
                    (name,),
                )
            )
            rows = connection.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall()
            tables[name] = sorted((tuple(row) for row in rows), key=repr)
        for table, column in connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'"
        ).fetchall():
            if table in INDEX:
                continue
            value = connection.execute(
                "SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, %s)::regclass)",
                (table, column),
            ).fetchone()
            if value is not None and value[0]:
                counters[str(table)] = int(value[0])
    return _without_own_meta(tables), counters


def _without_own_meta(tables: Tables) -> Tables:
    tables["meta"] = [row for row in tables["meta"] if row[0] not in OWN_META]
    return tables


def _build(world: World) -> dict[str, Any]:
    """A store with every kind of row; what the checks after the copy need."""
    agent = world.add_client("claude-code")
    reader = world.add_client("codex", READ_ONLY)
    write_history(world, agent)
    world.ok("memory", "add", "--space", "user", "--content", "purged, its ID never again",
             token=agent)  # fmt: skip
    world.ok("memory", "purge", "--id", "m5", token="@owner")
    world.ok("space", "describe", "--space", "user", "--description", "Über mich", token=agent)
    world.ok("space", "describe", "--space", "team", "--description", "Team facts",
             token="@owner")  # fmt: skip
    revision = world.ok("memory", "get", "--id", "m2", token=agent)["revision"]
    return {"agent": agent, "reader": reader, "m2_revision": revision}


def _add_vector(world: World, memory: int, vector: tuple[float, ...]) -> None:
    """A stored vector row, as the embedding worker writes one (float32, little-endian),
    written with the daemon stopped: these tests run with embeddings off."""
    world.stop_daemon()
    connection = apsw.Connection(str(world.store))
    try:
        connection.execute(
            "INSERT INTO memory_vectors (memory, model, embedding) VALUES (?, ?, ?)",
            (memory, "test-model", struct.pack(f"<{len(vector)}f", *vector)),
        )
    finally:
        connection.close()


@pytest.fixture
def source() -> Iterator[World]:
    with make_world() as world:
        yield world


def _on(world: World, *, url: str = "", path: str = "") -> World:
    key = f'.url = "{url}"' if url else f'.path = "{path}"'
    world.write_config(f".{{ .store = .{{ {key} }} }}")
    return world


def _copy(world: World, to: str, token: str = "@owner") -> Any:
    result = world.run("store", "copy", "--to", to, "--json", token=token, timeout=120)
    return json.loads(result.stdout.strip().splitlines()[-1]) | {"exit": result.code}


def _works_on_copy(world: World, made: dict[str, Any], source_next_id: int) -> None:
    """A token made before the copy reads and writes through a daemon on the copy, and an
    update with a revision read before the copy goes through."""
    found = world.ok("memory", "search", "--query", "small PRs", token=made["agent"])
    assert [r["id"] for r in found["results"]] == ["m1"]
    assert world.ok("memory", "get", "--id", "m1", token=made["reader"])["title"] == "Größe"
    denied = world.run("memory", "get", "--id", "m2", "--json", token=made["reader"])
    assert denied.code != 0
    assert "denied.read" in denied.stdout
    updated = world.ok("memory", "update", "--id", "m2", "--revision",
                       str(made["m2_revision"]), "--content", "third draft",
                       token=made["agent"])  # fmt: skip
    assert updated == {"id": "m2", "revision": made["m2_revision"] + 1, "changed": True}
    added = world.ok("memory", "add", "--space", "team", "--content", "after the copy",
                     token=made["agent"])  # fmt: skip
    assert added["id"] == f"m{source_next_id}"  # m5 was purged: its ID is not drawn again


def test_sqlite_to_postgres_and_back_keeps_every_row_token_and_revision(
    source: World, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    made = _build(source)
    _add_vector(source, 1, (0.25, -1.5, 3.0e-8, 1.0))
    before, counters = _sqlite_tables(source.store)
    assert len(before["memory_vectors"]) == 1
    assert counters == {"memories": 5, "sessions": 3}

    url = postgres_server.fresh_url("copy")
    copied = _copy(source, url)
    assert copied["exit"] == 0, copied
    rows = {t["table"]: t["rows"] for t in copied["tables"]}
    assert rows == {name: len(held) for name, held in before.items()}
    assert (rows["memories"], rows["clients"], rows["sessions"], rows["spaces"]) == (4, 2, 3, 2)
    on_pg, pg_counters = _pg_tables(url)
    assert on_pg == before
    assert pg_counters == counters

    # ...and back, by a daemon serving the PostgreSQL copy, into a new SQLite file.
    with make_world() as team:
        team.env.update(postgres_server.environ)
        _on(team, url=url)
        back = tmp_path / "back" / "store.db"
        copied_back = _copy(team, str(back))
        assert copied_back["exit"] == 0, copied_back
        assert copied_back["tables"] == copied["tables"]  # the same hashes, computed on each
        team.stop_daemon()
        assert _sqlite_tables(back) == (before, counters)

        _works_on_copy(team, made, 6)  # the PostgreSQL copy, served
    with make_world() as local:
        _on(local, path=str(back))
        _works_on_copy(local, made, 6)  # the SQLite copy of the copy


def _pg_index(url: str) -> Tables:
    import psycopg

    with psycopg.connect(url) as connection:
        return {
            name: sorted(connection.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
            for name in sorted(INDEX)
        }


def test_the_copy_builds_the_full_text_index_a_write_would(
    postgres_server: PostgresServer,
) -> None:
    """PostgreSQL to PostgreSQL: the copy derives the index from the memories it was given,
    in batches, and has exactly the rows the daemon's writes (adds, updates, a delete, a
    restore) left in the source's index."""
    url = postgres_server.fresh_url("written")
    with make_world() as team:
        team.env.update(postgres_server.environ)
        _on(team, url=url)
        _build(team)
        team.ok("memory", "add", "--space", "user", "--tags", "a,b",
                "--content", "docs " * 40 + "Ünïcode tail", token="@owner")  # fmt: skip
        written = _pg_index(url)
        assert len(written["memory_fts"]) == 4  # m3 deleted, m5 purged
        copy_url = postgres_server.fresh_url("derived")
        copied = _copy(team, copy_url)
        assert copied["exit"] == 0, copied
    assert _pg_index(copy_url) == written


def test_a_store_that_is_not_empty_is_refused_and_untouched(
    source: World, postgres_server: PostgresServer
) -> None:
    _build(source)
    url = postgres_server.fresh_url("full")
    with make_world() as other:
        other.env.update(postgres_server.environ)
        _on(other, url=url)
        other.ok("memory", "add", "--space", "user", "--content", "already here", token="@owner")
        other.stop_daemon()
    held = _pg_tables(url)
    refused = _copy(source, url)
    assert refused["exit"] != 0
    assert refused["error"]["code"] == "conflict.store_not_empty", refused
    assert refused["error"]["data"]["tables"]["memories"] == 1
    assert _pg_tables(url) == held

    # A SQLite target too, and the refusal leaves its file as it was.
    with make_world() as other:
        other.ok("memory", "add", "--space", "user", "--content", "mine", token="@owner")
        other.stop_daemon()
        data = other.store.read_bytes()
        refused = _copy(source, str(other.store))
        assert refused["error"]["code"] == "conflict.store_not_empty", refused
        assert other.store.read_bytes() == data


def test_only_the_owner_copies_a_store(source: World, tmp_path: Path) -> None:
    made = _build(source)
    target = tmp_path / "copy.db"
    for token in (made["agent"], made["reader"]):
        refused = _copy(source, str(target), token=token)
        assert refused["error"]["code"] == "denied.files", refused
    assert not target.exists()


def test_sqlite_to_sqlite_copies_vectors_and_refuses_a_bad_url(
    source: World, tmp_path: Path
) -> None:
    _build(source)
    bad = _copy(source, "relative/path.db")
    assert bad["error"]["code"] == "invalid_params.store_url", bad
    target = tmp_path / "same-kind.db"
    copied = _copy(source, str(target))
    assert copied["exit"] == 0, copied
    assert _sqlite_tables(target) == _sqlite_tables(source.store)


# -- a later schema: a table and a column the copy has never heard of ------------------------

_PINS_SQLITE = (
    "CREATE TABLE pins (id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " source INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,"
    " target INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE, note TEXT)",
    "ALTER TABLE memories ADD COLUMN later TEXT",
)
_PINS_PG = (
    "CREATE TABLE pins (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " source bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,"
    " target bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,"
    ' note TEXT COLLATE "C")',
    "ALTER TABLE memories ADD COLUMN later jsonb",
)


def _v4_sqlite(path: Path) -> None:
    """A store at a synthetic schema 4 (a pins table, a later column), with rows in it."""
    from venom_mem_adapters.sqlite import SqliteStore
    from venom_mem_adapters.sqlite.migrations import DEFAULT_MIGRATIONS, Migration

    def apply(connection: apsw.Connection) -> None:
        for statement in _PINS_SQLITE:
            connection.execute(statement)

    ladder = (*DEFAULT_MIGRATIONS, Migration(name="pins", apply=apply))
    SqliteStore.open(path, migrations=ladder).close()
    connection = apsw.Connection(str(path))
    try:
        for n, text in ((1, "eins"), (2, "zwei ✓")):
            connection.execute(
                "INSERT INTO memories (space, kind, content, content_sha256, principal,"
                " updated_by, created, updated, later) VALUES ('user', 'fact', ?, ?, 'owner',"
                " 'owner', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?)",
                (text, bytes([n]) * 32, f'{{"format":"server-memory","id":{n}}}'),
            )
        connection.execute("INSERT INTO pins (source, target, note) VALUES (1, 2, 'siehe')")
    finally:
        connection.close()


def test_a_table_and_column_of_a_later_schema_are_copied_with_no_change(
    tmp_path: Path, postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    from venom_mem_adapters.copy.run import copy_store, open_source, open_target
    from venom_mem_adapters.postgres import PostgresStore
    from venom_mem_adapters.postgres import copy_end as pg_end
    from venom_mem_adapters.postgres.migrations import DEFAULT_MIGRATIONS as PG_LADDER
    from venom_mem_adapters.postgres.migrations import Migration as PgMigration
    from venom_mem_adapters.sqlite import SqliteStore
    from venom_mem_adapters.sqlite import copy_end as sqlite_end
    from venom_mem_adapters.sqlite.migrations import DEFAULT_MIGRATIONS as SQLITE_LADDER
    from venom_mem_adapters.sqlite.migrations import Migration

    store_dir = tmp_path / "v4"
    store_dir.mkdir(mode=0o700)
    path = store_dir / "store.db"
    _v4_sqlite(path)

    def apply_pg(connection: psycopg.Connection[tuple[Any, ...]]) -> None:
        for statement in _PINS_PG:
            connection.execute(statement.encode())

    def apply_sqlite(connection: apsw.Connection) -> None:
        for statement in _PINS_SQLITE:
            connection.execute(statement)

    url = postgres_server.fresh_url("v3")
    ladder = (*SQLITE_LADDER, Migration(name="pins", apply=apply_sqlite))
    with SqliteStore.open(path, migrations=ladder) as store:
        # This venom-mem's PostgreSQL ladder stops at 3: refused before anything is written.
        with (
            open_target(url) as target,
            open_source("sqlite", store) as source,
            pytest.raises(VenomError) as refused,
        ):
            copy_store(source, target)
        assert refused.value.code == "conflict.store_schema"
        assert "schema version 4" in refused.value.message
        with psycopg.connect(url) as connection:
            left = connection.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchone()
        assert left == (0,)

        # With a rung 4 on both ladders (as a later schema would add), the copy needs no edit.
        pg_ladder = (*PG_LADDER, PgMigration(name="pins", apply=apply_pg))
        monkeypatch.setattr(pg_end, "DEFAULT_MIGRATIONS", pg_ladder)
        monkeypatch.setattr(sqlite_end, "DEFAULT_MIGRATIONS", ladder)
        with open_target(url) as target, open_source("sqlite", store) as source:
            copied = copy_store(source, target)
    rows = {t["table"]: t["rows"] for t in copied["tables"]}
    assert rows["pins"] == 1
    assert copied["counters"] == {"memories": 2, "pins": 1}
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT source, target, note FROM pins").fetchall() == [
            (1, 2, "siehe")
        ]
        laters = connection.execute("SELECT later FROM memories ORDER BY id").fetchall()
    assert laters == [
        ({"format": "server-memory", "id": 1},),
        ({"format": "server-memory", "id": 2},),
    ]

    back = store_dir / "back.db"
    with (
        PostgresStore.open(url, migrations=pg_ladder) as team,
        open_target(str(back)) as target,
        open_source("postgres", team) as source,
    ):
        again = copy_store(source, target)
    assert again["tables"] == copied["tables"]  # jsonb and its text hash alike
