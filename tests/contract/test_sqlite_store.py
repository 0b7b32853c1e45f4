"""The store contract on SqliteStore: one database file per store, in the test's tmp_path."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from venom_mem_core.ports import Store
from venom_mem_core.testing import StoreContract, StoreFactory, opened_stores

sqlite = pytest.importorskip("venom_mem_adapters.sqlite")


class TestSqliteStore(StoreContract):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Iterator[StoreFactory]:
        numbers = itertools.count(1)

        def open_store() -> Store:
            store: Store = sqlite.SqliteStore.open(tmp_path / f"store-{next(numbers)}" / "store.db")
            return store

        with opened_stores(open_store) as factory:
            yield factory
