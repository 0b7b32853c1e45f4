"""``store.copy``: the owner copies the daemon's whole store into an empty store of either
kind, verified table by table before it answers (copy/run.py, docs/adr/0041).

The daemon does it, as it does every read and write of its store (RFC-0020 section 8: the CLI
never opens a database), on a thread of its own: the copy reads one snapshot of the store, so
the daemon's other requests go on meanwhile (what they write after the snapshot is not in the
copy: stop the harnesses, copy, then point ``store.url`` at the new store). Checked on
``files``, which no grant holds: a client token can't copy every other client's token hash.
"""

from __future__ import annotations

from typing import Any

import anyio

from ...copy.run import copy_store, open_source, open_target
from ..context import Request

__all__ = ["store_copy_verb"]


async def store_copy_verb(request: Request) -> dict[str, Any]:
    daemon = request.daemon
    url = str(request.params["to"])

    def copy() -> dict[str, Any]:
        with (
            open_target(url) as target,
            open_source(daemon.backend.name, daemon.app.store) as source,
        ):
            return copy_store(source, target)

    return await anyio.to_thread.run_sync(copy)
