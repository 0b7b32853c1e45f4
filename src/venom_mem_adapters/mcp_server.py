"""``venom-mem mcp``: the stdio MCP server a harness launches (CONTRACT section 7).

The implementation lives in :mod:`venom_mem_adapters.mcp`; this is the entry point the CLI
calls. Importing this module is cheap: ``mcp`` is imported when :func:`run_stdio` runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["run_stdio"]


def run_stdio(environ: Mapping[str, str] | None = None) -> None:
    """Serve MCP on stdin/stdout until stdin closes. ``VENOM_MEM_TOKEN`` and the paths come
    from ``environ`` (the adapter's own environment by default)."""
    import anyio

    from .mcp.server import serve_stdio

    env = dict(os.environ if environ is None else environ)
    try:
        anyio.run(serve_stdio, env)
    except KeyboardInterrupt:
        # Run in a terminal, the first Ctrl-C ends it quietly, as closing stdin does.
        raise SystemExit(130) from None
