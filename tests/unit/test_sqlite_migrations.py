"""The migration ladder on real files: refusals leave files alone, steps back up and commit whole.

Fixture databases of other versions are built with the stdlib ``sqlite3`` module, a separate
SQLite client, so they do not depend on the adapter under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import apsw
import pytest

from venom_mem_adapters.sqlite import DEFAULT_MIGRATIONS, Migration, SqliteStore
from venom_mem_adapters.sqlite.schema import APPLICATION_ID, SCHEMA_V3
from venom_mem_core import App, LocalClient
from venom_mem_core.clock import FixedClock
from venom_mem_core.errors import VenomError
from venom_mem_core.usecases.principals import resolve_token


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _directory(tmp_path: Path) -> Path:
    directory = tmp_path / "store"
    directory.mkdir(mode=0o700)
    return directory


def _stdlib_db(path: Path, *statements: str) -> None:
    connection = sqlite3.connect(path)
    try:
        for statement in statements:
            connection.execute(statement)
        connection.commit()
    finally:
        connection.close()
    path.chmod(0o600)


def _v3_store(path: Path) -> None:
    with SqliteStore.open(path) as store, store.write() as tx:
        tx.set_meta("marker", "kept")


def _user_version(path: Path) -> int:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        version: int = connection.execute("PRAGMA user_version").fetchone()[0]
        return version
    finally:
        connection.close()


def _untouched(path: Path, before: str) -> None:
    assert _digest(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("wal", [False, True])
def test_newer_database_refused_and_untouched(tmp_path: Path, wal: bool) -> None:
    path = _directory(tmp_path) / "store.db"
    _stdlib_db(
        path,
        f"PRAGMA application_id = {APPLICATION_ID}",
        "PRAGMA user_version = 4",
        "CREATE TABLE future (x)",
        *(["PRAGMA journal_mode = WAL"] if wal else []),
    )
    before = _digest(path)
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.code == "unsupported.store_schema"
    assert info.value.exit_code == 10
    assert info.value.data["found"] == 4
    assert info.value.data["supported"] == 3
    _untouched(path, before)


@pytest.mark.parametrize(
    ("application_id", "code"),
    [(APPLICATION_ID, "unsupported.store_schema"), (0x0F00BA12, "failed.store")],
)
def test_a_refused_database_with_a_leftover_wal_gets_no_shm(
    tmp_path: Path, application_id: int, code: str
) -> None:
    """A crash can leave a -wal; opening the database through SQLite would then create its
    -shm. The header says enough to refuse it without opening (MEM-03: left untouched)."""
    made = tmp_path / "made"
    made.mkdir()
    writer = sqlite3.connect(made / "store.db")
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute(f"PRAGMA application_id = {application_id}")
    writer.execute("PRAGMA user_version = 4")
    writer.execute("CREATE TABLE future (x)")
    writer.commit()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.execute("INSERT INTO future VALUES (1)")
    writer.commit()  # this one stays in the WAL, as after a crash
    directory = _directory(tmp_path)
    for name in ("store.db", "store.db-wal"):
        (directory / name).write_bytes((made / name).read_bytes())
        (directory / name).chmod(0o600)
    writer.close()
    path = directory / "store.db"
    before = {name: _digest(directory / name) for name in ("store.db", "store.db-wal")}
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.code == code
    names = sorted(p.name for p in directory.iterdir())
    assert "store.db-shm" not in names
    assert {name: _digest(directory / name) for name in ("store.db", "store.db-wal")} == before


def test_not_a_database_refused_and_untouched(tmp_path: Path) -> None:
    path = _directory(tmp_path) / "store.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    path.chmod(0o600)
    before = _digest(path)
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.code == "failed.store"
    assert info.value.data["path"] == str(path)
    assert str(path) in info.value.message
    _untouched(path, before)


@pytest.mark.parametrize(
    "statements",
    [
        ("PRAGMA application_id = 42", "CREATE TABLE t (x)"),
        ("CREATE TABLE someone_elses (x)",),
        (f"PRAGMA application_id = {APPLICATION_ID}", "CREATE TABLE t (x)"),  # version 0
    ],
)
def test_other_sqlite_database_refused_and_untouched(
    tmp_path: Path, statements: tuple[str, ...]
) -> None:
    path = _directory(tmp_path) / "store.db"
    _stdlib_db(path, *statements)
    before = _digest(path)
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.code == "failed.store"
    assert "not a venom-mem store" in info.value.message
    assert info.value.data == {"path": str(path)}
    _untouched(path, before)


# -- 0 -> 1 ----------------------------------------------------------------------------------


def test_empty_file_and_empty_sqlite_database_become_schema_3(tmp_path: Path) -> None:
    directory = _directory(tmp_path)
    empty_file = directory / "a.db"
    empty_file.touch(mode=0o600)
    empty_db = directory / "b.db"
    _stdlib_db(empty_db, "PRAGMA user_version = 0")
    for path in (empty_file, empty_db):
        with SqliteStore.open(path) as store:
            assert store.describe()["schema_version"] == 3
        # Nothing to back up on a new database, before any step.
        for version in (0, 1, 2):
            assert not Path(f"{path}.bak-{version}").exists()


# -- 3 -> 4, synthetic -----------------------------------------------------------------------


def _add_notes(connection: apsw.Connection) -> None:
    connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    connection.execute("INSERT INTO notes (text) SELECT value FROM meta WHERE key = 'marker'")


def test_synthetic_migration_backs_up_then_applies(tmp_path: Path) -> None:
    path = _directory(tmp_path) / "store.db"
    _v3_store(path)
    ladder = (*DEFAULT_MIGRATIONS, Migration(name="add notes", apply=_add_notes))
    with SqliteStore.open(path, migrations=ladder) as store:
        assert store.describe()["schema_version"] == 4
        with store.read() as tx:
            assert tx.get_meta("marker") == "kept"
            assert tx._rows("SELECT text FROM notes") == [("kept",)]
    backup = Path(f"{path}.bak-3")
    assert os.lstat(backup).st_mode & 0o777 == 0o600
    assert _user_version(backup) == 3
    check = sqlite3.connect(backup)
    try:
        assert check.execute("SELECT value FROM meta WHERE key = 'marker'").fetchone() == ("kept",)
        assert check.execute("SELECT name FROM sqlite_schema WHERE name = 'notes'").fetchall() == []
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        check.close()
    assert not Path(f"{backup}.partial").exists()
    # The upgraded store opens again with the same ladder and needs no new backup.
    stamp = os.stat(backup).st_mtime_ns
    SqliteStore.open(path, migrations=ladder).close()
    assert os.stat(backup).st_mtime_ns == stamp
    # The old binary refuses the upgraded file.
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.code == "unsupported.store_schema"


def _half_then_fail(connection: apsw.Connection) -> None:
    connection.execute("CREATE TABLE half_done (x)")
    connection.execute("UPDATE meta SET value = 'changed' WHERE key = 'marker'")
    raise RuntimeError("step 3 -> 4 broke halfway")


def test_failing_migration_leaves_the_old_schema(tmp_path: Path) -> None:
    path = _directory(tmp_path) / "store.db"
    _v3_store(path)
    ladder = (*DEFAULT_MIGRATIONS, Migration(name="breaks", apply=_half_then_fail))
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path, migrations=ladder)
    assert info.value.code == "failed.store_migration"
    assert info.value.exit_code == 1
    assert info.value.data == {"path": str(path), "from": 3, "to": 4}
    assert "step 3 -> 4 broke halfway" in info.value.message
    assert _user_version(path) == 3
    with SqliteStore.open(path) as store, store.read() as tx:
        assert tx.get_meta("marker") == "kept"
        assert tx._rows("SELECT name FROM sqlite_schema WHERE name = 'half_done'") == []
    assert Path(f"{path}.bak-3").exists()
    # A second attempt replaces the earlier backup with a fresh, complete one.
    with pytest.raises(VenomError):
        SqliteStore.open(path, migrations=ladder)
    assert _user_version(Path(f"{path}.bak-3")) == 3
    assert not Path(f"{path}.bak-3.partial").exists()


# -- 1 -> 2, from a real version-1 store -----------------------------------------------------

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store-v1.db"
FIXTURE_FACTS = Path(__file__).parents[1] / "fixtures" / "store-v1.json"
V1_TABLES = {
    "memories": "id",
    "memory_versions": "memory, revision",
    "memory_vectors": "memory",
    "sessions": "id",
    "clients": "name",
    "meta": "key",
}


def _fixture_copy(tmp_path: Path) -> Path:
    path = _directory(tmp_path) / "store.db"
    path.write_bytes(FIXTURE.read_bytes())
    path.chmod(0o600)
    return path


def _v1_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every version-1 table, version-1 columns only, in key order."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = {}
        for table, key in V1_TABLES.items():
            names = [r[1] for r in connection.execute(f"PRAGMA table_info({table})")]
            names = [n for n in names if n not in ("importance", "branches", "origin")]
            out[table] = connection.execute(
                f"SELECT {', '.join(names)} FROM {table} ORDER BY {key}"
            ).fetchall()
        return out
    finally:
        connection.close()


def test_the_version_1_fixture_is_what_it_claims() -> None:
    """The fixture holds what the upgrade must keep (tests/fixtures/make_store_v1.py)."""
    assert _user_version(FIXTURE) == 1
    rows = _v1_rows(FIXTURE)
    assert len(rows["memories"]) == 5
    assert len(rows["memory_versions"]) == 10
    assert len(rows["memory_vectors"]) == 2
    assert len(rows["sessions"]) == 3
    assert [r[0] for r in rows["clients"]] == ["claude-code", "codex"]


def test_version_1_store_upgrades_keeping_every_row(tmp_path: Path) -> None:
    path = _fixture_copy(tmp_path)
    before = _v1_rows(path)
    with SqliteStore.open(path) as store:
        assert store.describe()["schema_version"] == 3
    after = _v1_rows(path)
    assert after == before
    check = sqlite3.connect(path)
    try:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert check.execute("PRAGMA foreign_key_check").fetchall() == []
        assert check.execute("SELECT DISTINCT importance, branches FROM memories").fetchall() == [
            ("normal", "")
        ]
        assert check.execute(
            "SELECT DISTINCT importance, branches FROM memory_versions"
        ).fetchall() == [("normal", "")]
        assert check.execute("SELECT count(*) FROM spaces").fetchone() == (0,)
    finally:
        check.close()
    # The full-text index still answers (the stdlib's older SQLite can't read FTS5 with
    # secure-delete, hence apsw), and a CHECK guards each new column.
    fts = apsw.Connection(str(path))
    try:
        assert fts.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH 'zigversion'"
        ).fetchall() == [(1,)]
        for bad in ("importance = 'urgent'", "branches = ' main'"):
            with pytest.raises(apsw.ConstraintError):
                fts.execute(f"UPDATE memories SET {bad} WHERE id = 1")
    finally:
        fts.close()
    backup = Path(f"{path}.bak-1")
    assert os.lstat(backup).st_mode & 0o777 == 0o600
    assert _user_version(backup) == 1
    assert _v1_rows(backup) == before


def test_upgraded_store_serves_its_clients_memories_and_sessions(tmp_path: Path) -> None:
    path = _fixture_copy(tmp_path)
    tokens = json.loads(FIXTURE_FACTS.read_text())
    with SqliteStore.open(path) as store:
        app = App(store=store, clock=FixedClock())
        claude = LocalClient(app, resolve_token(app, tokens["claude_code_token"], unknown=()))
        assert claude.principal.id == "g1"
        assert claude.principal.label == "claude-code"
        zig = claude.call("memory.get", {"id": "m1"})
        assert zig["revision"] == 3
        assert zig["importance"] == "normal"
        assert zig["branches"] == []
        assert zig["tags"] == ["zig"]
        assert zig["embedding"] == "off"
        history = claude.call("memory.history", {"id": "m1"})["versions"]
        assert [(h["revision"], h["action"], h["by"]["principal"]) for h in history] == [
            (3, "update", "g1"),
            (2, "update", "g2"),
            (1, "add", "g1"),
        ]
        first = claude.call("memory.get", {"id": "m1", "revision": 1})
        assert first["content"] == "venom-std pins Zig with .zigversion; check it before upgrading."
        assert first["importance"] == "normal"
        with pytest.raises(VenomError) as info:
            claude.call("memory.get", {"id": "m4"})
        assert info.value.code == "not_found.memory"
        assert claude.call("memory.get", {"id": "m4", "include_deleted": True})["deleted"]
        hits = claude.call(
            "memory.search", {"query": "proto tests", "session": "s3", "lineage": True}
        )
        assert [h["id"] for h in hits["results"]] == ["m2"]
        chain = claude.call("session.chain", {"session": "s3"})
        assert [s["session"] for s in chain["chain"]] == ["s1", "s2", "s3"]
        # An importance-only change is a revision like any other.
        changed = claude.call(
            "memory.update", {"id": "m1", "revision": 3, "importance": "critical"}
        )
        assert changed == {"id": "m1", "revision": 4, "changed": True}
        with store.read() as tx:
            assert tx._rows("SELECT count(*) FROM memory_vectors") == [(2,)]  # vectors kept
    # Reopening needs no second backup.
    stamp = os.stat(f"{path}.bak-1").st_mtime_ns
    SqliteStore.open(path).close()
    assert os.stat(f"{path}.bak-1").st_mtime_ns == stamp


def test_a_failing_upgrade_from_version_1_leaves_version_1(tmp_path: Path) -> None:
    """Someone made a table named spaces by hand: the step fails, and not one of its
    statements stays (the columns it added before failing are gone too)."""
    path = _fixture_copy(tmp_path)
    _stdlib_db(path, "CREATE TABLE spaces (x)")
    before = _v1_rows(path)
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.code == "failed.store_migration"
    assert info.value.data == {"path": str(path), "from": 1, "to": 2}
    assert _user_version(path) == 1
    assert _v1_rows(path) == before
    check = sqlite3.connect(path)
    try:
        names = [r[1] for r in check.execute("PRAGMA table_info(memories)")]
    finally:
        check.close()
    assert "importance" not in names
    assert _user_version(Path(f"{path}.bak-1")) == 1


# -- 1 and 2 -> 3, from the committed version-1 and version-2 stores ------------------------

FIXTURES = Path(__file__).parents[1] / "fixtures"
# Every table a version-1 or version-2 store has, with the key that orders its rows.
KEYS = {**V1_TABLES, "spaces": "space", "sqlite_sequence": "name"}


def _copy_of(tmp_path: Path, version: int) -> Path:
    path = _directory(tmp_path) / "store.db"
    path.write_bytes((FIXTURES / f"store-v{version}.db").read_bytes())
    path.chmod(0o600)
    return path


def _every_row(
    path: Path, tables: Sequence[str] | None = None
) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table the file has (or of ``tables``), all their columns, in key
    order: what an upgrade must keep."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = tables or [
            r[0]
            for r in connection.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN"
                f" ({', '.join('?' * len(KEYS))})",
                tuple(KEYS),
            )
        ]
        out = {}
        for table in names:
            cols = [r[1] for r in connection.execute(f"PRAGMA table_info({table})")]
            out[table] = connection.execute(
                f"SELECT {', '.join(cols)} FROM {table} ORDER BY {KEYS[table]}"
            ).fetchall()
        return out
    finally:
        connection.close()


def _columns_of(path: Path, table: str) -> list[str]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[1] for r in connection.execute(f"PRAGMA table_info({table})")]
    finally:
        connection.close()


def test_the_version_2_fixture_is_what_it_claims() -> None:
    """tests/fixtures/make_store_v2.py: store-v1's content through schema 2, plus importance,
    branches (with a version that keeps the old ones) and two space descriptions."""
    assert _user_version(FIXTURES / "store-v2.db") == 2
    rows = _every_row(FIXTURES / "store-v2.db")
    assert set(rows) == set(KEYS)
    assert len(rows["memories"]) == 7
    assert len(rows["memory_versions"]) == 13
    assert len(rows["memory_vectors"]) == 2
    assert len(rows["sessions"]) == 3
    assert [r[0] for r in rows["spaces"]] == ["project/venom-std", "team"]
    importance = _columns_of(FIXTURES / "store-v2.db", "memories").index("importance")
    assert {r[importance] for r in rows["memories"]} == {"critical", "low", "normal"}


@pytest.mark.parametrize("version", [1, 2])
def test_version_1_and_2_stores_upgrade_to_3_keeping_every_row(
    tmp_path: Path, version: int
) -> None:
    path = _copy_of(tmp_path, version)
    before = _every_row(path)
    with SqliteStore.open(path) as store:
        assert store.describe()["schema_version"] == 3
    after = _every_row(path, tables=list(before))
    # Version 1's tables gain version 2's columns on the way; every old column keeps its
    # values, row for row.
    for table, rows in before.items():
        old = len(rows[0]) if rows else 0
        assert [r[:old] for r in after[table]] == rows, table
    assert (
        _every_row(path, tables=["sqlite_sequence"])["sqlite_sequence"] == before["sqlite_sequence"]
    )
    check = apsw.Connection(str(path))
    try:
        assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert check.execute("PRAGMA foreign_key_check").fetchall() == []
        assert check.execute("SELECT count(*) FROM links").fetchall() == [(0,)]
        assert check.execute("SELECT count(*) FROM inactive_spaces").fetchall() == [(0,)]
        # The new table's rules hold: a known relation, two different memories, both live.
        with pytest.raises(apsw.ConstraintError):
            check.execute(
                "INSERT INTO links (source, target, relation, principal, created)"
                " VALUES (1, 2, 'replaces', 'g1', 'now')"
            )
        with pytest.raises(apsw.ConstraintError):
            check.execute(
                "INSERT INTO links (source, target, relation, principal, created)"
                " VALUES (1, 1, 'supersedes', 'g1', 'now')"
            )
    finally:
        check.close()
    backup = Path(f"{path}.bak-2")
    assert os.lstat(backup).st_mode & 0o777 == 0o600
    assert _user_version(backup) == 2
    assert not Path(f"{path}.bak-3").exists()


def _v3_then(fail_after: int) -> Callable[[apsw.Connection], None]:
    """Rung 2 -> 3's own statements, failing after the first ``fail_after`` of them."""

    def apply(connection: apsw.Connection) -> None:
        for statement in SCHEMA_V3[:fail_after]:
            connection.execute(statement).fetchall()
        raise RuntimeError(f"rung 2 -> 3 broke after {fail_after} statements")

    return apply


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("fail_after", [1, len(SCHEMA_V3) - 1])
def test_a_failure_halfway_through_rung_3_leaves_version_2(
    tmp_path: Path, version: int, fail_after: int
) -> None:
    path = _copy_of(tmp_path, version)
    ladder = (*DEFAULT_MIGRATIONS[:2], Migration(name="breaks", apply=_v3_then(fail_after)))
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path, migrations=ladder)
    assert info.value.code == "failed.store_migration"
    assert info.value.data == {"path": str(path), "from": 2, "to": 3}
    assert _user_version(path) == 2  # a version-1 store kept rung 1 -> 2, committed alone
    check = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in check.execute("SELECT name FROM sqlite_schema")}
    finally:
        check.close()
    assert not tables & {"links", "links_live", "links_target", "inactive_spaces"}
    # Nothing lost: the rows are those of the store as it was at version 2.
    (tmp_path / "reference").mkdir()
    reference = _copy_of(tmp_path / "reference", version)
    with SqliteStore.open(reference, migrations=DEFAULT_MIGRATIONS[:2]):
        pass
    assert _every_row(path) == _every_row(reference)
    # And the real ladder then takes it to 3.
    with SqliteStore.open(path) as store:
        assert store.describe()["schema_version"] == 3


