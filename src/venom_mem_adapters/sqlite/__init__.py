"""The SQLite store adapter (RFC-0020 sections 6 and 8) on apsw.

Modules, one job each: ``paths`` (locations and permission checks), ``lock`` (the store
lock), ``connection`` (opening and configuring connections), ``schema`` (schema 1),
``migrations`` (the ladder), ``errors`` (apsw errors to VenomError), ``filters``
(predicates to SQL; rows are the shared ``venom_mem_adapters.sql``), ``match`` (FTS5 query text),
``fts_index`` and ``bm25`` (ranking over the readable rows), ``tx`` (the ReadTx/WriteTx
ports), ``store`` (the Store port), ``vectors`` (the embedding service's statements),
``doctor`` (its doctor checks) and ``backend`` (the StoreBackend the daemon is given).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from venom_mem_core.exports import lazy_exports

if TYPE_CHECKING:
    from .connection import open_connection as open_connection
    from .lock import StoreLock as StoreLock
    from .migrations import DEFAULT_MIGRATIONS as DEFAULT_MIGRATIONS
    from .migrations import Migration as Migration
    from .paths import default_store_path as default_store_path
    from .store import SqliteStore as SqliteStore

# Imported when first used (PEP 562): the store lock and the path checks, which a daemon of
# any store takes, must not load apsw with them.
__getattr__, __dir__ = lazy_exports(__name__, __file__)  # the names: the typed imports above
