"""The daemon's lifecycle from the command line: ``venom-mem restart``, and the wait after
``stop``. Restart stops the daemon through its ``stop`` verb (the owner's; in-flight
requests are answered), waits for the process to go, then starts a new one in the
background the way any store command does (on demand; ``daemon.startup = "explicit"`` says
to serve).

Standard library only at import: ``venom-mem stop --json`` waits here.
"""

from __future__ import annotations

from collections.abc import Mapping

from venom_mem_core.errors import VenomError

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["STOP_WAIT_S", "restart_daemon", "wait_exit"]

STOP_WAIT_S = 10.0  # a stopping daemon answers what is in flight (2 s at most), then exits


def wait_exit(pid: object, timeout: float) -> bool:
    """Wait until process ``pid`` is gone; ``False`` if it outlived ``timeout``."""
    import os
    import time

    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return True  # another user's process now holds that number
        time.sleep(0.02)
    return False


def restart_daemon(environ: Mapping[str, str]) -> dict[str, Any]:
    """``{"stopped": old pid or null, "pid": new pid}``."""
    from venom_mem_adapters.client import connect

    try:
        with connect(environ, may_start=False) as conn:
            stopped = conn.call("stop", {}).get("pid")
        wait_exit(stopped, STOP_WAIT_S)
    except VenomError as error:
        if error.code != "unavailable.not_running":
            raise
        stopped = None  # nothing to stop: starting one is all a restart has to do
    with connect(environ, may_start=True) as conn:
        pong = conn.call("ping", {})
    return {"stopped": stopped, "pid": pong.get("pid")}
