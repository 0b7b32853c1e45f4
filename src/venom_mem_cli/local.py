"""What the CLI runs in its own process: the manifest's ``local`` verbs and its ``cli_only``
switches. The manifest says which verbs and params these are; this module only says how each
runs (a test holds the two to each other). Each runner gets the checked params and returns a
result to print, or an exit code once it has printed what it had to.

Standard library only at import: each runner imports what it needs when it runs.
"""

from __future__ import annotations

import sys

from venom_mem_core.manifest_types import Verb

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Runner = Callable[[Mapping[str, Any], Mapping[str, str], bool], "dict[str, Any] | int"]
    Switch = Callable[[Verb, Mapping[str, Any], Mapping[str, str], bool, bool], int]

__all__ = ["LOCAL_VERBS", "SWITCHES"]


def _serve(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from .bootstrap import run_serve

    return run_serve(environ, on_demand=False, status_fd=None)


def _mcp(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from venom_mem_adapters.mcp_server import run_stdio

    run_stdio(environ, in_process=params["in_process"])
    return 0


def _restart(
    params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool
) -> dict[str, Any]:
    from .lifecycle import restart_daemon

    return restart_daemon(environ)


def _setup(
    params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool
) -> dict[str, Any] | int:
    from .harness_setup import render_setup, run_setup

    result = run_setup(params["harnesses"], replace=params["replace"], environ=environ)
    if as_json:
        return result
    sys.stdout.write(render_setup(result))  # the commands exactly as they are to be run
    return 0


def _ui(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from venom_mem_adapters.web.serve import run_ui

    return run_ui(environ, port=params["port"])


def _follow(
    verb: Verb,
    params: Mapping[str, Any],
    environ: Mapping[str, str],
    as_json: bool,
    full_times: bool,
) -> int:
    from .follow import run_follow

    return run_follow(verb, params, as_json, environ, full_times=full_times)


# Keyed by the manifest's names: every ``local`` verb, every ``cli_only`` param.
LOCAL_VERBS: dict[str, Runner] = {
    "serve": _serve,
    "mcp": _mcp,
    "restart": _restart,
    "setup": _setup,
    "ui": _ui,
}
SWITCHES: dict[str, Switch] = {"follow": _follow}
