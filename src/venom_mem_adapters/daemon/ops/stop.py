"""``ping`` says which daemon answers (its source and pid).

``stop``: the owner asks the daemon to stop, as SIGTERM does (RFC-0020 section 8's
shutdown): the listener and the socket go at once, open connections read no more requests,
and the ones in flight, this one's reply included, are answered before it exits.

It is checked on ``files``, which only the owner holds (as ``skill.install`` is): a client
token never stops a daemon that other harnesses hold connections to.
"""

from __future__ import annotations

import os
from typing import Any

from ..context import Request

__all__ = ["ping_verb", "stop_verb"]


async def ping_verb(request: Request) -> dict[str, Any]:
    return {"pong": True, "source": request.daemon.source, "pid": os.getpid()}


async def stop_verb(request: Request) -> dict[str, Any]:
    request.daemon.stop()
    return {"pid": os.getpid(), "stopping": True}
