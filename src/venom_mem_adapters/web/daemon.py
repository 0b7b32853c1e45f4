"""The page server's connections to the daemon: a pool of held links, so that a long poll on
the activity feed never holds up a page, and each call has a connection to itself.

Each link is :class:`~venom_mem_adapters.mcp.link.DaemonLink`, which never resends a request
the daemon may have received (RFC-0020 section 8). Holding them open keeps an on-demand daemon
from idling out under a person who has the page open.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from venom_mem_adapters.mcp.link import DaemonLink
from venom_mem_adapters.mcp.upstream import Wire
from venom_mem_core.token_text import OWNER_TOKEN

__all__ = ["CLIENT_NAME", "DaemonPool", "ui_token"]

CLIENT_NAME = "venom-mem-ui"
_IDLE_LINKS_KEPT = 4


def ui_token(environ: Mapping[str, str]) -> str:
    """The principal the person gave the page: ``VENOM_MEM_TOKEN`` when it is set (set and
    empty means ``unknown``), else ``@owner``, the person at their own terminal. Below a
    process manager ``@owner`` is refused by :func:`~venom_mem_adapters.client.connect`."""
    if "VENOM_MEM_TOKEN" in environ:
        return environ["VENOM_MEM_TOKEN"]
    return OWNER_TOKEN


class DaemonPool:
    """Thread-safe: any number of callers, each on a link of its own."""

    def __init__(self, environ: Mapping[str, str], token: str) -> None:
        self._environ = dict(environ)
        self._token = token
        self._idle: list[DaemonLink] = []
        self._lock = threading.Lock()

    def _connect(self, may_start: bool) -> Wire:
        from venom_mem_adapters.client import connect

        return connect(self._environ, may_start=may_start, client=CLIENT_NAME, token=self._token)

    def call(self, verb: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The ok object, or :class:`~venom_mem_core.errors.VenomError` as the daemon said it."""
        with self._lock:
            link = self._idle.pop() if self._idle else DaemonLink(self._connect)
        try:
            return link.call(verb, dict(params or {}))
        finally:
            with self._lock:
                if len(self._idle) < _IDLE_LINKS_KEPT:
                    self._idle.append(link)
                else:
                    link.close()

    def close(self) -> None:
        with self._lock:
            links, self._idle = self._idle, []
        for link in links:
            link.close()
