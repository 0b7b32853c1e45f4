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


def _ids(me: Person, rows: str) -> list[str]:
    return [str(a.inner_text()) for a in me.page.query_selector_all(f"{rows} td:first-child a")]


def test_search_and_list_bring_superseded_memories_back_when_asked(
    fresh: Seeded, shots: Path
) -> None:
    """The web view's search and list leave a superseded memory out, as memory.search and
    memory.list do; "include superseded" brings it back, marked with what supersedes it,
    the same memories in the same order as the CLI's --include-superseded."""
    world, pin = fresh.world, fresh.ids["pin"]
    space = "project/venom-std"
    newer = world.ok(
        "memory", "add", "--space", space, "--content", "venom-std pins Zig 0.18 with .zigversion.",
        "--supersedes", json.dumps([pin]), token=fresh.tokens["codex"],
    )["id"]  # fmt: skip
    query = "venom-std pins zig"

    def cli(verb: str, *flags: str) -> list[str]:
        out = world.ok("memory", verb, *flags, token="@owner")
        return [h["id"] for h in out["results" if verb == "search" else "memories"]]

    with chromium_context() as context, run_ui(world) as ui:
        me = Person(context, ui, shots)
        me.page.goto(ui.url)
        me.go("/search")
        me.page.fill("input[name=q]", query)
        me.page.press("input[name=q]", "Enter")
        me.page.wait_for_selector("table.hits tr.hit")
        assert _ids(me, "table.hits tr.hit") == [newer] == cli("search", "--query", query)
        me.page.check("input[name=superseded]")
        me.page.click("form.search button[type=submit]")
        me.page.wait_for_selector("table.hits tr.hit.superseded")
        me.shot("search-include-superseded")
        assert "superseded=true" in me.page.url
        both = cli("search", "--query", query, "--include-superseded")
        assert sorted(both) == sorted([pin, newer])
        assert _ids(me, "table.hits tr.hit") == both
        assert _ids(me, "table.hits tr.hit.superseded") == [pin]
        marked = me.text("table.hits tr.hit.superseded .superseded-by")
        assert marked == f"superseded by {newer}"

        me.go(f"/memories?space={space}")
        listed = _ids(me, "table.grid tr.hit")
        assert pin not in listed
        assert listed == cli("list", "--spaces", json.dumps([space]))
        me.page.check("input[name=superseded]")
        me.page.click("form.inline button[type=submit]")
        me.page.wait_for_selector("table.grid tr.hit.superseded")
        me.shot("list-include-superseded")
        with_old = cli("list", "--spaces", json.dumps([space]), "--include-superseded")
        assert pin in with_old
        assert _ids(me, "table.grid tr.hit") == with_old
        assert me.text("table.grid tr.hit.superseded .superseded-by") == f"superseded by {newer}"
        assert me.page.is_checked("input[name=superseded]")
        assert me.problems == []
