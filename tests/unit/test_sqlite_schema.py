"""Schema 1 exactly as RFC-0020 section 6, and the settings every connection carries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from venom_mem_adapters.sqlite import SqliteStore, open_connection
from venom_mem_adapters.sqlite.schema import APPLICATION_ID, INDEXES, SCHEMA_V1, TABLES, TRIGGERS


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "store" / "store.db"
    SqliteStore.open(path).close()
    return path


@pytest.fixture
def conn(store_path: Path) -> Iterator[apsw.Connection]:
    connection = open_connection(store_path, readonly=True)
    yield connection
    connection.close()


def test_application_id_and_user_version(conn: apsw.Connection) -> None:
    assert APPLICATION_ID == 1447904589
    assert APPLICATION_ID.to_bytes(4, "big") == b"VMEM"
    assert conn.pragma("application_id") == 1447904589
    assert conn.pragma("user_version") == 3


def test_meta_starts_the_principal_counter(conn: apsw.Connection) -> None:
    assert conn.execute("SELECT key, value FROM meta").fetchall() == [("next_principal", "1")]


def _objects(conn: apsw.Connection, kind: str) -> set[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%'", (kind,)
    ).fetchall()
    return {str(name) for (name,) in rows}


def test_every_table_index_and_trigger_exists(conn: apsw.Connection) -> None:
    fts_shadow = {f"memory_fts_{s}" for s in ("data", "idx", "docsize", "config")}
    assert _objects(conn, "table") == set(TABLES) | fts_shadow
    assert _objects(conn, "index") == set(INDEXES)
    assert _objects(conn, "trigger") == set(TRIGGERS)
    assert set(TABLES) == {
        "meta",
        "sessions",
        "memories",
        "memory_versions",
        "memory_vectors",
        "clients",
        "memory_fts",
        "spaces",
        "links",
        "inactive_spaces",
    }
    assert set(INDEXES) == {
        "sessions_harness",
        "sessions_parent",
        "memories_live_content",
        "memories_space",
        "memories_session",
        "links_live",
        "links_target",
    }


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    rows = conn.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall()
    return [str(name) for (name,) in rows]


def test_columns_as_the_spec_writes_them(conn: apsw.Connection) -> None:
    assert _columns(conn, "memories") == [
        "id", "space", "kind", "title", "content", "content_sha256", "tags", "revision",
        "principal", "label", "updated_by", "updated_label", "session", "created", "updated",
        "deleted", "importance", "branches", "origin",
    ]  # fmt: skip
    assert _columns(conn, "sessions") == [
        "id", "harness", "harness_session", "parent", "relation", "cwd", "principal", "label",
        "started", "ended",
    ]  # fmt: skip
    assert _columns(conn, "memory_versions") == [
        "memory", "revision", "action", "kind", "title", "content", "tags", "principal",
        "label", "ts", "importance", "branches",
    ]  # fmt: skip
    assert _columns(conn, "spaces") == ["space", "description", "principal", "label", "updated"]
    assert _columns(conn, "memory_vectors") == ["memory", "model", "embedding"]
    assert _columns(conn, "clients") == [
        "name", "principal", "grants", "token_hash", "created", "expires",
    ]  # fmt: skip
    sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'memories'").get
    assert "AUTOINCREMENT" in sql
    assert (
        "WITHOUT ROWID"
        in conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'memory_versions'").get
    )


def test_partial_indexes(conn: apsw.Connection) -> None:
    live = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'memories_live_content'").get
    assert "UNIQUE" in live
    assert "WHERE deleted IS NULL" in live


def test_fts_table_options_and_secure_delete(conn: apsw.Connection) -> None:
    sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'memory_fts'").get
    for part in (
        "fts5",
        "content = 'memories'",
        "content_rowid = 'id'",
        "tokenize = 'porter unicode61 remove_diacritics 2'",
    ):
        assert part in sql
    assert conn.execute("SELECT v FROM memory_fts_config WHERE k = 'secure-delete'").get == 1


@pytest.mark.parametrize("readonly", [False, True])
def test_connection_settings(store_path: Path, readonly: bool) -> None:
    connection = open_connection(store_path, readonly=readonly)
    try:
        assert connection.pragma("journal_mode") == "wal"
        assert connection.pragma("synchronous") == 2  # FULL
        assert connection.pragma("foreign_keys") == 1
        assert connection.pragma("secure_delete") == 1
        assert connection.pragma("busy_timeout") == 5000
        assert connection.readonly("main") is readonly
        assert connection.config(apsw.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, -1) == 0
        assert connection.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, -1) == 1
    finally:
        connection.close()


def test_read_only_connection_cannot_write(store_path: Path) -> None:
    connection = open_connection(store_path, readonly=True)
    try:
        with pytest.raises(apsw.ReadOnlyError):
            connection.execute("INSERT INTO meta (key, value) VALUES ('x', 'y')")
    finally:
        connection.close()


@pytest.mark.parametrize("readonly", [False, True])
@pytest.mark.parametrize(
    "sql", ["SELECT load_extension('x')", "SELECT load_extension('/lib/libc.so.6', 'x')"]
)
def test_load_extension_refused_from_sql(store_path: Path, readonly: bool, sql: str) -> None:
    connection = open_connection(store_path, readonly=readonly)
    try:
        with pytest.raises(apsw.Error, match="load_extension is disabled"):
            connection.execute(sql).fetchall()
    finally:
        connection.close()


def test_load_extension_refused_through_the_c_api(store_path: Path) -> None:
    connection = open_connection(store_path, readonly=False)
    try:
        with pytest.raises(apsw.ExtensionLoadingError, match="not authorized"):
            connection.load_extension("/nonexistent/extension.so")
    finally:
        connection.close()


def test_load_extension_refused_on_the_stores_own_connections(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s" / "store.db")
    try:
        for connection in (store._writer, *store._readers):
            with pytest.raises(apsw.Error, match="load_extension is disabled"):
                connection.execute("SELECT load_extension('x')").fetchall()
    finally:
        store.close()


def test_sql_function_stays_refused_even_if_the_flag_is_turned_on(store_path: Path) -> None:
    """Defence in depth: our shadowing function, not the flag alone, answers the SQL call."""
    connection = open_connection(store_path, readonly=True)
    try:
        connection.enable_load_extension(True)
        with pytest.raises(apsw.Error, match="load_extension is disabled"):
            connection.execute("SELECT load_extension('x')").fetchall()
    finally:
        connection.close()


def _fts_consistent(connection: apsw.Connection) -> bool:
    try:
        connection.execute(
            "INSERT INTO memory_fts (memory_fts, rank) VALUES ('integrity-check', 1)"
        )
    except apsw.CorruptError:
        return False
    return True


def _update_once(statements: list[str]) -> apsw.Connection:
    connection = apsw.Connection(":memory:")
    for statement in statements:
        connection.execute(statement).fetchall()
    connection.execute(
        "INSERT INTO memories (space, kind, content, content_sha256, principal, updated_by,"
        " created, updated) VALUES ('s', 'note', 'version one', x'01', 'o', 'o', 't', 't')"
    )
    connection.execute("UPDATE memories SET content = 'version two' WHERE id = 1")
    return connection


def test_update_triggers_run_delete_then_insert() -> None:
    """docs/adr/0003: SQLite fires same-event triggers newest first, so the order we create
    memories_au_new and memories_au_old in decides whether an update corrupts the index."""
    ours = _update_once(list(SCHEMA_V1))
    assert _fts_consistent(ours)
    assert ours.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH 'two'").get == 1
    assert ours.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH 'one'").get is None
    as_listed = list(SCHEMA_V1)
    new = next(i for i, s in enumerate(as_listed) if "TRIGGER memories_au_new" in s)
    old = next(i for i, s in enumerate(as_listed) if "TRIGGER memories_au_old" in s)
    assert new < old
    as_listed[new], as_listed[old] = as_listed[old], as_listed[new]  # the RFC's order
    # If this starts passing, SQLite changed its trigger order and the ADR needs a look.
    assert not _fts_consistent(_update_once(as_listed))
