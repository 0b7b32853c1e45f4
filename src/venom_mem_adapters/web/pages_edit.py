"""Correcting memory from the page (ADR 0036): edit a memory, add one to a space, describe
a space. Each form is a :func:`~.views.form_route` (the secret, Origin and CSRF checked as
for every other form) and each change is the daemon's own verb, which decides the rights.

An add whose result points out ``similar`` memories leads to the new memory's page, which
lists them (ADR 0043).

An edit is ``memory.update`` with the revision the page showed. When another writer got
there first (``conflict.memory_revision``), the page shows what changed meanwhile (the diff
from the revision the person edited to the current one) and the form again, holding the
person's text on the new revision, to send again or change first.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from venom_mem_core.errors import VenomError
from venom_mem_core.grammar import IMPORTANCES, KINDS

from .diff import diff_revisions
from .views import call, form_route, page, redirect

__all__ = ["ROUTES", "edit_fields"]

_LISTS = ("tags", "branches")


def _field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _words(text: str) -> list[str]:
    return [word for word in text.replace(",", " ").split() if word]


def edit_fields(form: FormData) -> dict[str, Any]:
    """The memory's fields as the form holds them: text as typed (a browser sends CRLF),
    lists split on commas and spaces, importance and kind only when one is chosen."""
    fields: dict[str, Any] = {
        "title": _field(form, "title").strip(),
        "content": _field(form, "content").replace("\r\n", "\n"),
        "tags": _words(_field(form, "tags")),
        "branches": _words(_field(form, "branches")),
    }
    for name in ("kind", "importance"):
        if _field(form, name):
            fields[name] = _field(form, name)
    return fields


def _revision(form: FormData) -> int:
    value = _field(form, "revision")
    if not value.isdigit():
        raise VenomError.param("type", "revision", "revision must be a revision number")
    return int(value)


def _shown(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields back in the form's shape, to draw it again."""
    return {**fields, **{name: ", ".join(fields.get(name, [])) for name in _LISTS}}


async def edit(request: Request) -> Response:
    memory_id = str(request.path_params["id"])
    form = await request.form()
    revision, fields = _revision(form), edit_fields(form)
    try:
        result = await call(
            request, "memory.update", {"id": memory_id, "revision": revision, **fields}
        )
    except VenomError as error:
        if error.code != "conflict.memory_revision":
            raise
        return await _conflict(request, memory_id, revision, fields)
    done = "edited" if result.get("changed") else "unchanged"
    return redirect(f"/memory/{memory_id}?done={done}")


async def _conflict(
    request: Request, memory_id: str, edited: int, fields: dict[str, Any]
) -> Response:
    current = await call(request, "memory.get", {"id": memory_id, "include_deleted": True})
    old = await call(
        request, "memory.get", {"id": memory_id, "revision": edited, "include_deleted": True}
    )
    return page(
        request,
        "edit_conflict.html",
        status_code=409,
        memory=current,
        edited=edited,
        diff=diff_revisions(old, current),
        draft=_shown(fields),
        kinds=KINDS,
        importances=IMPORTANCES,
    )


async def add(request: Request) -> Response:
    form = await request.form()
    space = _field(form, "space").strip()
    params = {"space": space, **edit_fields(form)}
    params = {key: value for key, value in params.items() if value not in ("", [])}
    result = await call(request, "memory.add", params)
    # The new memory's page shows them (pages_memory.py), read again there by ID.
    similar = ",".join(str(other["id"]) for other in result.get("similar", []))
    done = "added" if result.get("changed", True) else "unchanged"
    return redirect(
        f"/memory/{result['id']}?done={done}" + (f"&similar={similar}" if similar else "")
    )


async def describe(request: Request) -> Response:
    form = await request.form()
    space = _field(form, "space").strip()
    description = " ".join(_field(form, "description").split())
    await call(request, "space.describe", {"space": space, "description": description})
    return redirect(f"/memories?space={quote(space)}&done=described")


ROUTES: list[Route] = [
    form_route("/memory/{id}/edit", edit),
    form_route("/memories/add", add),
    form_route("/space/describe", describe),
]
