"""The spaces page names the store's engine and its version, from store.status's ``engine``:
SQLite's library, or the PostgreSQL server a team store runs on (docs/adr/0028)."""

from __future__ import annotations

from collections.abc import Iterator

import apsw
import pytest

from tests.support.daemon_env import World, make_world
from tests.support.postgres_server import PostgresServer, postgres_server
from tests.support.ui_server import UI, run_ui

__all__ = ["postgres_server"]  # the fixture, imported for pytest


def _store_line(ui: UI) -> str:
    with ui.client() as client:
        page = client.get("/").text
    (line,) = [row for row in page.splitlines() if " · schema " in row]
    return line


def test_on_sqlite_it_names_the_sqlite_library(owner_ui: UI) -> None:
    line = _store_line(owner_ui)
    assert f" · sqlite {apsw.sqlite_lib_version()} · " in line


@pytest.fixture
def team_world(postgres_server: PostgresServer) -> Iterator[World]:
    options = postgres_server.fresh_url("ui").split("&options=", 1)[1]
    with make_world() as world:
        world.env.update(postgres_server.environ)
        url = f"postgresql:///postgres?options={options}"
        world.write_config(f'.{{ .store = .{{ .url = "{url}" }} }}')
        yield world


def test_on_postgres_it_names_the_server(team_world: World) -> None:
    status = team_world.ok("store", "status", token="@owner")
    assert status["engine"].startswith("postgresql ")
    with run_ui(team_world) as ui:
        line = _store_line(ui)
    assert f" · {status['engine']} · " in line
    assert "sqlite" not in line.lower()
