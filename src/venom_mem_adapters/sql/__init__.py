"""The SQL layer both SQL stores share: what ``sqlite/`` and ``postgres/`` build on.

Modules, one job each, private to the package: ``_errors`` (a driver's errors as
VenomErrors), ``_filters`` (filter predicates to SQL, for a dialect), ``_rows`` (records to
rows and back), ``_tx`` (the ReadTx/WriteTx statements
written once, in a dialect's placeholders), ``_store`` (the store's units of work) and
``_vectors`` (the embedding service's rows; numpy). A store imports the names below from
the package; each is imported when first used, so a store without embeddings never loads
numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from venom_mem_core.exports import lazy_exports

if TYPE_CHECKING:
    from ._errors import translating as translating
    from ._filters import Dialect as Dialect
    from ._filters import Predicate as Predicate
    from ._filters import SqlFilters as SqlFilters
    from ._rows import MEMORY_COLUMNS as MEMORY_COLUMNS
    from ._rows import memory_from_row as memory_from_row
    from ._rows import memory_values as memory_values
    from ._store import SqlStore as SqlStore
    from ._tx import MEMORY as MEMORY
    from ._tx import Row as Row
    from ._tx import SqlReadTx as SqlReadTx
    from ._tx import SqlWriteTx as SqlWriteTx
    from ._tx import assignments as assignments
    from ._tx import narrows as narrows
    from ._tx import only_live as only_live
    from ._tx import placeholders as placeholders
    from ._vectors import LOAD_COLUMNS as LOAD_COLUMNS
    from ._vectors import SqlVectorRows as SqlVectorRows
    from ._vectors import SqlVectors as SqlVectors

__getattr__, __dir__ = lazy_exports(__name__, __file__)  # the names: the typed imports above
