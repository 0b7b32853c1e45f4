"""How the CLI writes a result and an error (CONTRACT section 3): one JSON line on stdout
with ``--json``; ``error: <code>: <message>`` and the fix on stderr for a person. Below both
the router (run.py) and the local commands that print for themselves (setup_run.py).
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from venom_mem_core.errors import VenomError

__all__ = ["print_error", "print_json"]


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
