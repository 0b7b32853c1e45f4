"""The live activity feed: the ``events`` verb, long-polled by htmx.

Events carry IDs, never text (RFC-0020 section 10). Each row's memory or session is then
fetched with the reader's own rights, so the feed shows no more than memory.get would: a
memory the reader can't read, or one purged since, shows its ID and the daemon's reason.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from venom_mem_core.errors import VenomError

from .views import call, page, view_route

__all__ = ["ROUTES"]

# A short long poll: a call blocks a worker thread until it returns, and Ctrl-C waits for it,
# so the page asks again every second or two rather than holding a call open for long.
WAIT_MS = 1_500
PAGE = 50


async def _row(request: Request, event: dict[str, Any]) -> dict[str, Any]:
    data = event.get("data") or {}
    row: dict[str, Any] = {"event": event, "memory": None, "session": None, "error": None}
    try:
        if isinstance(data.get("memory"), str) and event.get("type") != "memory.purged":
            row["memory"] = await call(
                request, "memory.get", {"id": data["memory"], "include_deleted": True}
            )
        elif isinstance(data.get("session"), str) and event.get("type") != "session.purged":
            row["session"] = await call(request, "session.get", {"session": data["session"]})
    except VenomError as error:
        row["error"] = error.code
    return row


async def activity_page(request: Request) -> Response:
    # No cursor gives a snapshot and events from now on; "<source>:0" then asks for every
    # event the daemon still holds since it started.
    first = await call(request, "events", {"limit": 1, "types": ["memory.added"]})
    source = str(first["cursor"]).split(":", 1)[0]
    return page(request, "activity.html", cursor=f"{source}:0")


async def feed_part(request: Request) -> Response:
    after = request.query_params.get("after", "")
    wait = request.query_params.get("wait") != "0"
    params: dict[str, Any] = {"limit": PAGE, "wait_ms": WAIT_MS if wait else 0}
    if after:
        params["after"] = after
    reply = await call(request, "events", params)
    rows = [await _row(request, event) for event in reversed(reply.get("events", []))]
    return page(
        request,
        "feed.html",
        rows=rows,
        cursor=reply["cursor"],
        more=bool(reply.get("more")) or bool(rows),
        snapshot=bool(reply.get("snapshot")),
    )


ROUTES: list[Route] = [
    view_route("/activity", activity_page),
    view_route("/activity/feed", feed_part),
]
