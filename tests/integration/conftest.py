from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.daemon_env import World, make_world


@pytest.fixture
def world() -> Iterator[World]:
    """A fresh store, socket and config; its daemon is stopped afterwards."""
    with make_world() as w:
        yield w
