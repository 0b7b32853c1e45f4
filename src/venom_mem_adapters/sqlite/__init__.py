"""The SQLite store adapter (RFC-0020 sections 6 and 8) on apsw.

Modules, one job each: ``paths`` (locations and permission checks), ``lock`` (the store
lock), ``connection`` (opening and configuring connections), ``schema`` (schema 1),
``migrations`` (the ladder), ``errors`` (apsw errors to VenomError), ``filters``
(predicates to SQL; rows are the shared ``sql_rows``), ``match`` (FTS5 query text),
``fts_index`` and ``bm25`` (ranking over the readable rows), ``tx`` (the ReadTx/WriteTx
ports), ``vectors`` and ``store`` (the Store port).
"""

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
