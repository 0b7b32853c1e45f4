"""The local web server's safety, over real HTTP to a real ``venom-mem ui`` subprocess against a
real daemon: the secret, the Host check, CSRF, the headers, escaping, and a read-only
principal whose forged forms the daemon refuses."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx
import pytest

from tests.support.ui_server import UI
from venom_mem_adapters.web.app import routes
from venom_mem_adapters.web.guard import CSP

from .conftest import Seeded

GET_PAGES = (
    "/", "/chart", "/search?q=zig", "/memories", "/memory/{pin}", "/memory/{pin}/diff?a=1&b=2",
    "/memory/{pin}/revision/1", "/memory/{pin}/purge", "/sessions", "/session/{session}",
    "/clients", "/clients/codex/remove", "/grants/g2/revoke", "/doctor", "/activity",
    "/activity/feed?wait=0", "/static/htmx.min.js",
)  # fmt: skip


def _post_paths(seeded: Seeded) -> list[str]:
    """Every POST route the app has, with real IDs filled in: a new form route is covered
    here without anyone remembering to add it."""
    paths = []
    for route in routes():
        methods = getattr(route, "methods", None) or set()
        if "POST" in methods:
            path = str(getattr(route, "path", ""))
            paths.append(
                path.replace("{id}", seeded.ids["pin"])
                .replace("{name}", "codex")
                .replace("{principal}", "g2")
            )
    assert len(paths) >= 6, paths
    return paths


def _pages(seeded: Seeded) -> list[str]:
    return [p.format(**seeded.ids) for p in GET_PAGES]


def _memory(seeded: Seeded, key: str = "pin") -> dict[str, object]:
    return dict(
        seeded.world.ok(
            "memory", "get", "--id", seeded.ids[key], "--include-deleted", token="@owner"
        )
    )


def test_the_url_sets_an_httponly_strict_cookie_and_leaves_the_address_bar(owner_ui: UI) -> None:
    with httpx.Client(base_url=owner_ui.origin) as client:
        reply = client.get(f"/memory/m1?token={owner_ui.secret}&x=1")
        assert reply.status_code == 303
        assert reply.headers["location"] == "/memory/m1?x=1"
        cookie = reply.headers["set-cookie"]
        assert cookie.startswith(f"{owner_ui.cookie_name}={owner_ui.secret};")
        for flag in ("HttpOnly", "SameSite=Strict", "Path=/"):
            assert flag in cookie
        assert client.get("/memory/m1").status_code == 200


def test_without_the_secret_every_route_is_refused(owner_ui: UI, seeded: Seeded) -> None:
    with owner_ui.client(signed_in=False) as client:
        for path in _pages(seeded):
            reply = client.get(path)
            assert reply.status_code == 403, path
            assert "venom-mem ui" in reply.text
            assert "Zig" not in reply.text
        for path in _post_paths(seeded):
            assert client.post(path, data={"revision": "2"}).status_code == 403, path
        wrong = owner_ui.secret[:-1] + ("A" if owner_ui.secret[-1] != "A" else "B")
        forged = {"cookie": f"{owner_ui.cookie_name}={wrong}"}
        assert client.get("/", headers=forged).status_code == 403
        assert client.get("/?token=wrong").status_code == 403
        # The URL's token signs in a GET only, never a POST.
        reply = client.post(f"/memory/{seeded.ids['pin']}/restore?token={owner_ui.secret}")
        assert reply.status_code == 403
    assert _memory(seeded)["revision"] == 2


def test_a_wrong_host_header_is_refused_even_with_the_secret(owner_ui: UI, seeded: Seeded) -> None:
    with owner_ui.client() as client:
        for host in ("localhost", f"localhost:{owner_ui.port}", "evil.example",
                     f"evil.example:{owner_ui.port}", f"127.0.0.1:{owner_ui.port + 1}",
                     "127.0.0.1", f"[::1]:{owner_ui.port}"):  # fmt: skip
            for path in ("/", f"/?token={owner_ui.secret}", f"/memory/{seeded.ids['pin']}"):
                reply = client.get(path, headers={"host": host})
                assert reply.status_code == 421, (host, path)
                assert "Zig" not in reply.text
                assert "set-cookie" not in reply.headers


def test_a_post_without_the_csrf_token_changes_nothing(owner_ui: UI, seeded: Seeded) -> None:
    before = _memory(seeded)
    clients_before = seeded.world.ok("client", "list", token="@owner")
    with owner_ui.client() as client:
        csrf = owner_ui.csrf(client)
        for path in _post_paths(seeded):
            pin = seeded.ids["pin"]
            for data in ({"revision": "2", "to": "1", "confirm": pin},
                         {"revision": "2", "csrf": "0" * 64, "confirm": pin}):  # fmt: skip
                reply = client.post(path, data=data)
                assert reply.status_code == 403, path
                assert "denied.csrf" in reply.text
            # The right token from another origin: refused before the form is read.
            reply = client.post(
                path,
                data={"revision": "2", "csrf": csrf},
                headers={"origin": "http://evil.example"},
            )
            assert reply.status_code == 403, path
            reply = client.post(
                path, data={"revision": "2", "csrf": csrf}, headers={"sec-fetch-site": "cross-site"}
            )
            assert reply.status_code == 403, path
    assert _memory(seeded) == before
    assert seeded.world.ok("client", "list", token="@owner") == clients_before


def test_only_get_head_and_post_and_no_cors(owner_ui: UI) -> None:
    with owner_ui.client() as client:
        for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
            reply = client.request(method, "/", headers={"origin": owner_ui.origin})
            assert reply.status_code == 405, method
            assert not any(h.startswith("access-control-") for h in reply.headers)
        reply = client.get("/", headers={"origin": "http://evil.example"})
        assert reply.status_code == 403
        assert not any(h.startswith("access-control-") for h in reply.headers)


def test_every_response_carries_a_strict_csp(owner_ui: UI, seeded: Seeded) -> None:
    assert "'unsafe-inline'" not in CSP
    assert "'unsafe-eval'" not in CSP
    with owner_ui.client() as client:
        for path in [*_pages(seeded), "/nowhere"]:
            reply = client.get(path)
            assert reply.headers["content-security-policy"] == CSP, path
            assert reply.headers["x-content-type-options"] == "nosniff"
            assert reply.headers["referrer-policy"] == "same-origin"
            assert reply.headers["x-frame-options"] == "DENY"
            assert "server" not in reply.headers
    with owner_ui.client(signed_in=False) as client:
        assert client.get("/").headers["content-security-policy"] == CSP


class _Markup(HTMLParser):
    """Inline scripts, event-handler attributes and style attributes in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.inline.append("<script> without src")
        self.inline.extend(f"{tag} {name}" for name in names if name.startswith("on"))
        if "style" in names:
            self.inline.append(f"{tag} style")
        if tag == "style":
            self.inline.append("<style>")


