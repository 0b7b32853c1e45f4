"""The Starlette application: the routes of the pages, the vendored static files, and the
guard in front of everything. Built by :func:`build_app`; nothing is constructed on import."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from . import pages_activity, pages_edit, pages_memory, pages_store
from .daemon import DaemonPool
from .guard import Guard, Secret
from .views import templates

__all__ = ["STATIC", "build_app"]

STATIC = Path(__file__).parent / "static"


def routes() -> list[BaseRoute]:
    return [
        *pages_store.ROUTES,
        *pages_memory.ROUTES,
        *pages_edit.ROUTES,
        *pages_activity.ROUTES,
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


def build_app(pool: DaemonPool, secret: Secret) -> Guard:
    app = Starlette(routes=routes())
    app.state.pool = pool
    app.state.secret = secret
    app.state.templates = templates()
    return Guard(app, secret)
