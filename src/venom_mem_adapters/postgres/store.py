"""PostgresStore: the Store port on one PostgreSQL database, shared by several daemons.

Every transaction runs on a connection borrowed from a psycopg pool. A read is one
``REPEATABLE READ READ ONLY`` transaction, so it sees one committed snapshot; a write is one
``READ COMMITTED`` transaction that commits when the block exits cleanly and rolls back when
it raises, and takes the row and advisory locks that tx.py describes, so daemons on other
machines writing the same rows queue behind each other the way SQLite's one writer would
have them. A lock not had within 5 s (``lock_timeout``) is ``unavailable.store_busy``.

Credentials come from libpq alone (url.py); the store names its database by its public URL.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Final

import psycopg
from psycopg_pool import ConnectionPool

from venom_mem_core.errors import VenomError
from venom_mem_core.ports import ERASE_PENDING, Store

from ..sql_store import SqlStore
from ..store_url import check_url, public_url
from .errors import translated
from .migrations import DEFAULT_MIGRATIONS, Migration, migrate
from .tx import PgReadTx, PgWriteTx

if TYPE_CHECKING:
    from ..sql_vectors import SqlVectorRows

__all__ = ["PostgresStore"]

log = logging.getLogger("venom_mem.store")

Connection = psycopg.Connection[tuple[Any, ...]]
LOCK_TIMEOUT_MS = 5000  # SQLite's busy_timeout
_OPEN_TIMEOUT_S = 10.0
# The tables a purge leaves dead tuples in; erase_traces vacuums them.
_PURGED_TABLES = ("memories", "memory_versions", "memory_fts", "memory_fts_terms", "memory_vectors")


def _configure(connection: Connection) -> None:
    connection.autocommit = True
    connection.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
    connection.execute("SET application_name = 'venom-mem'")


class PostgresStore(SqlStore):
    """The Store port on PostgreSQL. Build it with :meth:`open`."""

    # FTS5's terms, bm25 and snippets through venom_mem_core.fts (postgres/fts.py), so the
    # contract's exact-ranking cases run here too (venom_mem_core.ports.RanksLikeFts5).
    ranks_like_fts5: Final = True

    def __init__(self, url: str, pool: ConnectionPool[Connection]) -> None:
        self.url = public_url(url)
        self._pool = pool
        self._writing = threading.local()
        self._closed = False

    @classmethod
    def open(
        cls,
        url: str,
        *,
        migrations: Sequence[Migration] = DEFAULT_MIGRATIONS,
        connections: int = 6,
    ) -> PostgresStore:
        """Check the URL, connect, migrate (or create) the schema."""
        check_url(url)
        where = public_url(url)
        with translated(where), psycopg.connect(url, autocommit=True) as connection:
            migrate(connection, where, migrations)
        pool: ConnectionPool[Connection] = ConnectionPool(
            url,
            min_size=1,
            max_size=connections,
            configure=_configure,
            open=False,
            name="venom-mem",
        )
        try:
            pool.open(wait=True, timeout=_OPEN_TIMEOUT_S)
        except Exception as exc:
            pool.close()
            raise VenomError(
                "failed.store", f"store {where}: cannot connect: {exc}", {"path": where}
            ) from None
        return cls(url, pool)

    def _check_open(self) -> None:
        if self._closed:
            raise VenomError("failed.internal", f"the store {self.url} is closed")

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[Connection]:
        """BEGIN ... COMMIT in pipeline mode: statements whose results nothing reads (BEGIN,
        the postings, versions, COMMIT) travel with the next one that is read, so a write
        costs a few round trips to the server rather than one per statement."""
        with self._pool.connection() as connection:
            try:
                with translated(self.url), connection.pipeline():
                    connection.execute(begin)
                    yield connection
                    connection.execute("COMMIT")
            except BaseException:
                with suppress(psycopg.Error):  # the original error is the one to report
                    connection.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[PgReadTx]:
        self._check_open()
        with self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") as connection:
            yield PgReadTx(connection, self.url)

    @contextmanager
    def write(self) -> Iterator[PgWriteTx]:
        self._check_open()
        if getattr(self._writing, "active", False):
            raise VenomError("failed.internal", "store.write() is not reentrant")
        self._writing.active = True
        try:
            with self._transaction("BEGIN ISOLATION LEVEL READ COMMITTED") as connection:
                yield PgWriteTx(connection, self.url)
        finally:
            self._writing.active = False

    # -- what several daemons share ------------------------------------------------------

    def clients_version(self) -> str:
        """A counter every client.add or removal bumps in its own transaction: a daemon
        that sees it move reloads its registry before trusting a token (docs/adr/0028)."""
        self._check_open()
        with self._pool.connection() as connection, translated(self.url):
            row = connection.execute(
                "SELECT value FROM meta WHERE key = 'clients_version'"
            ).fetchone()  # one statement, one round trip: it runs before every token's request
        return str(row[0]) if row else "0"

    def vector_rows(self) -> SqlVectorRows[PgReadTx]:
        """``memory_vectors`` for the embedding service (embeddings/vector_rows.py)."""
        from ..sql_vectors import SqlVectorRows  # numpy: only when embeddings are on
        from .vectors import PgVectors

        return SqlVectorRows(self, lambda tx: PgVectors(tx.connection))

    # -- maintenance ---------------------------------------------------------------------

    def erase_traces(self) -> None:
        """VACUUM the tables a purge touches, then clear :data:`ERASE_PENDING`.

        This is all a client of a PostgreSQL server can do, and less than SQLite's
        secure_delete and checkpoint give: VACUUM makes the dead tuples' space reusable but
        does not zero it, WAL segments keep the text until they are recycled, and backups
        and replicas keep it for as long as they are kept (doctor warns; docs/adr/0028).
        """
        self._check_open()
        with self._pool.connection() as connection, translated(self.url):
            for table in _PURGED_TABLES:
                connection.execute(f"VACUUM {table}")
        with self.write() as tx:
            tx.delete_meta(ERASE_PENDING)

    def describe(self) -> dict[str, Any]:
        with self.read() as tx:
            version = tx.schema_version()
            row = tx.connection.execute(
                "SELECT pg_database_size(current_database()), current_setting('server_version')"
            ).fetchone()
        # "15.18 (Debian 15.18-1)": the version is the first word
        size, server = (int(row[0]), str(row[1]).split(" ")[0]) if row else (0, "")
        return {
            "path": self.url,
            "schema_version": version,
            "sqlite_version": "none",
            "postgres_version": server,
            "engine": f"postgresql {server}",
            "bytes": size,
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pool.close()


if TYPE_CHECKING:

    def _conforms(store: PostgresStore) -> Store:
        return store
