"""The store contract on a deliberately plain store with a ranking of its own (plain_store.py).

It declares no RanksLikeFts5, so the cases that pin FTS5's exact ranking skip and every other
case runs. test_third_party_store.py shows the skips are exactly those and are needed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.contract.plain_store import PlainStore
from venom_mem_core.testing import StoreContract, StoreFactory, opened_stores


class TestPlainStore(StoreContract):
    @pytest.fixture
    def store_factory(self) -> Iterator[StoreFactory]:
        with opened_stores(PlainStore) as factory:
            yield factory
