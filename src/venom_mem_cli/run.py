"""Run one verb against the daemon and turn the outcome into output and an exit code.

Standard library only; shared by the ``--json`` path and the rich-click commands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest_types import Verb
from venom_mem_core.params import check_params

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["call_daemon", "print_error", "print_json", "result_exit_code"]


def call_daemon(
    verb: Verb, params: Mapping[str, Any], environ: Mapping[str, str]
) -> dict[str, Any]:
    """Check the params locally (so a bad command never launches a daemon), then call."""
    from venom_mem_adapters.client import connect

    checked = check_params(verb, params)
    with connect(environ, may_start=verb.starts_daemon) as conn:
        return conn.call(verb.name, checked)


def result_exit_code(verb: Verb, result: Mapping[str, Any]) -> int:
    """0, except a doctor report with a failing check, which exits 1 (CONTRACT section 9)."""
    return 1 if verb.name == "doctor" and result.get("status") == 2 else 0


def print_json(obj: Mapping[str, Any], out: TextIO = sys.stdout) -> None:
    out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()


def print_error(error: VenomError, err: TextIO = sys.stderr) -> None:
    err.write(f"error: {error.code}: {error.message}\n")
    fix = error.data.get("fix")
    if fix:
        err.write(f"fix: {fix}\n")
    err.flush()
