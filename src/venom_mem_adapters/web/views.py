"""What every page shares: the daemon call off the event loop, the rights, the templates
(Jinja2, autoescaping every value, so memory text can never become markup), the CSRF check
on every POST, and errors rendered with the daemon's own code."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread
import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from venom_mem_core.errors import VenomError

from .daemon import DaemonPool
from .guard import CSRF_FIELD, CSRF_HEADER, Secret, check_csrf
from .rights import Rights

__all__ = [
    "Handler",
    "call",
    "error_page",
    "form_route",
    "page",
    "redirect",
    "rights",
    "templates",
    "view_route",
]

Handler = Callable[[Request], Awaitable[Response]]
TEMPLATES = Path(__file__).parent / "templates"
STATUS = {
    "invalid_params": 400,
    "denied": 403,
    "not_found": 404,
    "conflict": 409,
    "unavailable": 503,
    "unsupported": 501,
}
KNOWN_HIT_FIELDS = frozenset(
    {
        "id", "space", "kind", "title", "tags", "revision", "author", "updated_by", "session",
        "created", "updated", "deleted", "snippet", "score", "fts_rank", "vector_rank",
        "similarity", "content", "embedding", "origin",
    }
)  # fmt: skip


def who(provenance: Any) -> str:
    if not isinstance(provenance, Mapping):
        return ""
    principal, label = provenance.get("principal", ""), provenance.get("label")
    return f"{label} ({principal})" if label and label != principal else str(principal)


def when(stamp: Any) -> str:
    """``2026-11-09T10:00:00.000Z`` as ``2026-11-09 10:00:00``, UTC."""
    text = str(stamp or "")
    return text[:19].replace("T", " ") if len(text) >= 19 else text


def extras(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Fields the page doesn't know (a later schema's importance, branch, description...),
    shown as they are rather than dropped."""
    return [
        (key, str(value))
        for key, value in record.items()
        if key not in KNOWN_HIT_FIELDS and not isinstance(value, (dict, list))
    ]


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every template, whatever its name: memory text is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(who=who, when=when, extras=extras)
    return env


def rights(request: Request) -> Rights:
    cached = getattr(request.state, "rights", None)
    return cached if isinstance(cached, Rights) else Rights.from_whoami({})


async def call(request: Request, verb: str, params: Mapping[str, Any] | None = None) -> Any:
    pool: DaemonPool = request.app.state.pool
    return await anyio.to_thread.run_sync(pool.call, verb, dict(params or {}))


async def _load_rights(request: Request) -> Rights:
    found = Rights.from_whoami(await call(request, "whoami"))
    request.state.rights = found
    return found


def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    env: jinja2.Environment = request.app.state.templates
    secret: Secret = request.app.state.secret
    html = env.get_template(template).render(
        request=request,
        me=rights(request),
        csrf=secret.csrf,
        csrf_field=CSRF_FIELD,
        partial=request.headers.get("hx-request") == "true",
        now=dt.datetime.now(dt.UTC),
        **context,
    )
    return HTMLResponse(html, status_code=status_code)


def error_page(request: Request, error: VenomError) -> HTMLResponse:
    status = STATUS.get(error.code.split(".", 1)[0], 500)
    return page(request, "error.html", status_code=status, error=error)


def redirect(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)


def _guarded(handler: Handler, *, state_changing: bool) -> Handler:
    async def endpoint(request: Request) -> Response:
        try:
            if state_changing:
                form = await request.form()
                token = form.get(CSRF_FIELD)
                if not check_csrf(
                    request.app.state.secret,
                    token if isinstance(token, str) else None,
                    request.headers.get(CSRF_HEADER),
                ):
                    return page(
                        request,
                        "error.html",
                        status_code=403,
                        error=VenomError(
                            "denied.csrf", "this form is not from this page: reload and retry"
                        ),
                    )
            await _load_rights(request)
            return await handler(request)
        except VenomError as error:
            return error_page(request, error)

    return endpoint


def form_route(path: str, handler: Handler) -> Route:
    """A state-changing route: POST only, and refused without the page's CSRF token."""
    return Route(path, _guarded(handler, state_changing=True), methods=["POST"])


def view_route(path: str, handler: Handler) -> Route:
    return Route(path, _guarded(handler, state_changing=False), methods=["GET", "HEAD"])
