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

It is a combination of mixins, one per area, which a subclass may also combine itself:
:class:`PortContract`, :class:`MemoryContract`, :class:`SearchContract`,
:class:`SessionContract`, :class:`PrincipalContract`, :class:`ContextContract` and
:class:`TextEditContract`. The cases
that pin SQLite FTS5's exact stemming, order and scores run only on a store that declares
:class:`~venom_mem_core.ports.RanksLikeFts5` and skip on others. docs/store-contract.md is
the guide. Install with ``pip install 'venom-mem[testing]'``.

Importing this package imports pytest; nothing else in the core does.
"""

from __future__ import annotations

import pytest

# Plain asserts in the suite get pytest's detailed messages, as in a test module.
pytest.register_assert_rewrite(
    *(
        f"{__name__}.{module}"
        for module in (
            "context",
            "memories",
            "port",
            "principals",
            "search",
            "sessions",
            "text_edits",
        )
    ),
    f"{__name__}.store",
    f"{__name__}.support",
)

from .context import ContextContract as ContextContract  # noqa: E402  # after the rewrite hook
from .memories import MemoryContract as MemoryContract  # noqa: E402
from .port import PortContract as PortContract  # noqa: E402
from .principals import PrincipalContract as PrincipalContract  # noqa: E402
from .search import SearchContract as SearchContract  # noqa: E402
from .sessions import SessionContract as SessionContract  # noqa: E402
from .store import StoreContract as StoreContract  # noqa: E402
from .support import Env as Env  # noqa: E402
from .support import StoreFactory as StoreFactory  # noqa: E402
from .support import StoreFixtures as StoreFixtures  # noqa: E402
from .support import opened_stores as opened_stores  # noqa: E402
from .support import requires_fts5_ranking as requires_fts5_ranking  # noqa: E402
from .text_edits import TextEditContract as TextEditContract  # noqa: E402

__all__ = [
    "ContextContract",
    "Env",
    "MemoryContract",
    "PortContract",
    "PrincipalContract",
    "SearchContract",
    "SessionContract",
    "StoreContract",
    "StoreFactory",
    "StoreFixtures",
    "TextEditContract",
    "opened_stores",
    "requires_fts5_ranking",
]
