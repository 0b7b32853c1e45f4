"""The SQLite store as a :class:`~venom_mem_adapters.store_backend.StoreBackend`: one file,
one daemon, nobody else writing it."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from venom_mem_core.errors import VenomError

from .errors import is_disk_full
from .store import SqliteStore

if TYPE_CHECKING:
    from venom_mem_core.ports import Store

    from ..health import Inputs
    from .doctor import SqliteExam

__all__ = ["SqliteBackend"]


class SqliteBackend:
    """The SQLite file at ``path``."""

    name = "sqlite"
    shared = False

    def __init__(self, path: Path) -> None:
        self.path = path

    def open(self) -> SqliteStore:
        return SqliteStore.open(self.path)

    def examine(
        self, inputs: Inputs, store: Store | None, *, vectors: bool
    ) -> AbstractContextManager[SqliteExam]:
        from . import doctor  # only doctor's call: a daemon's start doesn't load it

        return doctor.examine(inputs, vectors=vectors)  # doctor's own read-only connection

    def is_disk_full(self, error: VenomError) -> bool:
        return is_disk_full(error)

    def latches(self, error: VenomError) -> bool:
        """RFC-0020's rule: after an I/O failure or corruption an fsync may have lied, so
        writes stop until a restart; a full disk is the exception, since the kernel refused
        the bytes (docs/reliability.md)."""
        return error.code == "failed.store" and not is_disk_full(error)

    def events_bridge(self, events: object) -> None:
        return None  # this daemon is the file's only writer
