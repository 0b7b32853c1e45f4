"""What every part of the store contract shares: the fixtures, an app on the store, callers.

:class:`StoreFixtures` is the abstract base of every mixin: a subclass supplies
``store_factory``, a callable that opens a fresh, empty store on every call and closes them
all at teardown (:func:`opened_stores` does the closing). The suite builds ``store`` and
``env`` from it, and a MEM-06 case calls it twice (one store with readable and unreadable
rows, one with the readable rows alone, which must rank alike).

:func:`requires_fts5_ranking` skips a case on a store that doesn't declare
:class:`~venom_mem_core.ports.RanksLikeFts5`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import attrs
import pytest

from ..clock import FixedClock
from ..errors import VenomError
from ..local import LocalClient
from ..ports import RanksLikeFts5, Store
from ..records import Grant, Memory, Principal, Provenance
from ..usecases.app import App
from ..usecases.principals import OWNER, unknown_principal
from ..usecases.settings import MemorySettings

__all__ = [
    "FIX",
    "G1",
    "G2",
    "G3",
    "READ_ALL",
    "TOKEN_RE",
    "UNKNOWN",
    "WRITE_ALL",
    "Env",
    "StoreFactory",
    "StoreFixtures",
    "draft",
    "fails",
    "ids",
    "list_ids",
    "opened_stores",
    "ranks_like_fts5",
    "requires_fts5_ranking",
    "search_ids",
]

StoreFactory = Callable[[], Store]

READ_ALL = Grant(right="read", scope="*")
WRITE_ALL = Grant(right="write", scope="*")
G1 = Principal(id="g1", label="claude-code", grants=(READ_ALL, WRITE_ALL))
G2 = Principal(id="g2", label="codex", grants=(READ_ALL, WRITE_ALL))
G3 = Principal(id="g3", grants=(Grant(right="write", scope="space:a"),))
UNKNOWN = unknown_principal((READ_ALL,))

TOKEN_RE = re.compile(r"^vnt1\.venom-mem\.g[1-9][0-9]*\.[A-Za-z0-9_-]{43}$")
FIX = "venom-mem whoami --json  # set VENOM_MEM_TOKEN to a client token"


@contextmanager
def opened_stores(open_store: Callable[[], Store]) -> Iterator[StoreFactory]:
    """A factory that remembers every store it opened, and closes them all on exit."""
    opened: list[Store] = []

    def factory() -> Store:
        store = open_store()
        opened.append(store)
        return store

    try:
        yield factory
    finally:
        for store in reversed(opened):
            store.close()


@attrs.define
class Env:
    """An app on one store with a clock that moves 1 ms per reading, and its callers."""

    app: App
    clock: FixedClock

    @classmethod
    def on(cls, store: Store, settings: MemorySettings | None = None) -> Env:
        clock = FixedClock(step=timedelta(milliseconds=1))
        app = App(store=store, clock=clock, settings=settings or MemorySettings())
        return cls(app=app, clock=clock)

    def as_(self, who: Principal) -> LocalClient:
        return LocalClient(self.app, who)

    @property
    def owner(self) -> LocalClient:
        return self.as_(OWNER)

    @property
    def g1(self) -> LocalClient:
        return self.as_(G1)

    @property
    def g2(self) -> LocalClient:
        return self.as_(G2)

    @property
    def g3(self) -> LocalClient:
        return self.as_(G3)

    @property
    def unknown(self) -> LocalClient:
        return self.as_(UNKNOWN)

    def add(self, content: str, space: str = "user", **params: Any) -> str:
        """Add as g1 and return the new ID."""
        result = self.g1.call("memory.add", {"space": space, "content": content, **params})
        assert result["changed"] is True, result
        return str(result["id"])

    def snapshot(self) -> dict[str, Any]:
        """Everything a caller could see change, as owner."""
        return {
            "memories": self.owner.call("memory.list", {"include_deleted": True, "limit": 200}),
            "spaces": self.owner.call("space.list"),
            "sessions": self.owner.call("session.list", {"limit": 200}),
        }


def fails(
    client: LocalClient,
    verb: str,
    params: Mapping[str, Any] | None,
    code: str,
    param: str | None = None,
) -> VenomError:
    """Call, expect ``code`` (and ``data.param`` when given), return the error."""
    with pytest.raises(VenomError) as caught:
        client.call(verb, params)
    error = caught.value
    assert error.code == code, f"{verb} {params!r}: expected {code}, got {error!r}"
    if param is not None:
        assert error.data.get("param") == param, f"{verb}: expected param {param}, {error!r}"
    return error


def ids(results: list[dict[str, Any]]) -> list[str]:
    return [str(hit["id"]) for hit in results]


def search_ids(client: LocalClient, query: str, **params: Any) -> list[str]:
    return ids(client.call("memory.search", {"query": query, **params})["results"])


def list_ids(client: LocalClient, **params: Any) -> list[str]:
    return ids(client.call("memory.list", params)["memories"])


def draft(content: str, space: str = "user") -> Memory:
    """A memory row for the port-level tests; the store assigns its ID."""
    who = Provenance(principal="owner", label="owner")
    return Memory(
        id=0,
        space=space,
        kind="note",
        content=content,
        content_sha256=hashlib.sha256(content.encode()).digest(),
        author=who,
        updated_by=who,
        created="2026-11-09T10:00:00.000Z",
        updated="2026-11-09T10:00:00.000Z",
    )


def ranks_like_fts5(store: Store) -> bool:
    """Whether ``store`` declares :class:`~venom_mem_core.ports.RanksLikeFts5`."""
    return isinstance(store, RanksLikeFts5) and store.ranks_like_fts5 is True


def requires_fts5_ranking(store: Store) -> None:
    """Skip the running case unless ``store`` declares
    :class:`~venom_mem_core.ports.RanksLikeFts5`: the case pins SQLite FTS5's own stemming,
    order or scores, which a store with a ranking of its own need not match."""
    if not ranks_like_fts5(store):
        pytest.skip(
            f"{type(store).__name__} does not declare RanksLikeFts5: this case checks SQLite"
            " FTS5's exact terms, order and scores"
        )


class StoreFixtures:
    """The fixtures every mixin of the contract uses; a subclass supplies ``store_factory``."""

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        raise NotImplementedError(
            f"{type(self).__name__} must provide a store_factory fixture (see opened_stores)"
        )

    @pytest.fixture
    def store(self, store_factory: StoreFactory) -> Store:
        return store_factory()

    @pytest.fixture
    def env(self, store: Store) -> Env:
        return Env.on(store)
