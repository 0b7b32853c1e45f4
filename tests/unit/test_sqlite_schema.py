"""Schema 1 exactly as RFC-0020 section 6, and the settings every connection carries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from venom_mem_adapters.sqlite import SqliteStore, open_connection
from venom_mem_adapters.sqlite.schema import APPLICATION_ID, INDEXES, TABLES, TRIGGERS


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
    assert APPLICATION_ID == 0x564D454D == 1447904589
    assert conn.pragma("application_id") == 1447904589
    assert conn.pragma("user_version") == 1


def test_meta_starts_the_principal_counter(conn: apsw.Connection) -> None:
    assert conn.execute("SELECT key, value FROM meta").fetchall() == [("next_principal", "1")]


def _objects(conn: apsw.Connection, kind: str) -> set[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%'", (kind,)
    ).fetchall()
    return {name for (name,) in rows}


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
    }
    assert set(INDEXES) == {
        "sessions_harness",
        "sessions_parent",
        "memories_live_content",
        "memories_space",
        "memories_session",
    }


def _columns(conn: apsw.Connection, table: str) -> list[tuple[str, str, int, int]]:
    rows = conn.execute(
        "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", (table,)
    ).fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def test_columns_as_the_spec_writes_them(conn: apsw.Connection) -> None:
    assert [c[0] for c in _columns(conn, "memories")] == [
        "id", "space", "kind", "title", "content", "content_sha256", "tags", "revision",
        "principal", "label", "updated_by", "updated_label", "session", "created", "updated",
        "deleted",
    ]  # fmt: skip
    assert [c[0] for c in _columns(conn, "sessions")] == [
        "id", "harness", "harness_session", "parent", "relation", "cwd", "principal", "label",
        "started", "ended",
    ]  # fmt: skip
    assert [c[0] for c in _columns(conn, "memory_versions")] == [
        "memory", "revision", "action", "kind", "title", "content", "tags", "principal",
        "label", "ts",
    ]  # fmt: skip
    assert [c[0] for c in _columns(conn, "memory_vectors")] == ["memory", "model", "embedding"]
    assert [c[0] for c in _columns(conn, "clients")] == [
        "name", "principal", "grants", "token_hash", "created", "expires",
    ]  # fmt: skip
    sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'memories'").get
    assert "AUTOINCREMENT" in sql
    assert "WITHOUT ROWID" in conn.execute(
        "SELECT sql FROM sqlite_schema WHERE name = 'memory_versions'"
    ).get


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
