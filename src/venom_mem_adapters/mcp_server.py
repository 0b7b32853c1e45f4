"""``venom-mem mcp``: the stdio MCP server a harness launches (CONTRACT section 7).

The implementation lives in :mod:`venom_mem_adapters.mcp`; this is the entry point the CLI
calls. Importing this module is cheap: ``mcp`` is imported when :func:`run_stdio` runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Mapping

__all__ = ["run_stdio"]


def run_stdio(environ: Mapping[str, str] | None = None) -> None:
    """Serve MCP on stdin/stdout until stdin closes. ``VENOM_MEM_TOKEN`` and the paths come
    from ``environ`` (the adapter's own environment by default)."""
    import anyio

    from .mcp.server import serve_stdio

    env = dict(os.environ if environ is None else environ)
    signal.signal(signal.SIGINT, _interrupted)
    anyio.run(serve_stdio, env)


def _interrupted(_signum: int, _frame: object) -> None:
    """Run in a terminal, the first Ctrl-C ends it. The SDK reads stdin on a worker thread
    that a terminal's read never gives back, and a normal exit would wait for that thread
    forever. Nothing here needs finishing: the daemon completes a call already sent."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(130)
