"""One call to the daemon from the command line: the params checked here first, so a bad
command never launches a daemon; ``stop`` waits for the process to go.

Standard library only at import, like :mod:`.run`, which calls it on the ``--json`` path.
"""

from __future__ import annotations

from collections.abc import Mapping

from venom_mem_core.manifest_types import Verb
from venom_mem_core.params import check_params

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["STOP_WAIT_S", "call_daemon", "wait_exit"]

STOP_WAIT_S = 10.0  # a stopping daemon answers what is in flight (2 s at most), then exits


def call_daemon(
    verb: Verb, params: Mapping[str, Any], environ: Mapping[str, str]
) -> dict[str, Any]:
    """Check the params locally (so a bad command never launches a daemon), then call."""
    from venom_mem_adapters.client import connect

    checked = check_params(verb, params)
    with connect(environ, may_start=verb.starts_daemon) as conn:
        result = conn.call(verb.name, checked)
    if verb.name == "stop":
        # The reply comes before the exit: wait for it, so `stop && serve` finds no daemon.
        wait_exit(result.get("pid"), STOP_WAIT_S)
    return result


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