def _breaks(connection: apsw.Connection) -> None:
    connection.execute("DELETE FROM memories")
    raise RuntimeError("rung 3 -> 4 broke halfway")


def test_a_failure_after_rung_3_keeps_version_3_and_every_row(tmp_path: Path) -> None:
    path = _copy_of(tmp_path, 2)
    SqliteStore.open(path).close()  # at version 3, the rows as rung 3 left them
    before = _every_row(path)
    ladder = (*DEFAULT_MIGRATIONS, Migration(name="breaks", apply=_breaks))
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path, migrations=ladder)
    assert info.value.data == {"path": str(path), "from": 3, "to": 4}
    assert _user_version(path) == 3
    assert _every_row(path, tables=list(before)) == before


@pytest.mark.parametrize("version", [1, 2])
def test_upgraded_stores_link_and_serve_as_before(tmp_path: Path, version: int) -> None:
    path = _copy_of(tmp_path, version)
    tokens = json.loads((FIXTURES / f"store-v{version}.json").read_text())
    with SqliteStore.open(path) as store:
        app = App(store=store, clock=FixedClock())
        codex = LocalClient(app, resolve_token(app, tokens["codex_token"], unknown=()))
        assert codex.call("memory.get", {"id": "m1"})["revision"] == 3
        newer = codex.call(
            "memory.add",
            {
                "space": "project/venom-std",
                "content": "venom-std pins Zig 0.18 now.",
                "supersedes": ["m1"],
            },
        )["id"]
        related = codex.call("memory.related", {"id": "m1"})["links"]
        assert [(r["id"], r["relation"], r["direction"]) for r in related] == [
            (newer, "supersedes", "in")
        ]
        assert codex.call("memory.get", {"id": "m1"})["superseded_by"] == [newer]
