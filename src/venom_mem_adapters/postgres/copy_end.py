"""The PostgreSQL store as either end of ``store copy`` (copy/ends.py, docs/adr/0041).

The tables are the catalog's (``pg_tables`` in the current schema) but the full-text index
fts.py derives from ``memories`` (``memory_fts`` and its postings), which the target rebuilds
from the memories it was given, as a write would. ID counters are the identity columns'
sequences (``pg_sequence_last_value``; a sequence only goes up, so a purged ID is not drawn
again). Rows go in with ``COPY``, which writes an identity column's given value. Each end
has a connection of its own, without the daemon's statement timeouts: a source in one
``REPEATABLE READ READ ONLY`` snapshot, a target in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from venom_mem_core.errors import VenomError
from venom_mem_core.fts import weighted_hits
from venom_mem_core.ports import ERASE_PENDING

from ..config import check_url, public_url
from ..copy.ends import CopyTarget, CopyWriter, Table
from ..sql import MEMORY_COLUMNS, memory_from_row
from . import fts
from .errors import translated
from .migrations import DEFAULT_MIGRATIONS, migrate, schema_version
from .store import PostgresStore, conninfo
from .tx import PgWriteTx, array_literal

if TYPE_CHECKING:
    from venom_mem_core.ports import Store

__all__ = ["source", "target"]

Connection = psycopg.Connection[tuple[Any, ...]]
INDEX_TABLES = frozenset({"memory_fts", "memory_fts_terms"})  # fts.py's, from memories
_BATCH = 1000
_cursors = iter(range(1 << 62))


class PostgresEnd:
    """One PostgreSQL store inside the transaction the caller opened on ``connection``."""

    engine = "postgres"
    own_meta = frozenset({"application_id", "schema_version", "clients_version", ERASE_PENDING})

    def __init__(self, connection: Connection, where: str) -> None:
        self._connection = connection
        self.where = where

    def _all(self, query: str | sql.Composed, params: Sequence[object] = ()) -> list[Any]:
        with translated(self.where):
            return self._connection.execute(query, tuple(params)).fetchall()

    def schema_version(self) -> int:
        return schema_version(self._connection, self.where)

    def tables(self) -> dict[str, Table]:
        names = self._all(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
            " ORDER BY tablename"
        )
        found = {}
        for (name,) in names:
            if name in INDEX_TABLES:
                continue
            columns = self._all(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass"
                " AND attnum > 0 AND NOT attisdropped",
                (name,),
            )
            key = self._all(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a"
                " ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)"
                " WHERE i.indrelid = %s::regclass AND i.indisprimary"
                " ORDER BY array_position(i.indkey, a.attnum)",
                (name,),
            )
            refs = self._all(
                "SELECT DISTINCT confrelid::regclass::text FROM pg_constraint"
                " WHERE conrelid = %s::regclass AND contype = 'f'",
                (name,),
            )
            ordered = tuple(sorted(str(c) for (c,) in columns))
            found[str(name)] = Table(
                name=str(name),
                columns=ordered,
                key=tuple(str(c) for (c,) in key) or ordered,
                references=frozenset(str(r).strip('"') for (r,) in refs),
            )
        return found

    def _select(self, table: Table) -> sql.Composed:
        return sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
            sql.SQL(", ").join(map(sql.Identifier, table.columns)),
            sql.Identifier(table.name),
            sql.SQL(", ").join(map(sql.Identifier, table.key)),
        )

    def rows(self, table: Table) -> Iterator[tuple[object, ...]]:
        with (
            translated(self.where),
            self._connection.cursor(name=f"venom_copy_{next(_cursors)}") as cursor,
        ):
            cursor.itersize = _BATCH
            cursor.execute(self._select(table))
            for row in cursor:
                yield tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)

    def count(self, table: Table) -> int:
        query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table.name))
        return int(self._all(query)[0][0])

    def _identities(self) -> dict[str, str]:
        """Each table's identity column, by table."""
        rows = self._all(
            "SELECT c.relname, a.attname FROM pg_attribute a"
            " JOIN pg_class c ON c.oid = a.attrelid"
            " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
            " AND a.attidentity <> '' AND NOT a.attisdropped"
        )
        return {str(table): str(column) for table, column in rows}

    def counters(self) -> dict[str, int]:
        found = {}
        for table, column in sorted(self._identities().items()):
            if table in INDEX_TABLES:
                continue
            (value,) = self._all(
                "SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, %s)::regclass)",
                (table, column),
            )[0]
            if value:
                found[table] = int(value)
        return found

    # -- as a target -------------------------------------------------------------------

    def insert(self, table: Table, rows: Iterable[Sequence[object]]) -> None:
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table.name), sql.SQL(", ").join(map(sql.Identifier, table.columns))
        )
        with (
            translated(self.where),
            self._connection.cursor() as cursor,
            cursor.copy(statement) as copy,
        ):
            for row in rows:
                copy.write_row(row)

    def delete_meta(self, keep: frozenset[str]) -> None:
        self._all_changed("DELETE FROM meta WHERE NOT (key = ANY (%s))", (sorted(keep),))

    def _all_changed(self, query: str, params: Sequence[object]) -> None:
        with translated(self.where):
            self._connection.execute(query, tuple(params))

    def set_counters(self, counters: Mapping[str, int]) -> None:
        identities = self._identities()
        for table, value in counters.items():
            if table in identities:
                self._all(
                    "SELECT setval(pg_get_serial_sequence(%s, %s), %s, true)",
                    (table, identities[table], value),
                )

    def derive(self) -> None:
        """Write each live memory's length and postings, the rows a write of it would
        (``PgWriteTx._indexed``, from the same ``fts.postings``), and bump
        ``clients_version``: a daemon already serving this database reads the copied
        clients at its next request (docs/adr/0028). A batch of memories at a time, each
        table's rows in one ``COPY`` (the lengths first: the postings reference them)."""
        PgWriteTx(self._connection, self.where)._clients_changed()
        query = sql.SQL("SELECT {} FROM memories WHERE deleted IS NULL ORDER BY id").format(
            sql.SQL(", ").join(map(sql.Identifier, MEMORY_COLUMNS))
        )
        with (
            translated(self.where),
            self._connection.cursor(name=f"venom_copy_{next(_cursors)}") as cursor,
        ):
            cursor.execute(query)
            while batch := cursor.fetchmany(_BATCH):
                lengths: list[tuple[int, int]] = []
                terms: list[tuple[object, ...]] = []
                for row in batch:
                    memory = memory_from_row(row)
                    length, postings = fts.postings(memory)
                    lengths.append((memory.id, length))
                    terms.extend(_posting_rows(memory.id, length, postings))
                self._copy_in("memory_fts", ("memory", "length"), lengths)
                self._copy_in("memory_fts_terms", _TERM_COLUMNS, terms)

    def _copy_in(
        self, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None:
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
        )
        with self._connection.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)


