"""The web view's memory page shows an imported memory's origin, as text (ADR 0040)."""

from __future__ import annotations

import json

from tests.support.daemon_env import World
from tests.support.ui_server import run_ui


def test_the_memory_page_shows_the_origin_escaped(world: World) -> None:
    origin = {
        "format": "server-memory",
        "id": "entity venom-std observation 1",
        "author": "<b>Ada</b>",
        "created": "2025-01-02T03:04:05Z",
    }
    added = world.ok("memory", "add", "--space", "user", "--content", "imported text",
                     "--origin", json.dumps(origin), token="@owner")  # fmt: skip
    plain = world.ok("memory", "add", "--space", "user", "--content", "native text",
                     token="@owner")  # fmt: skip
    with run_ui(world) as ui, ui.client() as client:
        html = client.get(f"/memory/{added['id']}").text
        assert (
            '<dt>Origin</dt><dd class="origin">server-memory entity venom-std observation 1,'
            " by &lt;b&gt;Ada&lt;/b&gt;, 2025-01-02T03:04:05Z"
        ) in html
        assert "<dt>origin</dt>" not in html  # not again among the unknown members
        assert "<dt>Origin</dt>" not in client.get(f"/memory/{plain['id']}").text
