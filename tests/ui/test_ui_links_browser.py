"""Links, superseded memories and space states in the web view, in a real browser
(docs/adr/0042): a memory's page says what supersedes it and lists its links both ways, and
the spaces page shows each space's state and deactivates and activates it, checked through
the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.browser import chromium_context
from tests.support.ui_server import run_ui

from .conftest import Seeded
from .test_ui_browser import Person


def test_a_person_sees_links_superseded_memories_and_space_states(
    fresh: Seeded, shots: Path
) -> None:
    world, pin = fresh.world, fresh.ids["pin"]
    codex = fresh.tokens["codex"]
    newer = world.ok(
        "memory", "add", "--space", "project/venom-std", "--content", "venom-std pins Zig 0.18.",
        "--supersedes", json.dumps([pin]), token=codex,
    )["id"]  # fmt: skip
    world.ok("memory", "link", "--from", pin, "--to", fresh.ids["markup"],
             "--relation", "relates_to", token=codex)  # fmt: skip
    world.ok("memory", "unlink", "--from", pin, "--to", fresh.ids["markup"],
             "--relation", "relates_to", token=codex)  # fmt: skip
    with chromium_context() as context, run_ui(world) as ui:
        me = Person(context, ui, shots)
        me.page.goto(ui.url)
        me.go(f"/memory/{pin}")
        me.shot("superseded-memory")
        assert f"Superseded by {newer}" in me.text(".superseded")
        rows = me.page.locator("table.links tr.link")
        assert rows.count() == 2
        assert me.text("table.links tr.link >> nth=0").startswith(f"{newer} supersedes this")
        unlinked = me.text("table.links tr.link.unlinked")
        assert unlinked.startswith(f"this relates to {fresh.ids['markup']}")
        assert "codex" in unlinked
        me.page.click(f"table.links a[href='/memory/{newer}']")
        me.page.wait_for_selector("h1 .id")
        assert me.text("h1 .id") == newer
        assert me.page.locator(".superseded").count() == 0
        assert me.text("table.links tr.link").startswith(f"this supersedes {pin}")

        me.go("/")
        row = "tr.space:has(a:text-is('project/venom-std'))"
        assert me.text(f"{row} td.state").startswith("active")
        me.page.click(f"{row} button[name=deactivate]")
        me.page.wait_for_selector(".notice >> text=inactive-project/venom-std")
        me.shot("space-deactivated")
        assert "inactive" in me.text(f"{row} td.state")
        states = {s["space"]: s.get("active", True) for s in world.ok("space", "list")["spaces"]}
        assert states["project/venom-std"] is False
        me.page.click(f"{row} button[name=activate]")
        me.page.wait_for_selector(".notice >> text=active-project/venom-std")
        states = {s["space"]: s.get("active", True) for s in world.ok("space", "list")["spaces"]}
        assert states["project/venom-std"] is True
        assert me.problems == []