_TERM_COLUMNS = ("term", "memory", "title", "content", "tags", "length", "freq")


def _posting_rows(
    id: int, length: int, postings: Sequence[fts.Posting]
) -> Iterator[tuple[object, ...]]:
    """``memory_fts_terms``' rows of one memory, as ``PgWriteTx._indexed`` writes them (the
    positions as array literals: psycopg's list dumper costs more than the rest)."""
    for p in postings:
        hits = weighted_hits((len(p.title), len(p.content), len(p.tags)))
        positions = (array_literal(p.title), array_literal(p.content), array_literal(p.tags))
        yield (p.term, id, *positions, length, hits)


@contextmanager
def source(store: Store) -> Iterator[PostgresEnd]:
    """The daemon's store, in one snapshot on a connection of its own."""
    if not isinstance(store, PostgresStore):
        raise VenomError("failed.internal", "store copy: the daemon's store is not PostgreSQL")
    with translated(store.url), psycopg.connect(store._conninfo) as connection:
        connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        connection.read_only = True
        try:
            yield PostgresEnd(connection, store.url)
        finally:
            connection.rollback()


class PostgresTarget:
    """The database ``url`` names, on one autocommit connection (each transaction explicit)."""

    def __init__(self, connection: Connection, where: str) -> None:
        self._connection = connection
        self.where = where
        self.supported = len(DEFAULT_MIGRATIONS)

    def schema_version(self) -> int:
        return schema_version(self._connection, self.where)

    def create_schema(self) -> None:
        migrate(self._connection, self.where, DEFAULT_MIGRATIONS)

    @contextmanager
    def transaction(self) -> Iterator[CopyWriter]:
        with translated(self.where), self._connection.transaction():
            yield PostgresEnd(self._connection, self.where)


@contextmanager
def target(url: str) -> Iterator[CopyTarget]:
    check_url(url)
    where = public_url(url)
    with translated(where), psycopg.connect(conninfo(url), autocommit=True) as connection:
        yield PostgresTarget(connection, where)
