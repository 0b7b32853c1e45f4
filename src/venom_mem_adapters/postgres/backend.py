"""The PostgreSQL store as a :class:`~venom_mem_adapters.store_backend.StoreBackend`: a
database several daemons share (docs/adr/0028), their events relayed by LISTEN/NOTIFY."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from venom_mem_core.errors import VenomError

from . import doctor
from .notify import EventBridge, RelayLog
from .store import PostgresStore

if TYPE_CHECKING:
    from venom_mem_core.ports import Store

    from ..health import Inputs

__all__ = ["PostgresBackend"]


class PostgresBackend:
    """The database ``url`` names; ``anchor`` is this machine's path for its lock, record and
    fallback socket (runtime_paths.default_store_path)."""

    name = "postgres"
    shared = True

    def __init__(self, url: str, anchor: Path) -> None:
        self.url = url
        self.anchor = anchor

    def open(self) -> PostgresStore:
        return PostgresStore.open(self.url)

    def examine(
        self, inputs: Inputs, store: Store | None, *, vectors: bool
    ) -> AbstractContextManager[doctor.PostgresExam]:
        return doctor.examine(inputs, store, vectors=vectors)  # through the daemon's own store

    def is_disk_full(self, error: VenomError) -> bool:
        return False  # the server's disk: its errors say so, and the daemon has no probe for it

    def latches(self, error: VenomError) -> bool:
        return error.code == "failed.store"

    def events_bridge(self, events: RelayLog) -> EventBridge:
        return EventBridge(self.url, events)
