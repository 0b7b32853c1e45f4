"""The page in a real browser, as a person uses it: headless Chromium (Debian's) driven by
Playwright against ``venom-mem ui`` and a real daemon, on a store seeded through the CLI by
two clients. Every change made in the browser is checked through the CLI. Screenshots of each
page go to the test's output directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.browser import chromium_context
from tests.support.daemon_env import World
from tests.support.ui_server import UI, run_ui

from .conftest import SCRIPT, Seeded


class Person:
    """One browser tab, and what went wrong in it (console errors: a CSP refusal shows there)."""

    def __init__(self, context: Any, ui: UI, shots: Path) -> None:
        self.page = context.new_page()
        self.ui = ui
        self.shots = shots
        self.problems: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("dialog", self._dialog)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def go(self, path: str) -> None:
        self.page.goto(self.ui.origin + path)
        self.page.wait_for_load_state("load")

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)

    def text(self, selector: str) -> str:
        return str(self.page.inner_text(selector))


def _cli_memory(world: World, memory_id: str, *flags: str) -> Any:
    result = world.run("memory", "get", "--id", memory_id, *flags, "--json", token="@owner")
    return result.json if result.code == 0 else result.json["error"]["code"]


def test_a_person_audits_and_corrects_the_store_in_a_browser(fresh: Seeded, shots: Path) -> None:
    world, pin, markup = fresh.world, fresh.ids["pin"], fresh.ids["markup"]
    with chromium_context() as context, run_ui(world) as ui:
        me = Person(context, ui, shots)

        # The printed URL signs the browser in and leaves the address bar without the secret.
        me.page.goto(ui.url)
        me.page.wait_for_selector("#chart svg")
        assert ui.secret not in me.page.url
        spaces = me.text("table.grid")
        assert "project/venom-std" in spaces
        assert "user" in spaces
        assert "claude-code: 1" in me.text("#chart")
        me.shot("01-spaces")

        # Search finds the memory, with its mode and ranks.
        me.page.click("nav >> text=Search")
        me.page.fill("input[name=q]", "which zig version")
        me.page.press("input[name=q]", "Enter")
        me.page.wait_for_selector("table.hits tr.hit")
        assert me.text(".mode") == "fts"
        first = me.text("table.hits tr.hit")
        assert "Zig pin" in first
        assert "claude-code (g1)" in first
        assert "edited by codex (g2)" in first
        assert "q=which%20zig%20version" in me.page.url  # htmx pushed it: the URL can be shared
        me.shot("02-search")

        # Its page: both authors, every revision, and a diff.
        me.page.click("table.hits a.title")
        me.page.wait_for_selector("table.revisions")
        assert me.text("dd.author").startswith("claude-code (g1)")
        assert me.text("dd.updated-by").startswith("codex (g2)")
        revisions = me.text("table.revisions")
        assert "claude-code (g1)" in revisions
        assert "codex (g2)" in revisions
        added = [m.inner_text() for m in me.page.query_selector_all("#diff .line.add mark")]
        removed = [m.inner_text() for m in me.page.query_selector_all("#diff .line.del mark")]
        assert added[0] == "0.17 "
        assert "check it before upgrading." in "".join(removed)
        me.page.select_option("select[name=a]", "2")
        me.page.select_option("select[name=b]", "1")
        me.page.click("button[name=compare]")
        me.page.wait_for_selector("#diff h3 >> text=r1 → r2")
        me.shot("03-memory")

        # Going back to r1 is an update, checked against the revision shown, by owner.
        me.page.click("button[name=revert]")
        me.page.wait_for_selector(".notice >> text=reverted-to-1")
        got = _cli_memory(world, pin)
        assert got["revision"] == 3
        assert got["content"] == "venom-std pins Zig with .zigversion; check it before upgrading."
        assert got["updated_by"] == {"principal": "owner", "label": "owner"}

        # Delete (revision-checked) and restore, each seen by the CLI.
        me.page.click("button[name=delete]")
        me.page.wait_for_selector(".badge.warn >> text=Deleted")
        assert _cli_memory(world, pin) == "not_found.memory"
        assert "deleted" in _cli_memory(world, pin, "--include-deleted")
        me.shot("04-deleted")
        me.page.click("button[name=restore]")
        me.page.wait_for_selector(".notice >> text=restored")
        assert _cli_memory(world, pin)["revision"] == 5

        # Purge asks for a confirmation that names the memory; then the text is gone.
        me.page.click("text=Purge…")
        me.page.wait_for_selector("h1 >> text=Purge m1")
        assert "Zig pin" in me.text("h1")
        me.shot("05-purge-confirm")
        me.page.fill("input[name=confirm]", markup)
        me.page.click("button[name=purge]")
        me.page.wait_for_selector("[role=alert] >> text=nothing was purged")
        assert _cli_memory(world, pin)["revision"] == 5
        me.page.fill("input[name=confirm]", pin)
        me.page.click("button[name=purge]")
        me.page.wait_for_selector(f".notice >> text=purged-{pin}")
        assert _cli_memory(world, pin, "--include-deleted") == "not_found.memory"
        hits = world.ok("memory", "search", "--query", "zigversion", token="@owner")["results"]
        assert hits == []
        assert b"zigversion" not in world.store.read_bytes()

        # A memory that is markup shows as text and runs nothing.
        me.go(f"/memory/{markup}")
        assert me.text("#content") == SCRIPT
        assert me.text("h1").endswith("<b>bold</b> title")
        assert me.page.evaluate("typeof window.pwned") == "undefined"
        assert me.page.query_selector("main img") is None
        me.shot("06-markup-as-text")

        # The other pages, each looked at once.
        me.go("/activity")
        me.page.wait_for_selector("ol.feed li.memory-purged")
        feed = me.text("ol.feed")
        assert "memory.added" in feed
        assert "memory.restored" in feed
        me.shot("07-activity")
        world.ok(
            "memory", "add", "--space", "user", "--content", "live one", token=fresh.tokens["codex"]
        )
        me.page.wait_for_selector("ol.feed li.memory-added >> text=by codex (g2)", timeout=20_000)
        for name, path, selector in (
            ("08-sessions", "/sessions", "table.sessions"),
            ("09-session-chain", f"/session/{fresh.ids['fork']}", "table.sessions"),
            ("10-clients", "/clients", "table.clients"),
            ("11-doctor", "/doctor", "table.doctor"),
            ("12-memories", "/memories?space=user", "table.grid"),
        ):
            me.go(path)
            me.page.wait_for_selector(selector)
            me.shot(name)
        # The fork's chain, oldest first, each reported by the client that started it.
        me.go(f"/session/{fresh.ids['fork']}")
        chain = me.page.query_selector_all("table.sessions")[0].inner_text()
        assert chain.index("claude-code (g1)") < chain.index("codex (g2)")
        assert f"{fresh.ids['session']} (fork)" in chain
        # Removing a client asks first, and the CLI sees it gone.
        me.go("/clients")
        me.page.click("text=Remove reader…")
        me.page.wait_for_selector("h1 >> text=Remove client reader (g3)?")
        me.shot("13-remove-client-confirm")
        me.page.click("button[name=confirm]")
        me.page.wait_for_selector(".notice >> text=removed-reader")
        names = [c["client"] for c in world.ok("client", "list", token="@owner")["clients"]]
        assert names == ["claude-code", "codex"]
        assert me.dialogs == []
        assert me.problems == [], me.problems


def test_a_read_only_person_sees_the_store_and_no_controls(fresh: Seeded, shots: Path) -> None:
    with chromium_context() as context, run_ui(fresh.world, token=fresh.tokens["reader"]) as ui:
        me = Person(context, ui, shots)
        me.page.goto(ui.url)
        me.page.wait_for_selector("table.grid")
        assert "Clients" not in me.text("nav")
        me.go(f"/memory/{fresh.ids['pin']}")
        assert me.page.query_selector("form[method=post]") is None
        assert "Read only" in me.text(".actions")
        me.shot("20-reader-memory")
        assert me.problems == [], me.problems
