"""What the CLI runs in its own process: the functions the manifest's ``local`` verbs and
``cli_only`` switches name (``local="serve"``, ``cli_only="follow"``). Each verb's runner
gets the checked params and returns a result to print, or an exit code once it has printed
what it had to; a switch gets the verb and its params and returns an exit code.

Standard library only at import: each runner imports what it needs when it runs.
"""

from __future__ import annotations

from venom_mem_core.lookup import find
from venom_mem_core.manifest_types import Manifest, Param, Verb

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Runner = Callable[[Mapping[str, Any], Mapping[str, str], bool], "dict[str, Any] | int"]
    Switch = Callable[[Verb, Mapping[str, Any], Mapping[str, str], bool, bool], int]

__all__ = [
    "check_local",
    "export",
    "follow",
    "import_files",
    "mcp",
    "restart",
    "runner",
    "serve",
    "setup",
    "switch",
    "ui",
]


def runner(verb: Verb) -> Runner:
    """The function ``verb.local`` names; ``failed.internal`` naming the verb if missing."""
    assert verb.local is not None, verb.name
    found: Runner = find(verb, __name__, verb.local, "local")
    return found


def switch(verb: Verb, param: Param) -> Switch:
    """The function ``param.cli_only`` names; ``failed.internal`` naming the verb if
    missing."""
    assert param.cli_only is not None, param.name
    found: Switch = find(verb, __name__, param.cli_only, f"{param.name} switch")
    return found


def check_local(manifest: Manifest) -> None:
    """Every local verb's runner and every switch is here (the CLI refuses to start on a
    gap, naming the verb)."""
    for verb in manifest.verbs:
        if verb.local is not None:
            runner(verb)
        for param in verb.params:
            if param.cli_only is not None:
                switch(verb, param)


def serve(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from .bootstrap import run_serve

    return run_serve(environ, on_demand=False, status_fd=None)


def mcp(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from venom_mem_adapters.mcp_server import run_stdio

    run_stdio(environ, in_process=params["in_process"])
    return 0


def restart(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> dict[str, Any]:
    from .lifecycle import restart_daemon

    return restart_daemon(environ)


def setup(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from .setup_run import run_setup_command

    return run_setup_command(params, environ, as_json)


def session_hook(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from .session_hook import run_session_hook

    return run_session_hook(params["harness"], environ)


def export(
    params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool
) -> dict[str, Any] | int:
    from .export_cli import run_export

    result = run_export(params, environ)
    return result if result["out"] is not None else 0  # stdout held the export itself


def import_files(
    params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool
) -> dict[str, Any]:
    from .export_cli import run_import

    return run_import(params, environ)


def ui(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from venom_mem_adapters.web.serve import run_ui

    return run_ui(environ, port=params["port"])


def follow(
    verb: Verb,
    params: Mapping[str, Any],
    environ: Mapping[str, str],
    as_json: bool,
    full_times: bool,
) -> int:
    from .follow import run_follow

    return run_follow(verb, params, as_json, environ, full_times=full_times)
