"""Run the real ``venom-mem mcp`` under a given environment with the mcp SDK's own client."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.support.daemon_env import VENOM_MEM

ENV = shutil.which("env") or "/usr/bin/env"
# The verbs that are no MCP tool besides the local ones (CONTRACT section 7; hello is the
# connection's handshake, stop the human's: ADR 0014; store.export the CLI export's pager:
# ADR 0039). Written out here, not imported from the adapter, so that the tests hold the
# adapter to it.
EXCLUDED_VERBS = frozenset({"hello", "serve", "mcp", "stop", "store.export", "store.copy"})


@contextlib.asynccontextmanager
async def mcp_session(
    env: Mapping[str, str],
    cwd: Path,
    *,
    exact: bool = False,
    stderr_to: Path | None = None,
    flags: Sequence[str] = (),
) -> AsyncIterator[ClientSession]:
    """An initialized session with ``venom-mem mcp`` (and ``flags``, such as
    ``--in-process``) launched with ``env``. The SDK's client adds a few variables of its
    own (USER, LOGNAME, ...); with ``exact`` the adapter is started through ``env -i`` and
    sees ``env`` and nothing else, as a harness that filters its servers' environment
    launches it."""
    argv = [VENOM_MEM, "mcp", *flags]
    if exact:
        assignments = [f"{key}={value}" for key, value in env.items()]
        params = StdioServerParameters(command=ENV, args=["-i", *assignments, *argv], cwd=str(cwd))
    else:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(env), cwd=str(cwd))
    log_path = stderr_to or cwd / f"mcp-{time.monotonic_ns()}.stderr"
    with log_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def _messages(error: BaseException) -> list[str]:
    if isinstance(error, BaseExceptionGroup):
        return [text for inner in error.exceptions for text in _messages(inner)]
    return [str(error)]


async def initialize_refusal(env: Mapping[str, str], cwd: Path, *, exact: bool = False) -> str:
    """The message ``initialize`` fails with (the test fails if it succeeds)."""
    try:
        async with mcp_session(env, cwd, exact=exact):
            pass
    except Exception as error:  # the SDK's MCPError, possibly inside an ExceptionGroup
        return " | ".join(_messages(error))
    raise AssertionError("initialize succeeded")
