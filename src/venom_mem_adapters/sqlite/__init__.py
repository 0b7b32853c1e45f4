"""The SQLite store adapter (RFC-0020 sections 6 and 8) on apsw.

Modules, one job each: ``paths`` (locations and permission checks), ``lock`` (the store
lock), ``connection`` (opening and configuring connections), ``schema`` (schema 1),
``migrations`` (the ladder), ``errors`` (apsw errors to VenomError), ``bm25`` (ranking over
the readable rows), ``tx`` (the ReadTx/WriteTx ports), ``store`` (the Store port),
``vectors`` (the embedding service's statements), ``doctor`` (its doctor checks) and
``backend`` (the StoreBackend the daemon is given).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connection import open_connection as open_connection
    from .lock import StoreLock as StoreLock
    from .migrations import DEFAULT_MIGRATIONS as DEFAULT_MIGRATIONS
    from .migrations import Migration as Migration
    from .paths import default_store_path as default_store_path
    from .store import SqliteStore as SqliteStore

__all__ = [
    "DEFAULT_MIGRATIONS",
    "Migration",
    "SqliteStore",
    "StoreLock",
    "default_store_path",
    "open_connection",
]

# Imported when first used (PEP 562): the store lock and the path checks, which a daemon of
# any store takes, must not load apsw with them.
_EXPORTS = {
    "DEFAULT_MIGRATIONS": "migrations",
    "Migration": "migrations",
    "SqliteStore": "store",
    "StoreLock": "lock",
    "default_store_path": "paths",
    "open_connection": "connection",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
