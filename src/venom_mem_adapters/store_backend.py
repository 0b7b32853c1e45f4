"""The store backend, chosen once from ``store`` in the config: SQLite (a file) or
PostgreSQL (a database several daemons share, docs/adr/0028).

:func:`backend_for` is the one place that asks which; everything else asks the
:class:`StoreBackend` it returns: open the store, its doctor checks, how to read its write
errors (:meth:`StoreBackend.is_disk_full`, :meth:`StoreBackend.latches`), whether other
daemons write it too, and the bridge that relays their events. Each backend lives in its own
package (``sqlite/backend.py``, ``postgres/backend.py``), the only packages that import apsw
or psycopg; this module imports neither, and imports the chosen package only when called.

Where a store's files are on this machine (the file, or a PostgreSQL store's local anchor for
its lock, record and socket) is ``runtime_paths.default_store_path``: clients need it on the
``--json`` path, which must not import a backend.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from venom_mem_core.errors import VenomError

if TYPE_CHECKING:
    from venom_mem_core.config import StoreConfig
    from venom_mem_core.ports import Store

    from .daemon.event_log import EventLog
    from .health import Check, Inputs, VectorCounts

__all__ = ["EventsBridge", "StoreBackend", "StoreExam", "backend_for"]


class EventsBridge(Protocol):
    """Relays this daemon's events to the other daemons of a shared store, and theirs here."""

    def start(self) -> None: ...

    def after_relisten(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` each time the listener is back after losing the store."""

    def close(self) -> None: ...


class StoreExam(Protocol):
    """What a backend's doctor found: its store checks (``store.open``, ``store.schema`` and
    its own), a way to count vectors in the store (``None``: it can't be read), and the
    store's own files on this machine, for store.permissions."""

    @property
    def checks(self) -> list[Check]: ...

    @property
    def vectors(self) -> VectorCounts | None: ...

    @property
    def files(self) -> tuple[Path, ...]: ...


class StoreBackend(Protocol):
    """One kind of store, as the daemon's start-up, doctor and writer use it."""

    @property
    def name(self) -> str:
        """``sqlite`` or ``postgres``."""

    @property
    def shared(self) -> bool:
        """Other daemons write this store too (its clients and vectors can change under us)."""

    def open(self) -> Store:
        """Open (and migrate) the store. The caller holds the store lock."""

    def examine(
        self, inputs: Inputs, store: Store | None, *, vectors: bool
    ) -> AbstractContextManager[StoreExam]:
        """Doctor's look at the store, blocking; ``store`` is the daemon's own (PostgreSQL
        reads through it, SQLite opens a read-only connection of its own). ``vectors``: also
        give a way to count them (embeddings are on). Closes what it opened on exit."""

    def is_disk_full(self, error: VenomError) -> bool:
        """A write failed for want of space: writes wait for room, then resume."""

    def latches(self, error: VenomError) -> bool:
        """After this write failure, writes are refused until a restart (an fsync that failed
        once may have lied). Not asked for a full disk."""

    def events_bridge(self, events: EventLog) -> EventsBridge | None:
        """The relay of other daemons' events into ``events``; ``None`` for a store no other
        daemon writes."""


def backend_for(store: StoreConfig, path: Path) -> StoreBackend:
    """The backend ``store`` names: the SQLite file at ``path``, or the PostgreSQL database
    of ``store.url`` (``path`` is then this machine's anchor for it). Its return type is
    where mypy holds each backend to the protocol."""
    if not store.url:
        from .sqlite.backend import SqliteBackend

        return SqliteBackend(path)
    try:
        from .postgres.backend import PostgresBackend
    except ImportError:
        raise VenomError(
            "failed.store",
            "store.url names a PostgreSQL database, but psycopg is not installed",
            {"fix": "pip install 'venom-mem[postgres]'"},
        ) from None
    return PostgresBackend(store.url, path)
