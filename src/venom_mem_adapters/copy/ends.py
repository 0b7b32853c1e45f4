"""What a store gives ``store copy`` (docs/adr/0041): its tables from its own catalog, their
rows in key order, its ID counters, and, as a target, the writes. Each backend's package
implements both (``sqlite/copy_end.py``, ``postgres/copy_end.py``); nothing here names a
table, so a table a later schema adds is copied with no change here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import attrs

__all__ = ["CopyReader", "CopyTarget", "CopyWriter", "Table", "in_reference_order"]

Row = Sequence[object]


@attrs.frozen(kw_only=True)
class Table:
    """A table as its store's catalog describes it: columns sorted by name (the order rows
    are read, written and hashed in), its primary key (the order rows are read in) and the
    tables its foreign keys point at."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]
    references: frozenset[str] = frozenset()


class CopyReader(Protocol):
    """One store, read inside one snapshot (a source) or one transaction (a target)."""

    @property
    def engine(self) -> str:
        """``sqlite`` or ``postgres``."""

    @property
    def where(self) -> str:
        """The store, as messages name it (a path, a URL without secrets)."""

    @property
    def own_meta(self) -> frozenset[str]:
        """``meta`` keys this kind of store keeps for itself (its schema version, its mark,
        its counters): never copied, never hashed."""

    def schema_version(self) -> int: ...

    def tables(self) -> dict[str, Table]:
        """The store's data tables, from its catalog: not its full-text index, which the
        target rebuilds from the memories it is given."""

    def rows(self, table: Table) -> Iterator[Row]:
        """Every row, ``table.columns`` in order, in ``table.key`` order, streamed."""

    def count(self, table: Table) -> int: ...

    def counters(self) -> dict[str, int]:
        """The highest ID each table has ever drawn (a purged one included), by table; a
        table that has drawn none is absent."""


class CopyWriter(CopyReader, Protocol):
    """A target inside its one transaction."""

    def insert(self, table: Table, rows: Iterable[Row]) -> None: ...

    def delete_meta(self, keep: frozenset[str]) -> None:
        """Delete every ``meta`` row but those keyed in ``keep`` (what the target's own
        migrations wrote there, before the source's are written)."""

    def set_counters(self, counters: Mapping[str, int]) -> None: ...

    def derive(self) -> None:
        """What the target derives from the rows once they are in: its full-text index of the
        live memories (if inserting them did not), and what tells a daemon already serving
        it to read its clients again."""


class CopyTarget(Protocol):
    """A target store before its transaction: its version (0: nothing there yet)."""

    @property
    def where(self) -> str: ...

    @property
    def supported(self) -> int:
        """The schema version this venom-mem's migrations create."""

    def schema_version(self) -> int: ...

    def create_schema(self) -> None:
        """Run the target's own migrations (an empty target only)."""

    def transaction(self) -> AbstractContextManager[CopyWriter]:
        """One transaction: committed when the block exits cleanly, else rolled back."""


def in_reference_order(tables: Mapping[str, Table]) -> list[Table]:
    """``tables`` with each after every table it references (a table referencing itself
    is fine: its rows go in key order, a parent's ID below its child's); by name among
    equals, so both sides list them alike."""
    done: list[Table] = []
    placed: set[str] = set()
    pending = dict(sorted(tables.items()))
    while pending:
        ready = [t for t in pending.values() if (t.references - {t.name}) & tables.keys() <= placed]
        if not ready:
            raise ValueError(f"the tables' foreign keys form a cycle: {sorted(pending)}")
        for table in ready:
            done.append(table)
            placed.add(table.name)
            del pending[table.name]
    return done
