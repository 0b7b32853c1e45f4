"""SqliteStore: the Store port on one SQLite file, one writer and a few read-only readers.

RFC-0020 section 8's model (datasette's too): every write runs on the one writer connection,
one at a time behind a lock because the daemon writes from a worker thread, each in a
``BEGIN IMMEDIATE`` transaction that commits when the block exits cleanly and rolls back when
it raises. Reads borrow a read-only connection from a small pool and see one committed
snapshot (``BEGIN`` ... ``COMMIT``), so with WAL they go on while a write is held open.

The store does not take the store lock itself: the daemon takes :class:`StoreLock` after the
socket lock and before calling :meth:`SqliteStore.open`, as the spec orders them.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import apsw

from venom_mem_core.errors import VenomError
from venom_mem_core.ports import ERASE_PENDING, Store

from ..sql_store import SqlStore
from . import bm25
from .connection import open_connection, transaction
from .errors import is_disk_full, translated
from .migrations import DEFAULT_MIGRATIONS, Migration, inspect_store, migrate
from .paths import (
    check_private_file,
    create_private_file,
    ensure_private_dir,
    sidecar_paths,
)
from .tx import SqliteReadTx, SqliteWriteTx

if TYPE_CHECKING:
    from ..sql_vectors import SqlVectorRows

__all__ = ["SqliteStore"]

log = logging.getLogger("venom_mem.store")

# How long close() waits for a borrowed reader to come back before closing without it.
_CLOSE_WAIT_S = 5.0


class SqliteStore(SqlStore):
    """The Store port on SQLite. Build it with :meth:`open`."""

    ranks_like_fts5: Final = True  # it is FTS5 (venom_mem_core.ports.RanksLikeFts5)

    def __init__(
        self, path: Path, writer: apsw.Connection, readers: Sequence[apsw.Connection]
    ) -> None:
        self.path = path
        self._name = str(path)
        self._writer = writer
        # No readers: the writer's connection alone, opened exclusive (see open()).
        self.single_connection = not readers
        self._write_lock = threading.RLock()
        self._writing_thread: int | None = None
        self._readers = tuple(readers)
        self._pool: queue.SimpleQueue[apsw.Connection] = queue.SimpleQueue()
        for reader in self._readers:
            self._pool.put(reader)
        self._closed = False

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        migrations: Sequence[Migration] = DEFAULT_MIGRATIONS,
        readers: int = 4,
        vfs: str | None = None,
    ) -> SqliteStore:
        """Check the files, migrate (or create) the schema and open the connections.

        Order matters: permissions first, then the version is read without touching the
        file, and only a supported database is opened for writing. ``vfs`` names a registered
        SQLite VFS for every connection (tests use a fault-injecting shim); ``None`` is the
        default.
        """
        if readers < 1:
            raise ValueError("a store needs at least one reader connection")
        path = Path(path).absolute()
        ensure_private_dir(path.parent)
        exists = check_private_file(path)
        for sidecar in sidecar_paths(path):
            check_private_file(sidecar)
        if exists:
            inspect_store(path, supported=len(migrations), vfs=vfs)
        else:
            create_private_file(path)
        try:
            return cls._open(path, migrations, readers, vfs, exclusive=False)
        except VenomError as error:
            if not (exists and is_disk_full(error)):
                raise
        # A full disk with no -shm file yet (a clean stop removed it) can't give WAL's
        # shared memory a page. One exclusive connection needs none: reads are served, and
        # writes go through as soon as there is room again. Until a restart the store has
        # no reader pool, and nothing outside the daemon can read it.
        log.warning("%s: the disk is full; serving it on one exclusive connection", path)
        return cls._open(path, migrations, 0, vfs, exclusive=True)

    @classmethod
    def _open(
        cls,
        path: Path,
        migrations: Sequence[Migration],
        readers: int,
        vfs: str | None,
        *,
        exclusive: bool,
    ) -> SqliteStore:
        opened: list[apsw.Connection] = []
        try:
            writer = open_connection(path, readonly=False, vfs=vfs, exclusive=exclusive)
            opened.append(writer)
            migrate(writer, path, migrations)
            for sidecar in sidecar_paths(path):
                check_private_file(sidecar)
            for _ in range(readers):
                opened.append(open_connection(path, readonly=True, vfs=vfs))
            for connection in opened:
                bm25.register(connection)
        except BaseException:
            for connection in reversed(opened):
                connection.close()
            raise
        return cls(path, writer, opened[1:])

    # -- the unit of work ----------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise VenomError("failed.internal", f"the store {self._name} is closed")

    @contextmanager
    def read(self) -> Iterator[SqliteReadTx]:
        """One committed snapshot on a pooled read-only connection."""
        self._check_open()
        if self.single_connection:
            with self._read_on_writer() as tx:
                yield tx
            return
        connection = self._pool.get()
        try:
            with transaction(connection, self._name, immediate=False):
                yield SqliteReadTx(connection, self._name)
        finally:
            self._pool.put(connection)

    @contextmanager
    def _read_on_writer(self) -> Iterator[SqliteReadTx]:
        """A read on the one exclusive connection, between writes (or inside this thread's
        own write, which it then sees)."""
        with self._write_lock:
            if self._writing_thread == threading.get_ident():
                yield SqliteReadTx(self._writer, self._name)
                return
            with transaction(self._writer, self._name, immediate=False):
                yield SqliteReadTx(self._writer, self._name)

    @contextmanager
    def write(self) -> Iterator[SqliteWriteTx]:
        """One IMMEDIATE transaction on the writer, serialized with every other write."""
        self._check_open()
        if self._writing_thread == threading.get_ident():
            raise VenomError("failed.internal", "store.write() is not reentrant")
        with self._write_lock:
            self._writing_thread = threading.get_ident()
            try:
                with transaction(self._writer, self._name, immediate=True):
                    yield SqliteWriteTx(self._writer, self._name)
            finally:
                self._writing_thread = None

    def vector_rows(self) -> SqlVectorRows[SqliteReadTx]:
        """``memory_vectors`` for the embedding service (embeddings/vector_rows.py)."""
        from ..sql_vectors import SqlVectorRows  # numpy: only when embeddings are on
        from .vectors import SqliteVectors

        return SqlVectorRows(self, lambda tx: SqliteVectors(tx.connection))

    # -- maintenance ---------------------------------------------------------------------

    def erase_traces(self) -> None:
        """Checkpoint the WAL into the database and truncate it, so purged text is gone,
        then clear the purge's :data:`ERASE_PENDING` marker.

        The order is what makes a cut anywhere safe: the marker committed with the purge
        and is cleared only after the TRUNCATE checkpoint succeeded, so a crash before that
        leaves it for the next serve. Clearing it writes the meta page (no memory text) to
        the fresh WAL; a second checkpoint empties that too (a busy one is let go).

        A reader holding an old snapshot keeps its frames alive; after busy_timeout SQLite
        gives up with SQLITE_BUSY, which is ``unavailable.store_busy``.
        """
        self._check_open()
        try:
            self._checkpoint()
        except VenomError as error:
            if error.code == "unavailable.store_busy":
                # A caller that deleted outside a purge's transaction still gets the
                # obligation written down (a purge has it already).
                with suppress(VenomError):
                    self._note_erase_pending(True)
            raise
        self._note_erase_pending(False)
        try:
            self._checkpoint()
        except VenomError as error:
            # A reader arriving in between only keeps the marker's own page in the WAL; a
            # failing disk is reported like any other (the daemon stops writes on it).
            if error.code != "unavailable.store_busy":
                raise

    def _checkpoint(self) -> None:
        with self._write_lock, translated(self._name):
            self._writer.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)

    def _note_erase_pending(self, pending: bool) -> None:
        with self.read() as tx:
            noted = tx.get_meta(ERASE_PENDING) is not None
        if noted == pending:
            return
        with self.write() as tx:
            if pending:
                tx.set_meta(ERASE_PENDING, "1")
            else:
                tx.delete_meta(ERASE_PENDING)

    def describe(self) -> dict[str, Any]:
        with self.read() as tx:
            version = tx.schema_version()
        size = 0
        for name in (self.path, sidecar_paths(self.path)[0]):
            with suppress(FileNotFoundError):
                size += os.stat(name).st_size
        return {
            "path": self._name,
            "schema_version": version,
            "sqlite_version": apsw.sqlite_lib_version(),
            "engine": f"sqlite {apsw.sqlite_lib_version()}",
            "bytes": size,
        }

    def close(self) -> None:
        """Close the readers, checkpoint the WAL (best effort) and close the writer."""
        with self._write_lock:
            if self._closed:
                return
            self._closed = True
            for _ in self._readers:
                try:
                    self._pool.get(timeout=_CLOSE_WAIT_S).close()
                except queue.Empty:
                    break
            # Best effort: a WAL left behind is read, and checkpointed, by the next writer.
            with suppress(apsw.Error):
                self._writer.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
            self._writer.close()


if TYPE_CHECKING:  # mypy proves the adapter satisfies the port, signature by signature

    def _conforms(store: SqliteStore) -> Store:
        return store
