"""Which stores declare SharedPrincipals: the daemon asks a store's clients counter before
each token only when the store says several daemons share its clients (docs/adr/0028)."""

from __future__ import annotations

from pathlib import Path

from venom_mem_adapters.postgres import PostgresStore
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.ports import SharedPrincipals


def test_the_postgres_store_declares_shared_principals() -> None:
    assert issubclass(PostgresStore, SharedPrincipals)


def test_a_store_one_daemon_opens_does_not(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "store.db") as store:
        assert not isinstance(store, SharedPrincipals)
    assert not isinstance(InMemoryStore(), SharedPrincipals)
