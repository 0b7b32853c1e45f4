"""The MCP server on the official SDK's low-level API (CONTRACT section 7), for two callers:
the in-process adapter (``venom-mem mcp --in-process``, :func:`serve_handover`), whose calls
go over its held daemon connection, off the event loop and one at a time; and the daemon's
own MCP sessions (:mod:`venom_mem_adapters.daemon.mcp_session`, :func:`session_server`),
whose calls are dispatched in the daemon itself.

``tools/list`` answers from the catalog built once from the manifest; it never touches the
daemon. ``tools/call`` checks the arguments, then makes the call. Every outcome a caller can
cause is a result: the ok object as ``structuredContent`` plus the same JSON as one text content, or
``isError`` with one text content ``{"error": {...}}``. Nothing a caller or the daemon does
raises out of a tool call.

This is the only module that imports ``mcp``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

import venom_mem_core
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST

from .front import Handover
from .tools import INSTRUCTIONS, SERVER_NAME, ToolSpec, build_catalog, no_such_tool
from .upstream import Upstream

__all__ = [
    "SERVER_NAME",
    "Call",
    "ToolRunner",
    "build_server",
    "error_result",
    "in_thread",
    "ok_result",
    "serve_handover",
    "session_server",
    "tool_listing",
]

# One call to the daemon: the verb and its checked params in, the ok object out (or VenomError).
Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

log = logging.getLogger("venom_mem.mcp")


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
    # From the same JSON the front door lists before the SDK is loaded: one listing.
    return types.Tool.model_validate(spec.to_json())


def tool_listing(catalog: Mapping[str, ToolSpec]) -> list[types.Tool]:
    """The ``tools/list`` entries, in manifest order."""
    return [_tool(spec) for spec in catalog.values()]


def in_thread(upstream: Upstream) -> Call:
    """The blocking upstream's calls, each in a worker thread and one at a time."""
    lock = anyio.Lock()

    async def call(verb: str, params: dict[str, Any]) -> dict[str, Any]:
        async with lock:
            return await anyio.to_thread.run_sync(upstream.call, verb, params)

    return call


class ToolRunner:
    """Checks a call's arguments and makes it with ``call``."""

    def __init__(self, call: Call, catalog: Mapping[str, ToolSpec]) -> None:
        self._call = call
        self._catalog = catalog

    async def run(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ok object, or :class:`VenomError`."""
        spec = self._catalog.get(name)
        if spec is None:
            raise no_such_tool(name)
        return await self._call(spec.verb.name, spec.check(arguments))

    async def result(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        try:
            return ok_result(await self.run(name, arguments))
        except VenomError as error:
            return error_result(error)
        except Exception as exc:  # a bug here must not take the harness's server down
            log.exception("tool %s failed", name)
            return error_result(VenomError("failed.internal", f"{type(exc).__name__}: {exc}"))


def build_server(upstream: Upstream, catalog: Mapping[str, ToolSpec] | None = None) -> Server[Any]:
    """The low-level server: ``catalog``'s tools listed (every tool by default), calls made
    on ``upstream``. A call to a tool left out of the listing still reaches the daemon,
    whose ``denied.*`` says what is missing better than "no such tool" would."""
    everything = build_catalog(MANIFEST)
    listing = tool_listing(everything if catalog is None else catalog)
    return session_server(in_thread(upstream), listing, everything)


def session_server(
    call: Call, listing: Sequence[types.Tool], everything: Mapping[str, ToolSpec]
) -> Server[Any]:
    """A server that lists ``listing`` and runs any tool of ``everything`` with ``call``.
    The daemon builds both once per audience and a server per session."""
    runner = ToolRunner(call, everything)

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


class _ReplayInput:
    """The SDK's stdin after the handover: the front door's lines first, then the rest."""

    def __init__(self, lines: list[bytes], reader: BinaryIO) -> None:
        self._lines = list(lines)
        self._reader = reader

    def __aiter__(self) -> _ReplayInput:
        return self

    async def __anext__(self) -> str:
        if self._lines:
            return self._lines.pop(0).decode("utf-8", "replace")
        line = await anyio.to_thread.run_sync(self._reader.readline, abandon_on_cancel=True)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _ReplayOutput:
    """The SDK's stdout after the handover: drops its answer to the replayed
    ``initialize``, which the front door already gave."""

    def __init__(self, writer: BinaryIO, lock: threading.Lock, initialize_id: Any) -> None:
        self._writer = writer
        self._lock = lock
        self._swallow = initialize_id

    async def write(self, text: str) -> None:
        if self._swallow is not None:
            message = json.loads(text)
            if message.get("id") == self._swallow and ("result" in message or "error" in message):
                self._swallow = None
                return
        data = text.encode("utf-8")
        with self._lock:
            self._writer.write(data)

    async def flush(self) -> None:
        with self._lock:
            self._writer.flush()


async def serve_handover(
    upstream: Upstream,
    *,
    catalog: Mapping[str, ToolSpec],
    handover: Handover,
    reader: BinaryIO,
    writer: BinaryIO,
    lock: threading.Lock,
) -> None:
    """Serve MCP from where the front door stopped until the harness closes stdin."""
    server = build_server(upstream, catalog)
    stdin: Any = _ReplayInput(handover.lines, reader)
    stdout: Any = _ReplayOutput(writer, lock, handover.initialize_id)
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
