"""``venom-mem mcp``: the stdio MCP server a harness launches (CONTRACT section 7).

By default a relay (:mod:`.mcp.relay`, docs/adr/0038): the daemon serves the MCP session on
its own copy of the SDK, and this process only copies lines, answering from the manifest
what needs no daemon. ``--in-process`` serves MCP here as before: the front door
(:mod:`.mcp.front`) answers ``initialize`` and ``tools/list`` from the manifest while the SDK
loads on a thread, and the SDK (:mod:`.mcp.server`) takes the stream over at the first tool
call (ADR 0020). Importing this module is cheap: nothing heavy is imported until
:func:`run_stdio` runs, and the relay never imports the SDK.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Mapping
from types import ModuleType

TYPE_CHECKING = False  # typing costs the relay's start milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import BinaryIO

    from .mcp.upstream import Wire

__all__ = ["run_stdio"]


class _SdkLoader(threading.Thread):
    """Imports the SDK-backed server module in the background."""

    def __init__(self) -> None:
        super().__init__(name="venom-mem-mcp-sdk", daemon=True)
        self.module: ModuleType | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            from .mcp import server

            self.module = server
        except BaseException as exc:  # re-raised on the main thread at the handover
            self.error = exc

    def result(self) -> ModuleType:
        self.join()
        if self.module is None:
            raise RuntimeError("could not load the MCP SDK") from self.error
        return self.module


def _claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own copies of stdin and stdout; fd 0 then reads the null device and
    fd 1 writes to stderr, so nothing else in the process can corrupt the stream."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def run_stdio(environ: Mapping[str, str] | None = None, *, in_process: bool = False) -> None:
    """Serve MCP on stdin/stdout until stdin closes; Ctrl-C ends it at once, quietly.
    ``VENOM_MEM_TOKEN`` and the paths come from ``environ`` (the adapter's own environment
    by default). ``in_process``: with the SDK in this process, not relayed to the daemon."""
    env = dict(os.environ if environ is None else environ)
    signal.signal(signal.SIGINT, _interrupted)
    try:
        code = _serve(env) if in_process else _relay(env)
    except KeyboardInterrupt:
        code = 130
    sys.stderr.flush()
    # A thread may still sit in a blocking read of stdin: leave without waiting for it.
    os._exit(code)


def _interrupted(_signum: int, _frame: object) -> None:
    """Run in a terminal, the first Ctrl-C ends it. stdin is read on a worker thread that a
    terminal's read never gives back, and a normal exit would wait for that thread forever.
    Nothing here needs finishing: the daemon completes a call already sent."""
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(130)


def _relay(env: dict[str, str]) -> int:
    from .mcp.relay import run_relay

    wire_in, wire_out = _claim_stdio()
    return run_relay(env, wire_in, wire_out)


def _serve(env: dict[str, str]) -> int:
    loader = _SdkLoader()
    loader.start()

    import venom_mem_core
    from venom_mem_core.manifest import MANIFEST

    from .mcp.front import FrontDoor
    from .mcp.link import DaemonLink, daemon_connector, early_token_check
    from .mcp.tools import INSTRUCTIONS, SERVER_NAME, audience_for_token, build_catalog

    catalog = build_catalog(MANIFEST, audience_for_token(env.get("VENOM_MEM_TOKEN", "")))
    held: list[Wire] = []

    def check_initialize() -> str | None:
        error, wire = early_token_check(env)
        if wire is not None:
            held.append(wire)
        if error is None:
            return None
        fix = error.data.get("fix")
        message = f"venom-mem: {error.code}: {error.message}" + (f" (fix: {fix})" if fix else "")
        print(message, file=sys.stderr)
        return message

    wire_in, wire_out = _claim_stdio()
    lock = threading.Lock()
    front = FrontDoor(
        wire_in,
        wire_out,
        tools=[spec.to_json() for spec in catalog.values()],
        server_name=SERVER_NAME,
        server_version=venom_mem_core.__version__,
        instructions=INSTRUCTIONS,
        check_initialize=check_initialize,
        write_lock=lock,
    )
    handover = front.run()
    link = DaemonLink(daemon_connector(env), held[0] if held else None)
    try:
        if front.failed:
            return 1
        if handover is None:
            return 0
        server = loader.result()
        import functools

        import anyio

        from .mcp.harness_session import SessionNaming

        serve = functools.partial(
            server.serve_handover,
            SessionNaming(link, env),
            catalog=catalog,
            handover=handover,
            reader=wire_in,
            writer=wire_out,
            lock=lock,
        )
        anyio.run(serve)
    finally:
        link.close()
    return 0
