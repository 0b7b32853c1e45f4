"""``venom-mem restart``: stop the daemon through its ``stop`` verb (the owner's; in-flight
requests are answered), wait for the process to go, then start a new one in the background
the way any store command does (on demand; ``daemon.startup = "explicit"`` says to serve)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST

from .daemon_call import call_daemon

__all__ = ["restart_daemon"]


def restart_daemon(environ: Mapping[str, str]) -> dict[str, Any]:
    """``{"stopped": old pid or null, "pid": new pid}``."""
    from venom_mem_adapters.client import connect

    stop = MANIFEST.verb("stop")
    assert stop is not None
    try:
        stopped = call_daemon(stop, {}, environ).get("pid")
    except VenomError as error:
        if error.code != "unavailable.not_running":
            raise
        stopped = None  # nothing to stop: starting one is all a restart has to do
    with connect(environ, may_start=True) as conn:
        pong = conn.call("ping", {})
    return {"stopped": stopped, "pid": pong.get("pid")}
