"""``config.get``, ``config.set`` and ``config.reload`` on the running daemon.

``config.get`` shows the running configuration (read on the store, ``*``); the secret
``embeddings.api_key`` is ``"<secret>"`` whenever it is set. ``config.set`` (admin)
validates one key, rewrites the file atomically and applies a reloadable key at once;
``config.reload`` (admin) reads the file again. Keys that need a restart keep the values the
daemon started with (:meth:`Config.reloaded`), and the reply says which are waiting. A file
that doesn't parse or validate changes nothing: the error names the file and line, and the
running configuration stays as it was.

Each applied change appends a ``config.changed`` event with the keys, never the values.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio

from venom_mem_core.config import Config, restart_required
from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Resource, check

from ...config_file import load_config, parse_value_text, write_config_value
from ..context import DaemonContext, Request

__all__ = ["apply_config", "config_get", "config_reload", "config_set"]


def apply_config(daemon: DaemonContext, from_file: Config) -> tuple[list[str], list[str]]:
    """Run with the file's config now, restart keys aside. Returns the keys applied and the
    changed keys that wait for a restart."""
    effective, pending = daemon.started_config.reloaded(from_file)
    changed = daemon.config.diff(effective)
    daemon.apply_config(effective)
    if changed or pending:
        daemon.events.emit(
            "config.changed", "*", {"keys": changed, "restart_required": list(pending)}
        )
    return changed, list(pending)


async def config_get(request: Request) -> dict[str, Any]:
    check(request.principal, "read", Resource.store())
    key = request.params.get("key")
    value = request.daemon.config.get(key)
    return {"key": key, "value": value} if key else {"value": value}


async def config_set(request: Request) -> dict[str, Any]:
    daemon = request.daemon
    key = str(request.params["key"])
    value = parse_value_text(str(request.params["value"]))
    async with daemon.ops.config_lock:
        from_file = await anyio.to_thread.run_sync(
            functools.partial(write_config_value, daemon.paths.config, key, value)
        )
        apply_config(daemon, from_file)
    return {"key": key, "restart_required": restart_required(key)}


async def config_reload(request: Request) -> dict[str, Any]:
    daemon = request.daemon
    async with daemon.ops.config_lock:
        try:
            from_file = await anyio.to_thread.run_sync(load_config, daemon.paths.config)
        except VenomError as error:
            raise VenomError(
                error.code,
                f"{error.message} (the running configuration is unchanged)",
                error.data,
            ) from None
        changed, pending = apply_config(daemon, from_file)
    return {"reloaded": True, "changed": changed, "restart_required": pending}
