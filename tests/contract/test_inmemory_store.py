"""The store contract on InMemoryStore, which declares RanksLikeFts5: every case runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.testing import StoreContract, StoreFactory, opened_stores


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def store_factory(self) -> Iterator[StoreFactory]:
        with opened_stores(InMemoryStore) as factory:
            yield factory
