"""The pages that look across the store: spaces (with the writes chart), search, a space's
memories, sessions and their chains, clients and grants, and the doctor's checks."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from venom_mem_core.errors import VenomError
from venom_mem_core.grammar import IMPORTANCES, KINDS

from .chart import count_writes, writes_chart
from .views import call, form_route, page, redirect, rights, view_route

__all__ = ["ROUTES"]

CHART_PAGES = 50  # memory.list pages of 200: the chart reads at most the newest 10,000
MODES = ("auto", "fts", "vector")


def _words(text: str) -> list[str]:
    return [word for word in text.replace(",", " ").split() if word]


async def _maybe(request: Request, verb: str, params: dict[str, Any] | None = None) -> Any:
    """A call whose refusal only hides a part of the page (store.status for a reader
    without read on ``*``)."""
    try:
        return await call(request, verb, params)
    except VenomError as error:
        if error.code.startswith(("denied.", "not_found.")):
            return None
        raise


async def spaces_page(request: Request) -> Response:
    spaces = (await call(request, "space.list"))["spaces"]
    status = await _maybe(request, "store.status")
    return page(
        request,
        "spaces.html",
        spaces=spaces,
        status=status,
        done=request.query_params.get("done", ""),
    )


async def chart_part(request: Request) -> Response:
    memories: list[dict[str, Any]] = []
    after: str | None = None
    for _ in range(CHART_PAGES):
        params: dict[str, Any] = {"include_deleted": True, "limit": 200}
        if after:
            params["after"] = after
        reply = await call(request, "memory.list", params)
        memories.extend(reply["memories"])
        after = reply.get("next")
        if not after:
            break
    chart = writes_chart(count_writes(memories), dt.datetime.now(dt.UTC).date())
    return page(request, "chart.html", chart=chart, scanned=len(memories), capped=bool(after))


def search_params(request: Request) -> dict[str, Any] | None:
    """memory.search's params from the form, or ``None`` when there is no query yet."""
    q = request.query_params
    query = q.get("q", "").strip()
    if not query:
        return None
    params: dict[str, Any] = {"query": query}
    if q.get("mode", "auto") in MODES:
        params["mode"] = q.get("mode", "auto")
    spaces, tags = _words(q.get("spaces", "")), _words(q.get("tags", ""))
    kinds = [k for k in q.getlist("kinds") if k in KINDS]
    if spaces:
        params["spaces"] = spaces
    if tags:
        params["tags"] = tags
    if kinds:
        params["kinds"] = kinds
    if q.get("superseded") == "true":  # absent otherwise: RFC-0020's request, as it was
        params["include_superseded"] = True
    if q.get("session", "").strip():
        params["session"] = q["session"].strip()
        params["lineage"] = q.get("lineage") == "true"
    limit = q.get("limit", "")
    if limit.isdigit():
        params["limit"] = int(limit)
    return params


async def search_page(request: Request) -> Response:
    params = search_params(request)
    result = await call(request, "memory.search", params) if params else None
    template = "hits.html" if request.headers.get("hx-request") == "true" else "search.html"
    return page(
        request,
        template,
        result=result,
        params=params or {},
        form=request.query_params,
        modes=MODES,
        kinds=KINDS,
    )


async def memories_page(request: Request) -> Response:
    q = request.query_params
    params: dict[str, Any] = {"limit": 50, "include_deleted": q.get("deleted") == "true"}
    if q.get("space"):
        params["spaces"] = [q["space"]]
    if q.get("superseded") == "true":
        params["include_superseded"] = True
    if q.get("after"):
        params["after"] = q["after"]
    reply = await call(request, "memory.list", params)
    space = q.get("space", "")
    listed = (await call(request, "space.list"))["spaces"] if space else []
    return page(
        request,
        "memories.html",
        reply=reply,
        form=q,
        space=space,
        space_info=next((s for s in listed if s.get("space") == space), None),
        may_write=rights(request).may_write_space(space),
        kinds=KINDS,
        importances=IMPORTANCES,
        done=q.get("done", ""),
    )


