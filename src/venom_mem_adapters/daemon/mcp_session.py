"""The daemon's MCP sessions (docs/adr/0038).

A connection whose ``hello`` asks for ``protocol: "mcp"`` passed the same socket checks and
the same token as any other; from the hello's answer on it speaks MCP's newline-delimited
JSON-RPC, and the official SDK's low-level server serves it here, over the SDK's own stdio
transport fed from the connection's frame reader. A tool call is the call a venom-mem frame
on that connection would make (:meth:`Host.call`: its principal, rechecked each time, its
turn at the readers and the writer). A session's calls run one at a time, in the order they
came, as they do in the in-process adapter: a harness that sends a write and then a search
in one turn finds what it wrote. The listing is sized to the principal that said hello, as
the adapter sizes it to its token (``mcp.tools``).

``venom-mem mcp`` is then only a relay of bytes (:mod:`venom_mem_adapters.mcp.relay`): the
SDK, about a second to import and most of an adapter's memory, is loaded once per daemon,
in a worker thread when the first session arrives, never at start.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.records import Principal
from venom_mem_core.validation import check_value

from ..mcp.harness_session import NAMED_VERBS
from ..mcp.tools import ToolSpec, audience_for_principal, build_catalog
from .flow import FrameReader, FrameTooLong

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["Host", "asked_for", "serve"]

log = logging.getLogger("venom_mem.daemon")


class Host(Protocol):
    """What a session needs of its connection (``connection.Connection``)."""

    @property
    def principal(self) -> Principal | None: ...

    @property
    def harness_session(self) -> Mapping[str, Any] | None:
        """session.start's params for the harness session hello named, or None."""

    async def call(self, verb: Any, params: Any) -> dict[str, Any]: ...

    async def send_frame(self, frame: bytes) -> None: ...


def asked_for(params: Any) -> bool:
    """Whether hello's params ask for an MCP session; ``invalid_params.type`` for a protocol
    the manifest doesn't name. Params that aren't an object are hello's own to refuse."""
    if not isinstance(params, Mapping) or "protocol" not in params:
        return False
    hello = MANIFEST.verb("hello")
    param = hello.param("protocol") if hello is not None else None
    assert param is not None  # the manifest's hello has it
    return bool(check_value(params["protocol"], param.type, "protocol") == "mcp")


class _Sdk:
    """The SDK's server module and what every session shares, built once, off the loop."""

    def __init__(self) -> None:
        self.server: ModuleType = importlib.import_module("venom_mem_adapters.mcp.server")
        self.stdio: ModuleType = importlib.import_module("mcp.server.stdio")
        self.everything: dict[str, ToolSpec] = build_catalog(MANIFEST)
        self._listings: dict[str, list[Any]] = {}

    def listing(self, audience: str) -> list[Any]:
        if audience not in self._listings:
            self._listings[audience] = self.server.tool_listing(build_catalog(MANIFEST, audience))
        return self._listings[audience]


_loaded: list[_Sdk] = []


async def _sdk() -> _Sdk:
    # A thread: the import holds the GIL for about a second, but the event loop keeps
    # answering between its bytecodes; on the loop itself every connection would wait.
    if not _loaded:
        sdk = await anyio.to_thread.run_sync(_Sdk)
        if not _loaded:  # two first sessions at once each built one; keep the first
            _loaded.append(sdk)
    return _loaded[0]


class _Lines:
    """The SDK's stdin: the connection's lines, until the peer ends."""

    def __init__(self, reader: FrameReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.next_frame()
        except FrameTooLong:  # the relay answers such a message itself: this is no relay
            log.warning("an MCP message over 1 MiB ends its session")
            raise StopAsyncIteration from None
        if line is None:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _Sender:
    """The SDK's stdout: each message sent on the connection as it comes."""

    def __init__(self, host: Host) -> None:
        self._host = host

    async def write(self, text: str) -> None:
        await self._host.send_frame(text.encode("utf-8"))

    async def flush(self) -> None:
        pass


async def serve(host: Host, reader: FrameReader) -> None:
    """Serve MCP on ``host`` until its peer ends the session."""
    principal = host.principal
    assert principal is not None  # after a hello that succeeded
    sdk = await _sdk()
    one_at_a_time = anyio.Lock()  # first come, first served

    start, session = host.harness_session, None

    async def call(verb: str, params: dict[str, Any]) -> dict[str, Any]:
        nonlocal start, session
        async with one_at_a_time:
            # As the in-process adapter does (mcp.harness_session.SessionNaming): a write
            # that names no session is filed under the harness's, started once.
            if verb in NAMED_VERBS and "session" not in params and start is not None:
                if session is None:
                    try:
                        session = str((await host.call("session.start", start))["session"])
                    except VenomError:
                        start = None  # refused once (a read-only token): don't ask again
                if session is not None:
                    params = {**params, "session": session}
            return await host.call(verb, params)

    server = sdk.server.session_server(
        call, sdk.listing(audience_for_principal(principal.id)), sdk.everything
    )
    stdin: Any = _Lines(reader)
    stdout: Any = _Sender(host)
    async with sdk.stdio.stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
