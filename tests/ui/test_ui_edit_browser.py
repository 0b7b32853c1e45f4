"""Correcting memory from the page, in a real browser (ADR 0036): edit a memory's fields,
the conflict path when a CLI update lands while the form is open, add a memory to a space,
describe a space; and each of these forms refuses a forged POST. Every change is checked
through the CLI."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.browser import chromium_context
from tests.support.ui_server import run_ui

from .conftest import Seeded
from .test_ui_browser import Person, _cli_memory

EDITED = "venom-std pins Zig 0.18 with .zigversion; CI reads it."


def test_a_person_edits_a_memory_and_redoes_it_after_a_cli_update(
    fresh: Seeded, shots: Path
) -> None:
    world, pin = fresh.world, fresh.ids["pin"]
    with chromium_context() as context, run_ui(world) as ui:
        me = Person(context, ui, shots)
        me.page.goto(ui.url)
        me.go(f"/memory/{pin}?edit=1")
        form = "form#edit"
        assert me.page.input_value(f"{form} textarea[name=content]") == (
            "venom-std pins Zig 0.17 with .zigversion."
        )
        assert me.page.input_value(f"{form} input[name=tags]") == "zig, build"
        me.page.fill(f"{form} input[name=title]", "Zig version pin")
        me.page.fill(f"{form} textarea[name=content]", EDITED)
        me.page.fill(f"{form} input[name=tags]", "zig, build, ci")
        me.page.select_option(f"{form} select[name=kind]", "decision")
        me.page.select_option(f"{form} select[name=importance]", "critical")
        me.page.fill(f"{form} input[name=branches]", "main")
        me.shot("edit-form")
        me.page.click(f"{form} button[name=save]")
        me.page.wait_for_selector(".notice >> text=edited")
        got = _cli_memory(world, pin)
        assert (got["revision"], got["content"], got["title"]) == (3, EDITED, "Zig version pin")
        assert (got["tags"], got["kind"], got["importance"], got["branches"]) == (
            ["zig", "build", "ci"], "decision", "critical", ["main"],
        )  # fmt: skip
        assert got["updated_by"]["principal"] == "owner"

        # The form is open on r3 when codex's CLI update lands: saving is a conflict.
        me.go(f"/memory/{pin}?edit=1")
        codex = fresh.tokens["codex"]
        world.ok("memory", "update", "--id", pin, "--revision", "3",
                 "--content", "venom-std pins Zig 0.19 now.", token=codex)  # fmt: skip
        me.page.fill(f"{form} textarea[name=content]", "Mine: Zig 0.18 stays.")
        me.page.click(f"{form} button[name=save]")
        me.page.wait_for_selector("#conflict")
        assert "You edited revision 3; it is at revision 4 now, by codex (g2)" in me.text(
            "#conflict"
        )
        added = [m.inner_text() for m in me.page.query_selector_all("#diff .line.add mark")]
        assert added == ["0.19", "now."], added
        assert me.page.input_value(f"{form} textarea[name=content]") == "Mine: Zig 0.18 stays."
        assert me.page.input_value(f"{form} input[name=revision]") == "4"
        me.shot("edit-conflict")
        assert _cli_memory(world, pin)["content"] == "venom-std pins Zig 0.19 now."  # nothing lost
        # Redone on the new revision, it is saved as r5.
        me.page.click(f"{form} button[name=save]")
        me.page.wait_for_selector(".notice >> text=edited")
        got = _cli_memory(world, pin)
        assert (got["revision"], got["content"]) == (5, "Mine: Zig 0.18 stays.")
        # The conflict page is answered 409, which the browser notes; nothing else went wrong.
        conflict = "the server responded with a status of 409 (Conflict)"
        assert [p for p in me.problems if conflict not in p] == [], me.problems


def test_a_person_adds_a_memory_and_describes_a_space(fresh: Seeded, shots: Path) -> None:
    world = fresh.world
    with chromium_context() as context, run_ui(world) as ui:
        me = Person(context, ui, shots)
        me.page.goto(ui.url)
        me.page.click("table.grid >> text=project/venom-std")
        me.page.wait_for_selector("#description")
        assert me.text("#description") == "No description yet."
        me.page.click("details.describe summary")
        me.page.fill("form#describe input[name=description]", "Build and test rules of venom-std.")
        me.page.click("form#describe button[name=describe]")
        me.page.wait_for_selector(".notice >> text=described")
        assert me.text("#description") == "Build and test rules of venom-std."
        spaces = world.ok("space", "list", token="@owner")["spaces"]
        [described] = [s for s in spaces if s["space"] == "project/venom-std"]
        assert described["description"] == "Build and test rules of venom-std."

        me.page.click("details.add summary")
        me.page.fill("form#add input[name=title]", "Review rule")
        me.page.fill("form#add textarea[name=content]", "Every PR gets one review.")
        me.page.fill("form#add input[name=tags]", "review")
        me.page.select_option("form#add select[name=importance]", "low")
        me.shot("add-form")
        me.page.click("form#add button[name=add]")
        me.page.wait_for_selector(".notice >> text=added")
        new_id = me.page.url.split("/memory/")[1].split("?")[0]
        got = _cli_memory(world, new_id)
        assert (got["space"], got["title"], got["content"]) == (
            "project/venom-std", "Review rule", "Every PR gets one review.",
        )  # fmt: skip
        assert (got["tags"], got["importance"], got["author"]["principal"]) == (
            ["review"], "low", "owner",
        )  # fmt: skip

        # The same rule typed again: added, and the new page points at the first one.
        me.go("/memories?space=project/venom-std")
        me.page.click("details.add summary")
        me.page.fill("form#add textarea[name=content]", "every PR gets one review")
        me.page.click("form#add button[name=add]")
        me.page.wait_for_selector("section.similar")
        me.shot("add-similar")
        shown = [a.inner_text() for a in me.page.query_selector_all("section.similar a.id")]
        assert shown == [new_id]
        assert "Every PR gets one review." in me.text("section.similar")
        again_id = me.page.url.split("/memory/")[1].split("?")[0]
        assert _cli_memory(world, again_id)["content"] == "every PR gets one review"
        assert me.problems == [], me.problems


def test_a_read_only_person_gets_no_edit_add_or_describe_form(fresh: Seeded, shots: Path) -> None:
    with chromium_context() as context, run_ui(fresh.world, token=fresh.tokens["reader"]) as ui:
        me = Person(context, ui, shots)
        me.page.goto(ui.url)
        me.go(f"/memory/{fresh.ids['pin']}?edit=1")
        assert me.page.query_selector("form#edit") is None
        me.go("/memories?space=user")
        assert me.page.query_selector("form#add") is None
        assert me.page.query_selector("form#describe") is None


FORMS = {
    "/memory/{pin}/edit": {"revision": "2", "content": "forged"},
    "/memories/add": {"space": "user", "content": "forged"},
    "/space/describe": {"space": "user", "description": "forged"},
}


def _state(seeded: Seeded) -> object:
    world = seeded.world
    return (
        world.ok("memory", "list", "--include-deleted", token="@owner"),
        world.ok("space", "list", token="@owner"),
    )


def test_each_new_form_refuses_a_forged_post(fresh: Seeded) -> None:
    before = _state(fresh)
    with run_ui(fresh.world) as ui, ui.client() as client:
        csrf = ui.csrf(client)
        for template, data in FORMS.items():
            path = template.format(pin=fresh.ids["pin"])
            for headers, form in (
                ({}, data),  # no CSRF token
                ({}, {**data, "csrf": "0" * 64}),  # a wrong one
                ({"origin": "http://evil.example"}, {**data, "csrf": csrf}),  # another origin
                ({"sec-fetch-site": "cross-site"}, {**data, "csrf": csrf}),
            ):
                assert client.post(path, data=form, headers=headers).status_code == 403, path
            with httpx.Client(base_url=ui.origin) as stranger:  # without the secret's cookie
                assert stranger.post(path, data={**data, "csrf": csrf}).status_code == 403
    assert _state(fresh) == before


def test_a_read_only_principals_forged_forms_get_the_daemons_denied(fresh: Seeded) -> None:
    before = _state(fresh)
    with run_ui(fresh.world, token=fresh.tokens["reader"]) as ui, ui.client() as client:
        csrf = ui.csrf(client)
        for template, data in FORMS.items():
            reply = client.post(template.format(pin=fresh.ids["pin"]), data={**data, "csrf": csrf})
            assert reply.status_code == 403, reply.text
            assert "denied.write" in reply.text, reply.text
    assert _state(fresh) == before
