"""The console script. ``--json`` calls take a path that imports nothing heavy (no rich, no
httpx, no mcp); everything else goes through the rich-click application (ADR 0006)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["main"]

HELP_FLAGS = {"-h", "--help"}


def run_json(argv: Sequence[str]) -> int | None:
    """Run a ``--json`` call; ``None`` hands the command to the rich-click application."""
    from venom_mem_core.errors import VenomError

    from .argv import find_verb, parse_argv
    from .run import call_daemon, print_json, result_exit_code, situate

    found = find_verb(argv)
    if found is not None and (found[0].local or found[0].name == "events"):
        return None
    try:
        verb, params, flags = parse_argv(argv)
        if "--here" in flags:
            from .here import apply_here

            params = apply_here(verb.name, params)
        result = call_daemon(verb, params, os.environ)
        print_json(result)
        return result_exit_code(verb, result)
    except VenomError as error:
        situated = situate(error, found[0] if found else None, os.environ, argv)
        print_json({"error": situated.to_json()})
        return error.exit_code


def launched_serve(argv: Sequence[str]) -> int | None:
    """``serve --on-demand --status-fd N`` as the launcher writes it: straight to the
    composition root, without building the rich-click tree (cold start is on the clock)."""
    if len(argv) != 4 or argv[:3] != ["serve", "--on-demand", "--status-fd"]:
        return None
    if not argv[3].isdigit():
        return None
    from .bootstrap import run_serve

    return run_serve(os.environ, on_demand=True, status_fd=int(argv[3]))


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    served = launched_serve(args)
    if served is not None:
        sys.exit(served)
    if "--json" in args and not HELP_FLAGS.intersection(args):
        code = run_json(args)
        if code is not None:
            sys.exit(code)
    from .app import run_app

    run_app(args)