async def sessions_page(request: Request) -> Response:
    params: dict[str, Any] = {"limit": 50}
    if request.query_params.get("after"):
        params["after"] = request.query_params["after"]
    reply = await call(request, "session.list", params)
    return page(request, "sessions.html", reply=reply)


async def session_page(request: Request) -> Response:
    session_id = str(request.path_params["id"])
    session = await call(request, "session.get", {"session": session_id})
    chain = await call(request, "session.chain", {"session": session_id})
    children = await call(request, "session.list", {"parent": session_id, "limit": 50})
    memories = await call(request, "memory.list", {"session": session_id, "limit": 50})
    return page(
        request,
        "session.html",
        session=session,
        chain=chain,
        children=children["sessions"],
        memories=memories["memories"],
    )


async def clients_page(request: Request) -> Response:
    clients = (await call(request, "client.list"))["clients"]
    principals = (await call(request, "grant.list"))["principals"]
    return page(
        request,
        "clients.html",
        clients=clients,
        principals=principals,
        done=request.query_params.get("done", ""),
    )


async def remove_client_confirm(request: Request) -> Response:
    name = str(request.path_params["name"])
    clients = (await call(request, "client.list"))["clients"]
    found = next((c for c in clients if c.get("client") == name), None)
    if found is None:
        raise VenomError("not_found.client", f"no client is named {name}")
    return page(
        request,
        "confirm.html",
        heading=f"Remove client {name} ({found['principal']})",
        explanation=f"Its token is refused from then on, across restarts. Memories {name} "
        "wrote stay, with their provenance. There is no undo: a new client gets a new token.",
        action=f"/clients/{quote(name)}/remove",
    )


async def revoke_grant_confirm(request: Request) -> Response:
    principal = str(request.path_params["principal"])
    principals = (await call(request, "grant.list"))["principals"]
    found = next((p for p in principals if p.get("principal") == principal), None)
    if found is None:
        raise VenomError("not_found.principal", f"{principal} holds no grants")
    label = found.get("label") or principal
    return page(
        request,
        "confirm.html",
        heading=f"Revoke {principal} ({label})",
        explanation="Its token is refused from then on; a durable client is removed with it.",
        action=f"/grants/{quote(principal)}/revoke",
    )


async def space_state(request: Request) -> Response:
    """space.activate or space.deactivate from the spaces page (docs/adr/0042)."""
    form = await request.form()
    space, state = form.get("space"), form.get("state")
    if not isinstance(space, str) or state not in ("active", "inactive"):
        raise VenomError.param("type", "state", "pick a space and active or inactive")
    verb = "space.activate" if state == "active" else "space.deactivate"
    await call(request, verb, {"space": space})
    return redirect(f"/?done={state}-{space}")


async def remove_client(request: Request) -> Response:
    name = str(request.path_params["name"])
    await call(request, "client.remove", {"name": name})
    return redirect(f"/clients?done=removed-{name}")


async def revoke_grant(request: Request) -> Response:
    principal = str(request.path_params["principal"])
    await call(request, "grant.revoke", {"principal": principal})
    return redirect(f"/clients?done=revoked-{principal}")


async def doctor_page(request: Request) -> Response:
    report = await call(request, "doctor")
    return page(request, "doctor.html", report=report, admin=rights(request).admin)


ROUTES: list[Route] = [
    view_route("/", spaces_page),
    view_route("/chart", chart_part),
    view_route("/search", search_page),
    view_route("/memories", memories_page),
    view_route("/sessions", sessions_page),
    view_route("/session/{id}", session_page),
    view_route("/clients", clients_page),
    view_route("/doctor", doctor_page),
    view_route("/clients/{name}/remove", remove_client_confirm),
    view_route("/grants/{principal}/revoke", revoke_grant_confirm),
    form_route("/spaces/state", space_state),
    form_route("/clients/{name}/remove", remove_client),
    form_route("/grants/{principal}/revoke", revoke_grant),
]
