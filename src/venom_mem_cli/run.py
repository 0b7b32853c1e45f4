"""Run one command line and turn the outcome into output and an exit code.

Standard library only; shared by the ``--json`` path and the rich-click commands, which
both hand the words after the verb's name to :func:`run_command`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest_types import Verb
from venom_mem_core.params import check_params

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = [
    "call_daemon",
    "print_error",
    "print_json",
    "result_exit_code",
    "run_command",
    "situate",
]


def run_command(
    verb: Verb, words: Sequence[str], environ: Mapping[str, str], argv: Sequence[str]
) -> int:
    """``verb`` with the words that follow its name on the command line ``argv``: parsed
    by :func:`.argv.parse_words`, run (on the daemon, or here for a ``local`` verb or a
    ``cli_only`` switch), printed as JSON with ``--json`` and for a person without."""
    from .argv import parse_words

    as_json = "--json" in words
    try:
        params, flags = parse_words(verb, words)
        if "--here" in flags:
            from .here import apply_here

            params = apply_here(verb.name, params)
        switches = [p for p in verb.params if p.cli_only and params.pop(p.name, False)]
        full_times = "--full-times" in flags
        if verb.local or switches:
            from .local import runner, switch

            if switches:
                return switch(verb, switches[0])(verb, params, environ, as_json, full_times)
            outcome = runner(verb)(check_params(verb, params), environ, as_json)
            if isinstance(outcome, int):
                return outcome
            result = outcome
        else:
            result = call_daemon(verb, params, environ)
    except VenomError as error:
        situated = situate(error, verb, environ, argv)
        if as_json:
            print_json({"error": situated.to_json()})
        else:
            print_error(situated)
        return error.exit_code
    if as_json:
        print_json(result)
    else:
        from .render import render

        render(verb, result, full_times=full_times, params=params)
    return result_exit_code(verb, result)


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
        from .lifecycle import STOP_WAIT_S, wait_exit

        wait_exit(result.get("pid"), STOP_WAIT_S)
    return result


def situate(
    error: VenomError, verb: Verb | None, environ: Mapping[str, str], argv: Sequence[str]
) -> VenomError:
    """The error with a fix for this command line (:mod:`.fixes`, imported only on errors)."""
    from .fixes import situate as situated

    return situated(error, verb, environ, argv)


def result_exit_code(verb: Verb, result: Mapping[str, Any]) -> int:
    """0, except a doctor report with a failing check, which exits 1 (CONTRACT section 9)."""
    return 1 if verb.name == "doctor" and result.get("status") == 2 else 0


def print_json(obj: Mapping[str, Any], out: TextIO = sys.stdout) -> None:
    out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()


def print_error(error: VenomError, err: TextIO = sys.stderr) -> None:
    from .fixes import human_hint

    err.write(f"error: {error.code}: {error.message}\n")
    fix = error.data.get("fix") or human_hint(error)
    if fix:
        err.write(f"fix: {fix}\n")
    err.flush()
