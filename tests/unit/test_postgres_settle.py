"""A COMMIT whose reply was lost across a server restart is settled by the row the write
left (docs/adr/0030): the restarted server may have given the transaction's ID again, so
``committed`` is believed only when that row carries the ID as its ``xmin``. Checked on a
real server, with the restart feigned by a start time that differs from the server's: each
of issue 28's writes that leaves a row says ``committed``; one that leaves none (a DELETE)
stays ``unknown``, which the caller gets as ``commit_unknown``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.support.postgres_server import PostgresServer, postgres_server
from venom_mem_adapters.postgres import PostgresStore
from venom_mem_adapters.postgres.connection import AnsweringConnection
from venom_mem_adapters.postgres.tx import PgWriteTx
from venom_mem_core.records import InactiveSpace, Provenance
from venom_mem_core.testing.support import Env

__all__ = ["postgres_server"]  # the fixture, imported for pytest

BY = Provenance(principal="g1", label="claude-code")
BEFORE_A_RESTART = "2000-01-01 00:00:00+00"


@pytest.fixture
def pg(postgres_server: PostgresServer) -> Iterator[tuple[PostgresStore, str]]:
    url = postgres_server.fresh_url()
    store = PostgresStore.open(url)
    try:
        env = Env.on(store)
        env.add("The CI runs on Ubuntu 22.04.")
        env.add("The CI runs on Ubuntu 24.04.")
        env.g1.call("memory.link", {"from": "m2", "to": "m1", "relation": "relates_to"})
        yield store, url
    finally:
        store.close()


def _settled(pg: tuple[PostgresStore, str], write: Callable[[PgWriteTx], None]) -> str | None:
    """Commit ``write``, then ask as the settle does after a restart."""
    store, url = pg
    with store.write() as tx:
        write(tx)
        row = tx._one("SELECT pg_current_xact_id()::text", ())  # the ID its BEGIN asked for
        assert row is not None
        began, witness = (str(row[0]), BEFORE_A_RESTART), tx.witness
    with AnsweringConnection.connect(url, autocommit=True) as probe:  # as the settle's
        return PostgresStore._xact_status(probe, began, 0, witness)


def _unlink(tx: PgWriteTx) -> None:
    link = tx.find_link(2, 1, "relates_to")
    assert link is not None
    tx.remove_link(link.id, "2026-12-03T19:00:00.000Z", BY)


def _deactivate(tx: PgWriteTx) -> None:
    tx.set_space_inactive(InactiveSpace(space="user", by=BY, since="2026-12-03T19:00:00.000Z"))


@pytest.mark.parametrize("write", [_unlink, _deactivate], ids=["unlink", "deactivate"])
def test_a_write_that_leaves_a_row_is_settled_committed(
    pg: tuple[PostgresStore, str], write: Callable[[PgWriteTx], None]
) -> None:
    assert _settled(pg, write) == "committed"


def test_an_activate_leaves_no_row_and_stays_unknown(pg: tuple[PostgresStore, str]) -> None:
    _settled(pg, _deactivate)
    assert _settled(pg, lambda tx: tx.set_space_active("user")) == "unknown"
