"""The store contract on PostgresStore: one fresh schema per store, on the throwaway
server that tests/support/postgres_server.py starts (skipped, with the reason, without one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.postgres_server import PostgresServer, postgres_server
from venom_mem_core.ports import Store
from venom_mem_core.testing import StoreContract, StoreFactory, opened_stores

__all__ = ["postgres_server"]  # the fixture, imported for pytest


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def store_factory(self, postgres_server: PostgresServer) -> Iterator[StoreFactory]:
        from venom_mem_adapters.postgres import PostgresStore

        def open_store() -> Store:
            store: Store = PostgresStore.open(
                postgres_server.url(postgres_server.create_database())
            )
            return store

        with opened_stores(open_store) as factory:
            yield factory
