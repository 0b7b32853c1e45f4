"""Test support that ships with the core, so any store can prove it keeps the contract.

:class:`StoreContract` is a pytest suite for the :class:`~venom_mem_core.ports.Store` port,
in the manner of zarr's ``StoreTests``: subclass it as ``class TestMyStore(StoreContract)``
and provide one fixture, ``store_factory``, a callable returning a fresh, empty store each
time it is called (the suite needs two stores for one test, MEM-06). Close what it opened when
the fixture tears down; :func:`opened_stores` does that for you::

    class TestInMemoryStore(StoreContract):
        @pytest.fixture
        def store_factory(self) -> Iterator[StoreFactory]:
            with opened_stores(InMemoryStore) as factory:
                yield factory

Importing this package imports pytest; nothing else in the core does.
"""

from __future__ import annotations

import pytest

# Plain asserts in the suite get pytest's detailed messages, as in a test module.
pytest.register_assert_rewrite(f"{__name__}.store_contract", f"{__name__}.context_contract")

from .store_contract import Env as Env  # noqa: E402  # after the rewrite hook, on purpose
from .store_contract import StoreContract as StoreContract  # noqa: E402
from .store_contract import StoreFactory as StoreFactory  # noqa: E402
from .store_contract import opened_stores as opened_stores  # noqa: E402

__all__ = ["Env", "StoreContract", "StoreFactory", "opened_stores"]
