"""A memory's page and its corrections (and, after an add from the page, the memories that
already say much the same): revisions, a diff between any two, going back to an
old revision, delete (revision-checked), restore, and purge behind a confirmation."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from venom_mem_core.errors import VenomError
from venom_mem_core.grammar import IMPORTANCES, KINDS

from .diff import diff_revisions
from .views import call, form_route, page, redirect, view_route

__all__ = ["ROUTES"]


def _id(request: Request) -> str:
    return str(request.path_params["id"])


async def _form_int(request: Request, name: str) -> int:
    value = (await request.form()).get(name)
    if not isinstance(value, str) or not value.isdigit():
        raise VenomError.param("type", name, f"{name} must be a revision number")
    return int(value)


def _int_arg(request: Request, name: str) -> int | None:
    value = request.query_params.get(name, "")
    return int(value) if value.isdigit() else None


async def _version(request: Request, memory_id: str, revision: int) -> Any:
    # include_deleted: a deleted memory's kept revisions are still worth comparing.
    params = {"id": memory_id, "revision": revision, "include_deleted": True}
    return await call(request, "memory.get", params)


async def _diff(request: Request, memory_id: str, old: int, new: int) -> Any:
    if old > new:
        old, new = new, old
    a = await _version(request, memory_id, old)
    b = await _version(request, memory_id, new)
    return diff_revisions(a, b)


_MEMORY_ID = re.compile(r"m[1-9][0-9]{0,18}")
_SIMILAR_SHOWN = 3  # memory.add's own limit


async def _similar(request: Request) -> list[Any]:
    """The memories named in ``?similar=`` (an add's near-duplicates, pages_edit.py) that the
    caller can still read and that are live, read again: the link carries only IDs."""
    named = request.query_params.get("similar", "").split(",")[:_SIMILAR_SHOWN]
    found = []
    for other in named:
        if not _MEMORY_ID.fullmatch(other):
            continue
        try:
            found.append(await call(request, "memory.get", {"id": other}))
        except VenomError as error:
            if not error.code.startswith(("not_found.", "denied.")):
                raise
    return found


async def memory_page(request: Request) -> Response:
    memory_id = _id(request)
    memory = await call(request, "memory.get", {"id": memory_id, "include_deleted": True})
    versions = (await call(request, "memory.history", {"id": memory_id}))["versions"]
    related = await _related(request, memory_id, deleted="deleted" in memory)
    diff = None
    if len(versions) >= 2:
        diff = await _diff(request, memory_id, versions[1]["revision"], versions[0]["revision"])
    return page(
        request,
        "memory.html",
        memory=memory,
        versions=versions,
        links=related,
        diff=diff,
        done=request.query_params.get("done", ""),
        similar=await _similar(request),
        form_values=_form_values(memory),
        open_edit=request.query_params.get("edit") == "1",
        kinds=KINDS,
        importances=IMPORTANCES,
    )


async def _related(request: Request, memory_id: str, *, deleted: bool) -> list[Any]:
    """The memory's links, unlinked ones too (docs/adr/0042); a deleted memory shows none,
    as memory.related refuses it."""
    if deleted:
        return []
    params = {"id": memory_id, "include_unlinked": True}
    return list((await call(request, "memory.related", params))["links"])


def _form_values(memory: Any) -> dict[str, Any]:
    """The edit form, filled in with the revision shown."""
    return {
        "title": memory.get("title", ""),
        "content": memory.get("content", ""),
        "tags": ", ".join(memory.get("tags", [])),
        "branches": ", ".join(memory.get("branches", [])),
        "kind": memory.get("kind", "note"),
        "importance": memory.get("importance", "normal"),
    }


async def diff_page(request: Request) -> Response:
    memory_id = _id(request)
    old, new = _int_arg(request, "a"), _int_arg(request, "b")
    if old is None or new is None:
        raise VenomError.param("missing", "a", "pick two revisions to compare")
    memory = await call(request, "memory.get", {"id": memory_id, "include_deleted": True})
    diff = await _diff(request, memory_id, old, new)
    return page(request, "diff.html", memory=memory, diff=diff)


async def revision_page(request: Request) -> Response:
    memory_id = _id(request)
    revision = int(request.path_params["revision"])
    memory = await call(request, "memory.get", {"id": memory_id, "include_deleted": True})
    version = await _version(request, memory_id, revision)
    return page(request, "revision.html", memory=memory, version=version)


async def delete(request: Request) -> Response:
    memory_id = _id(request)
    revision = await _form_int(request, "revision")
    await call(request, "memory.delete", {"id": memory_id, "revision": revision})
    return redirect(f"/memory/{memory_id}?done=deleted")


async def restore(request: Request) -> Response:
    memory_id = _id(request)
    await call(request, "memory.restore", {"id": memory_id})
    return redirect(f"/memory/{memory_id}?done=restored")


async def revert(request: Request) -> Response:
    """Back to an old revision's text: RFC-0020 section 2 has no revert verb, so this is
    memory.update with that version, checked against the revision the page showed."""
    memory_id = _id(request)
    current = await _form_int(request, "revision")
    target = await _form_int(request, "to")
    old = await _version(request, memory_id, target)
    params = {
        "id": memory_id,
        "revision": current,
        "content": old["content"],
        "title": old.get("title", ""),
        "kind": old["kind"],
        "tags": old.get("tags", []),
    }
    result = await call(request, "memory.update", params)
    done = f"reverted-to-{target}" if result.get("changed") else "unchanged"
    return redirect(f"/memory/{memory_id}?done={done}")


async def purge_confirm(request: Request) -> Response:
    memory_id = _id(request)
    memory = await call(request, "memory.get", {"id": memory_id, "include_deleted": True})
    return page(request, "purge.html", memory=memory, mismatch=False)


async def purge(request: Request) -> Response:
    memory_id = _id(request)
    typed = (await request.form()).get("confirm")
    if typed != memory_id:
        memory = await call(request, "memory.get", {"id": memory_id, "include_deleted": True})
        return page(request, "purge.html", memory=memory, mismatch=True)
    await call(request, "memory.purge", {"id": memory_id})
    return redirect(f"/?done=purged-{memory_id}")


ROUTES: list[Route] = [
    view_route("/memory/{id}", memory_page),
    view_route("/memory/{id}/diff", diff_page),
    view_route("/memory/{id}/revision/{revision:int}", revision_page),
    view_route("/memory/{id}/purge", purge_confirm),
    form_route("/memory/{id}/delete", delete),
    form_route("/memory/{id}/restore", restore),
    form_route("/memory/{id}/revert", revert),
    form_route("/memory/{id}/purge", purge),
]
