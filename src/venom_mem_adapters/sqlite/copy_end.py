"""The SQLite store as either end of ``store copy`` (copy/ends.py, docs/adr/0041).

The tables are the catalog's (``pragma_table_list``): every ordinary table but SQLite's own
(``sqlite_sequence``) and the FTS5 table with its shadow tables, which the ``memories``
triggers fill as rows are inserted. ID counters are ``sqlite_sequence`` (AUTOINCREMENT's
highest ID ever drawn, so a purged ID is not drawn again on the copy either). Each end reads
and writes on a connection of its own: a source in one read snapshot, a target in one
``BEGIN IMMEDIATE`` transaction, under the target's store lock, so no daemon serves it meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from venom_mem_core.errors import VenomError
from venom_mem_core.ports import ERASE_PENDING

from ..copy.digest import as_text
from ..copy.ends import CopyTarget, CopyWriter, Table
from .connection import open_connection, transaction
from .errors import translated
from .lock import StoreLock
from .migrations import DEFAULT_MIGRATIONS, inspect_store, migrate
from .paths import check_private_file, create_private_file, ensure_private_dir

if TYPE_CHECKING:
    from venom_mem_core.ports import Store

__all__ = ["source", "target"]

_BATCH = 1000


def _name(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class SqliteEnd:
    """One SQLite store inside the transaction the caller opened on ``connection``."""

    engine = "sqlite"
    own_meta = frozenset({ERASE_PENDING})

    def __init__(self, connection: apsw.Connection, where: str) -> None:
        self._connection = connection
        self.where = where

    def _all(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        with translated(self.where):
            return [tuple(row) for row in self._connection.execute(sql, params)]

    def schema_version(self) -> int:
        return int(self._connection.pragma("user_version"))

    def tables(self) -> dict[str, Table]:
        names = self._all(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'"
            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
        found = {}
        for (name,) in names:
            info = self._all("SELECT name, pk FROM pragma_table_info(?)", (name,))
            columns = tuple(sorted(str(column) for column, _ in info))
            key = tuple(str(c) for c, pk in sorted(info, key=lambda r: int(str(r[1]))) if pk)
            refs = self._all('SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)', (name,))
            found[str(name)] = Table(
                name=str(name),
                columns=columns,
                key=key or columns,
                references=frozenset(str(r) for (r,) in refs),
            )
        return found

    def rows(self, table: Table) -> Iterator[tuple[object, ...]]:
        columns = ", ".join(map(_name, table.columns))
        order = ", ".join(map(_name, table.key))
        with translated(self.where):
            cursor = self._connection.execute(
                f"SELECT {columns} FROM {_name(table.name)} ORDER BY {order}"
            )
            for row in cursor:
                yield tuple(row)

    def count(self, table: Table) -> int:
        return int(str(self._all(f"SELECT count(*) FROM {_name(table.name)}")[0][0]))

    def _has_sequence(self) -> bool:
        return bool(self._all("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_sequence'"))

    def counters(self) -> dict[str, int]:
        if not self._has_sequence():
            return {}
        rows = self._all("SELECT name, seq FROM sqlite_sequence ORDER BY name")
        return {str(name): int(str(seq)) for name, seq in rows if int(str(seq)) > 0}

    # -- as a target -------------------------------------------------------------------

    def insert(self, table: Table, rows: Iterable[Sequence[object]]) -> None:
        columns = ", ".join(map(_name, table.columns))
        marks = ", ".join("?" * len(table.columns))
        sql = f"INSERT INTO {_name(table.name)} ({columns}) VALUES ({marks})"
        batch: list[Sequence[object]] = []
        with translated(self.where):
            for row in rows:
                batch.append(tuple(map(as_text, row)))
                if len(batch) == _BATCH:
                    self._connection.executemany(sql, batch)
                    batch.clear()
            if batch:
                self._connection.executemany(sql, batch)

    def delete_meta(self, keep: frozenset[str]) -> None:
        marks = ", ".join("?" * len(keep))
        with translated(self.where):
            self._connection.execute(f"DELETE FROM meta WHERE key NOT IN ({marks})", tuple(keep))

    def set_counters(self, counters: Mapping[str, int]) -> None:
        if not self._has_sequence():
            return
        with translated(self.where):
            for name, seq in counters.items():
                self._connection.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
                self._connection.execute(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (name, seq)
                )

    def derive(self) -> None:
        """Nothing to do: the ``memories`` triggers indexed each live memory as it went in."""


@contextmanager
def source(store: Store) -> Iterator[SqliteEnd]:
    """The daemon's store, in one read snapshot on a read-only connection of its own."""
    path = Path(str(getattr(store, "path", "")))
    if not path.is_absolute():
        raise VenomError("failed.internal", "store copy: the daemon's store is not SQLite")
    connection = open_connection(path, readonly=True)
    try:
        with transaction(connection, str(path), immediate=False):
            yield SqliteEnd(connection, str(path))
    finally:
        connection.close()


class SqliteTarget:
    """The SQLite file at ``path``, held under its store lock until closed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self.supported = len(DEFAULT_MIGRATIONS)
        self._connection: apsw.Connection | None = None

    def schema_version(self) -> int:
        if not self.path.exists():
            return 0
        return inspect_store(self.path, supported=self.supported)

    def _writer(self) -> apsw.Connection:
        if self._connection is None:
            if not self.path.exists():
                create_private_file(self.path)
            self._connection = open_connection(self.path, readonly=False)
        return self._connection

    def create_schema(self) -> None:
        migrate(self._writer(), self.path, DEFAULT_MIGRATIONS)

    @contextmanager
    def transaction(self) -> Iterator[CopyWriter]:
        connection = self._writer()
        with transaction(connection, self.where, immediate=True):
            yield SqliteEnd(connection, self.where)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


@contextmanager
def target(location: str) -> Iterator[CopyTarget]:
    """The SQLite store at ``location`` (an absolute path), created 0600 if missing."""
    path = Path(location)
    ensure_private_dir(path.parent)
    check_private_file(path)
    with StoreLock(path):
        end = SqliteTarget(path)
        try:
            yield end
        finally:
            end.close()
