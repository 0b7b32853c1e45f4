"""The stdio MCP server on the official SDK's low-level API (CONTRACT section 7).

``tools/list`` answers from the catalog built once from the manifest; it never touches the
daemon. ``tools/call`` checks the arguments, then makes the call on the held daemon
connection, off the event loop and one at a time. Every outcome a caller can cause is a
result: the ok object as ``structuredContent`` plus the same JSON as one text content, or
``isError`` with one text content ``{"error": {...}}``. Nothing a caller or the daemon does
raises out of a tool call.

This is the only module that imports ``mcp``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

import venom_mem_core
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST, T1_SENTENCE

from .link import DaemonLink, Upstream, daemon_connector
from .tools import ToolSpec, build_catalog

__all__ = [
    "SERVER_NAME",
    "ToolRunner",
    "build_server",
    "error_result",
    "ok_result",
    "serve_stdio",
    "tool_listing",
]

log = logging.getLogger("venom_mem.mcp")

SERVER_NAME = "venom-mem"
INSTRUCTIONS = (
    f"{MANIFEST.summary}. Use spaces `user` for what is true of this person everywhere and "
    f"`project/<repository directory name>` for one repository. {T1_SENTENCE}"
)


def _dumps(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def ok_result(ok: dict[str, Any]) -> types.CallToolResult:
    """A successful call: the ok object, structured and as text."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_dumps(ok))],
        structured_content=ok,
    )


def error_result(error: VenomError) -> types.CallToolResult:
    """A failed call: ``isError`` and the error object as text."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_dumps({"error": error.to_json()}))],
        is_error=True,
    )


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=types.ToolAnnotations(read_only_hint=spec.read_only, open_world_hint=False),
    )


def tool_listing(catalog: Mapping[str, ToolSpec]) -> list[types.Tool]:
    """The ``tools/list`` entries, in manifest order."""
    return [_tool(spec) for spec in catalog.values()]


class ToolRunner:
    """Checks a call's arguments and makes it on the upstream, one call at a time."""

    def __init__(self, upstream: Upstream, catalog: Mapping[str, ToolSpec]) -> None:
        self._upstream = upstream
        self._catalog = catalog
        self._lock = anyio.Lock()

    async def run(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ok object, or :class:`VenomError`."""
        spec = self._catalog.get(name)
        if spec is None:
            raise VenomError("unsupported.verb", f"no tool named {name!r}", {"tool": name})
        params = spec.check(arguments)
        async with self._lock:
            return await anyio.to_thread.run_sync(self._upstream.call, spec.verb.name, params)

    async def result(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        try:
            return ok_result(await self.run(name, arguments))
        except VenomError as error:
            return error_result(error)
        except Exception as exc:  # a bug here must not take the harness's server down
            log.exception("tool %s failed", name)
            return error_result(VenomError("failed.internal", f"{type(exc).__name__}: {exc}"))


def build_server(upstream: Upstream, catalog: Mapping[str, ToolSpec] | None = None) -> Server[Any]:
    """The low-level server: tools listed from the manifest, calls made on ``upstream``."""
    tools = build_catalog(MANIFEST) if catalog is None else catalog
    listing = tool_listing(tools)
    runner = ToolRunner(upstream, tools)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool.model_copy(deep=True) for tool in listing])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await runner.result(params.name, params.arguments)

    return Server(
        SERVER_NAME,
        version=venom_mem_core.__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(environ: Mapping[str, str]) -> None:
    """Serve MCP on stdin/stdout until the harness closes stdin."""
    link = DaemonLink(daemon_connector(environ))
    server = build_server(link)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        link.close()
