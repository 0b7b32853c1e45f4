from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conformance.harness import STORES, Rfc, rfc_on
from tests.support.postgres_server import PostgresServer, postgres_server

__all__ = ["postgres_server"]  # the fixture, imported for pytest


@pytest.fixture(params=STORES)
def rfc(request: pytest.FixtureRequest) -> Iterator[Rfc]:
    """Each store in turn, fresh, with a default config and nothing else set; the
    PostgreSQL one skips, with the reason, where tests/support/postgres_server.py can't
    start a server."""
    store = str(request.param)
    postgres: PostgresServer | None = None
    if store == "postgresql":
        postgres = request.getfixturevalue("postgres_server")
    with rfc_on(store, postgres) as found:
        yield found
