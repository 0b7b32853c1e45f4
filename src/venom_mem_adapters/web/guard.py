"""The safety of a web server on loopback, as one ASGI middleware in front of every route.

In order, for every request (docs/adr/0019-web-ui.md):

1. ``Host`` must be exactly the ``127.0.0.1:<port>`` the URL printed: a page on another origin
   that rebinds its DNS name to 127.0.0.1 sends its own name and is refused (DNS rebinding).
2. Only GET, HEAD and POST. A cross-site ``Origin`` or ``Sec-Fetch-Site`` is refused.
3. The secret: the cookie, or on a GET the ``token`` query parameter of the printed URL, which
   sets the cookie (HttpOnly, SameSite=Strict) and redirects to the same page without it, so
   the secret leaves the address bar and the history. Anything else is refused.
4. Every response carries a strict Content-Security-Policy (scripts from this server only, no
   inline script, no eval), ``nosniff``, no referrer, no framing, no caching. No CORS header is
   ever sent, so no other origin can read a response.

State-changing requests also carry a CSRF token (:func:`check_csrf`), derived from the secret
by HMAC so that the page can hold it without holding the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import attrs

__all__ = ["CSP", "Guard", "Secret", "check_csrf"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on its
    # own form posts, and those would be refused as cross-origin.
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
ALLOWED_METHODS = SAFE_METHODS | {"POST"}
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"


@attrs.frozen
class Secret:
    """The URL's secret, the cookie it sets, and the CSRF token derived from it."""

    value: str
    port: int

    @classmethod
    def fresh(cls, port: int) -> Secret:
        return cls(secrets.token_urlsafe(32), port)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    @property
    def url(self) -> str:
        return f"{self.origin}/?{TOKEN_PARAM}={self.value}"

    @property
    def cookie_name(self) -> str:
        # Cookies ignore ports: two pages on two ports of 127.0.0.1 each keep their own.
        return f"venom_mem_ui_{self.port}"

    @property
    def csrf(self) -> str:
        return hmac.new(self.value.encode(), b"venom-mem-ui csrf", hashlib.sha256).hexdigest()

    def matches(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(
            candidate.encode(), self.value.encode()
        )


def check_csrf(secret: Secret, form_value: str | None, header_value: str | None) -> bool:
    """Whether a state-changing request carries the page's CSRF token."""
    given = form_value if form_value is not None else header_value
    return given is not None and hmac.compare_digest(given.encode(), secret.csrf.encode())


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in scope.get("headers", ())}


def _cookie(header: bytes | None, name: str) -> str | None:
    if not header:
        return None
    for part in header.decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


class Guard:
    def __init__(self, app: ASGIApp, secret: Secret) -> None:
        self._app = app
        self._secret = secret

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets: closing without accepting refuses them
        refusal = self._refusal(scope)
        if refusal is not None:
            status, text, extra = refusal
            await _respond(send, status, text, extra)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (k, v)
                    for k, v in message.get("headers", ())
                    if not k.lower().startswith(b"access-control-")
                ]
                message["headers"] = kept + list(SECURITY_HEADERS)
            await send(message)

        await self._app(scope, receive, send_with_headers)

    def _refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        headers = _headers(scope)
        secret = self._secret
        if headers.get(b"host", b"").decode("latin-1") != secret.host:
            return 421, f"This server answers only at {secret.origin}.", []
        method = scope.get("method", "GET")
        if method not in ALLOWED_METHODS:
            return 405, "Method not allowed.", [(b"allow", b"GET, HEAD, POST")]
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1") != secret.origin:
            return 403, "Cross-origin requests are refused.", []
        if headers.get(b"sec-fetch-site", b"same-origin") not in (b"same-origin", b"none"):
            return 403, "Cross-site requests are refused.", []
        if secret.matches(_cookie(headers.get(b"cookie"), secret.cookie_name)):
            return None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for key, value in query if key == TOKEN_PARAM]
        if method in SAFE_METHODS and len(given) == 1 and secret.matches(given[0]):
            rest = urlencode([(k, v) for k, v in query if k != TOKEN_PARAM])
            # Quoted, and one leading slash: "//host" would be a redirect off this server.
            location = (
                "/" + quote(scope.get("path", "/").lstrip("/")) + (f"?{rest}" if rest else "")
            )
            cookie = f"{secret.cookie_name}={secret.value}; Path=/; HttpOnly; SameSite=Strict"
            return (
                303,
                "Signed in.",
                [(b"location", location.encode()), (b"set-cookie", cookie.encode())],
            )
        return 403, "Open the URL that `venom-mem ui` printed in its terminal.", []


async def _respond(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = (text + "\n").encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *extra,
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
