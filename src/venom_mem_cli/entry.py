"""The console script. ``--json`` calls take a path that imports nothing heavy (no rich, no
httpx, no mcp); everything else goes through the rich-click application (ADR 0006)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def run_json(argv: Sequence[str]) -> int:
    """Run a ``--json`` call without the rich-click tree: the same parser and runner as a
    rich-click command's (:func:`.run.run_command`), only not built first."""
    from venom_mem_core.errors import VenomError

    from .argv import split_command
    from .output import print_json
    from .run import run_command

    try:
        verb, words = split_command(argv)
    except VenomError as error:
        print_json({"error": error.to_json()})
        return error.exit_code
    return run_command(verb, words, os.environ, argv)


def launched_serve(argv: Sequence[str]) -> int | None:
    """``serve --on-demand --status-fd N`` as the launcher writes it: straight to the
    composition root, without building the rich-click tree (cold start is on the clock).
    With ``--standby-fd M`` after it, a standby: the daemon's modules loaded, then serve
    once ``go`` comes on that pipe, or exit at its end (client/_launcher.py)."""
    if len(argv) not in (4, 6) or argv[:3] != ["serve", "--on-demand", "--status-fd"]:
        return None
    if not argv[3].isdigit():
        return None
    standby_fd = None
    if len(argv) == 6:
        if argv[4] != "--standby-fd" or not argv[5].isdigit():
            return None
        standby_fd = int(argv[5])
    from venom_mem_adapters.start_gc import pause

    pause()  # until the daemon is ready
    from .bootstrap import run_serve, wait_as_standby

    if standby_fd is not None and not wait_as_standby(standby_fd):
        return 0
    return run_serve(os.environ, on_demand=True, status_fd=int(argv[3]))


def launched_mcp(argv: Sequence[str]) -> int | None:
    """``mcp`` as a harness launches it: the ``--json`` path's parser and runner, without the
    rich-click tree. Every harness session is such a process for as long as it runs, so its
    start-up and its memory count (rich alone is several MiB; docs/adr/0038)."""
    if not argv or argv[0] != "mcp":
        return None
    if list(argv) == ["mcp"]:  # the relay, as harnesses launch it
        from venom_mem_adapters.start_gc import pause

        pause()  # until the relay hands the harness's stream over (mcp/relay.py)
        from venom_mem_adapters.client import start_standby

        # Before anything else is loaded, so that the standby loads the daemon's modules
        # while this process loads its own and the harness initializes (docs/adr/0038).
        start_standby(os.environ)
        return run_json(argv)
    from .argv import HELP_FLAGS

    if HELP_FLAGS.intersection(argv):
        return None
    if "--in-process" not in argv:
        from venom_mem_adapters.start_gc import pause

        pause()  # until the relay hands the harness's stream over (mcp/relay.py)
    return run_json(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    served = launched_serve(args)
    if served is None:
        served = launched_mcp(args)
    if served is not None:
        sys.exit(served)
    from .argv import HELP_FLAGS  # both paths load it anyway; the launched serve doesn't

    if "--json" in args and not HELP_FLAGS.intersection(args):
        sys.exit(run_json(args))
    from .app import run_app

    run_app(args)
