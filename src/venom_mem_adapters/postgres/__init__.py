"""The PostgreSQL store adapter: the same Store port on a database several daemons share
(docs/adr/0028). Needs the ``postgres`` extra (psycopg 3 and its pool).

Modules, one job each: ``url`` (store.url, credentials kept out; no psycopg), ``schema``
(RFC-0020 section 6 in PostgreSQL types), ``migrations`` (the ladder), ``errors`` (psycopg
errors to VenomError), ``filters`` (predicates), ``fts`` (tokens, postings and FTS5's bm25),
``tx`` (the ReadTx/WriteTx ports and their locks) and ``store`` (the Store port).
"""

from .migrations import DEFAULT_MIGRATIONS as DEFAULT_MIGRATIONS
from .migrations import Migration as Migration
from .store import PostgresStore as PostgresStore

__all__ = ["DEFAULT_MIGRATIONS", "Migration", "PostgresStore"]