def test_pages_have_no_inline_script_and_memory_text_is_escaped(
    owner_ui: UI, seeded: Seeded
) -> None:
    with owner_ui.client() as client:
        for path in [p for p in _pages(seeded) if not p.startswith("/static")]:
            parser = _Markup()
            parser.feed(client.get(path).text)
            assert parser.inline == [], path
        for path in (f"/memory/{seeded.ids['markup']}", "/search?q=pwned", "/memories"):
            html = client.get(path).text
            assert "<script>window.pwned" not in html, path
            assert "<img src=x" not in html, path
            assert "<b>bold</b>" not in html, path
            assert "&lt;b&gt;bold&lt;/b&gt;" in html, path
        assert (
            "&lt;script&gt;window.pwned = 1&lt;/script&gt;"
            in client.get(f"/memory/{seeded.ids['markup']}").text
        )


def test_the_secret_is_printed_once_and_never_logged(owner_ui: UI, seeded: Seeded) -> None:
    with owner_ui.client() as client:
        for path in _pages(seeded):
            client.get(path)
        client.get(f"/?token={owner_ui.secret}")
        client.get("/nowhere")
        for page in _pages(seeded):
            assert owner_ui.secret not in client.get(page).text
    assert owner_ui.secret not in owner_ui.output()
    assert re.search(r"connected to the daemon as owner", owner_ui.output())


def test_a_read_only_principal_sees_no_write_or_admin_controls(
    reader_ui: UI, seeded: Seeded
) -> None:
    pin = seeded.ids["pin"]
    with reader_ui.client() as client:
        page = client.get(f"/memory/{pin}").text
        assert "Zig" in page
        assert "as <strong>g3 (reader)</strong>" in page
        for control in (
            "/delete",
            "/restore",
            "/revert",
            "/purge",
            'href="/clients"',
            '<form method="post"',
        ):
            assert control not in page, control
        for path in _pages(seeded):
            assert 'method="post"' not in client.get(path).text, path


def test_forged_posts_of_a_read_only_principal_get_the_daemons_denied(
    reader_ui: UI, seeded: Seeded
) -> None:
    pin = seeded.ids["pin"]
    before = _memory(seeded)
    clients_before = seeded.world.ok("client", "list", token="@owner")
    expected = {
        f"/memory/{pin}/delete": "denied.write",
        f"/memory/{pin}/restore": "denied.write",
        f"/memory/{pin}/revert": "denied.write",
        f"/memory/{pin}/purge": "denied.admin",
        "/clients/codex/remove": "denied.admin",
        "/grants/g2/revoke": "denied.admin",
        f"/memory/{pin}/edit": "denied.write",
        "/memories/add": "denied.write",
        "/space/describe": "denied.write",
        "/spaces/state": "denied.write",
    }
    assert set(expected) == set(_post_paths(seeded))
    with reader_ui.client() as client:
        csrf = reader_ui.csrf(client)
        for path, code in expected.items():
            form = {"csrf": csrf, "revision": "2", "to": "1", "confirm": pin, "space": "user",
                    "content": "forged", "description": "forged", "state": "inactive"}  # fmt: skip
            reply = client.post(path, data=form)
            assert reply.status_code == 403, (path, reply.text)
            assert code in reply.text, path
        assert client.get("/clients").status_code == 403
        assert "denied.admin" in client.get("/clients").text
    assert _memory(seeded) == before
    assert seeded.world.ok("client", "list", token="@owner") == clients_before


@pytest.mark.parametrize("path", ["/memory/m999", "/session/s999"])
def test_a_missing_record_is_the_daemons_not_found(owner_ui: UI, path: str) -> None:
    with owner_ui.client() as client:
        reply = client.get(path)
    assert reply.status_code == 404
    assert "not_found." in reply.text
