"""What the reliability and security tests share: the figures they print, an in-process daemon
served on a real unix socket (the composition root's wiring, with the store on any VFS), the
store checks every restart runs, and the daemon's resident memory.

Figures: each test calls :func:`record` with the numbers it proved something over (rounds,
commits, faults, inputs). The conftest of each suite prints them at the end of the run and
writes them to ``figures-<suite>.json`` in pytest's base temp directory; docs/reliability.md
quotes them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread
import apsw
import attrs

from venom_mem_adapters.config_file import load_config
from venom_mem_adapters.daemon.context import DaemonPaths
from venom_mem_adapters.daemon.server import Daemon
from venom_mem_adapters.sqlite import SqliteStore, StoreLock, open_connection
from venom_mem_cli.bootstrap import build_daemon

__all__ = [
    "ERROR_CLASSES",
    "InProcessDaemon",
    "McpClient",
    "RawConnection",
    "check_error_code",
    "figures_for",
    "file_facts",
    "in_process_daemon",
    "integrity_problems",
    "mcp_adapter",
    "print_figures",
    "raw_connection",
    "record",
    "rss_kib",
    "tool_name",
]

# CONTRACT section 3: every error a caller can see belongs to one of these classes.
ERROR_CLASSES = frozenset(
    {"failed", "invalid_params", "not_found", "denied", "conflict", "unavailable", "unsupported"}
)
_CODE_RE = re.compile(r"^[a-z_]+\.[a-z0-9_]+\Z")

# -- figures ---------------------------------------------------------------------------------

_FIGURES: dict[str, dict[str, dict[str, Any]]] = {}


def record(suite: str, name: str, **values: Any) -> None:
    """Add (or add to) the figures ``name`` printed for ``suite`` ("reliability", "security").
    Integers add up across calls, so a parametrized test reports its total."""
    entry = _FIGURES.setdefault(suite, {}).setdefault(name, {})
    for key, value in values.items():
        if isinstance(value, int) and not isinstance(value, bool) and key in entry:
            entry[key] += value
        else:
            entry[key] = value


def figures_for(suite: str) -> dict[str, dict[str, Any]]:
    return _FIGURES.get(suite, {})


def print_figures(reporter: Any, suite: str, directory: Path | None) -> None:
    """The ``pytest_terminal_summary`` part: one line per test, and the JSON file."""
    figures = figures_for(suite)
    if not figures:
        return
    reporter.section(f"{suite} figures")
    for name, values in sorted(figures.items()):
        reporter.write_line(f"{name}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    if directory is not None:
        path = directory / f"figures-{suite}.json"
        path.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
        reporter.write_line(f"(also in {path})")


# -- error codes -----------------------------------------------------------------------------


def check_error_code(code: Any) -> str:
    """The code, after checking it has a documented class; ``failed.internal`` is a bug."""
    assert isinstance(code, str), f"malformed error code {code!r}"
    assert _CODE_RE.match(code), f"malformed error code {code!r}"
    assert code.split(".", 1)[0] in ERROR_CLASSES, f"undocumented error class in {code!r}"
    assert code != "failed.internal", "failed.internal reached a client: that is a bug"
    return code


# -- the daemon's memory ---------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """Resident set size of ``pid`` in KiB, from /proc/<pid>/status (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


# -- an in-process daemon --------------------------------------------------------------------


@attrs.define
class InProcessDaemon:
    """A daemon built as ``venom_mem_cli.bootstrap`` builds one, served by a thread of this
    process on a real unix socket. ``env`` is what a client needs to reach it."""

    daemon: Daemon
    store: SqliteStore
    socket: Path
    store_path: Path

    @property
    def env(self) -> dict[str, str]:
        return {"VENOM_MEM_SOCKET": str(self.socket)}

    def environ(self, token: str) -> dict[str, str]:
        return {**self.env, "VENOM_MEM_TOKEN": token}


async def _serve_until(
    daemon: Daemon, listener: anyio.abc.Listener[anyio.abc.SocketStream], stop: anyio.Event
) -> None:
    """Serve until ``stop`` is set, then stop every connection and close the listener."""
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(daemon.serve, listener)
        await stop.wait()
        tg.cancel_scope.cancel()


@contextlib.contextmanager
def in_process_daemon(root: Path, *, vfs: str | None = None) -> Iterator[InProcessDaemon]:
    """Serve ``root/data/store.db`` on ``root/d.sock`` until the block exits, then stop the
    daemon and close the store (a clean stop, as SIGTERM gives one). Built by the composition
    root's own :func:`~venom_mem_cli.bootstrap.build_daemon`, as ``serve`` builds it."""
    sock = root / "d.sock"
    store_path = root / "data" / "store.db"
    config_path = root / "config.zon"
    config = load_config(config_path)
    paths = DaemonPaths(socket=sock, store=store_path, config=config_path)
    with StoreLock(store_path):
        store = SqliteStore.open(store_path, vfs=vfs)
        try:
            daemon = build_daemon(store, config, paths, on_demand=False)
            with contextlib.ExitStack() as closing:
                closing.callback(daemon.close)
                portal = closing.enter_context(anyio.from_thread.start_blocking_portal())
                sock.unlink(missing_ok=True)
                listener = portal.call(
                    functools.partial(anyio.create_unix_listener, sock, mode=0o600)
                )
                stop = portal.call(anyio.Event)
                serving = portal.start_task_soon(_serve_until, daemon, listener, stop)
                try:
                    yield InProcessDaemon(
                        daemon=daemon, store=store, socket=sock, store_path=store_path
                    )
                finally:
                    portal.call(stop.set)
                    serving.result(timeout=30)  # the daemon's tasks have all finished
                    sock.unlink(missing_ok=True)
        finally:
            store.close()


# -- raw socket access -------------------------------------------------------------------------


@attrs.define
class RawConnection:
    """A socket to the daemon that speaks frames and nothing more (no client library)."""

    sock: socket.socket
    reader: Any

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, obj: Mapping[str, Any]) -> None:
        self.send(json.dumps(obj).encode() + b"\n")

    def reply(self) -> Any:
        line = self.reader.readline()
        return json.loads(line) if line else None

    def call(self, request_id: int, verb: str, params: Mapping[str, Any] | None = None) -> Any:
        self.request({"id": request_id, "verb": verb, "params": dict(params or {})})
        return self.reply()

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


@contextlib.contextmanager
def raw_connection(
    socket_path: Path | str, *, token: str | None = None, timeout: float = 20.0
) -> Iterator[RawConnection]:
    """A connection that has said hello (with ``token``, or none)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(str(socket_path))
    conn = RawConnection(sock, sock.makefile("rb"))
    try:
        params: dict[str, Any] = {"client": "reliability-tests"}
        if token:
            params["auth"] = {"token": token}
        hello = conn.call(1, "hello", params)
        assert hello is not None, "no answer to hello"
        assert "ok" in hello, hello
        yield conn
    finally:
        conn.close()


# -- store checks ------------------------------------------------------------------------------


def integrity_problems(path: Path, *, vfs: str | None = None) -> list[str]:
    """``PRAGMA integrity_check``, FTS5's check of its own index, and the index holding
    exactly the live memories (soft-deleted ones leave it by design, so FTS5's comparison
    with the whole content table does not apply); an empty list when all agree."""
    problems: list[str] = []
    connection = open_connection(path, readonly=False, vfs=vfs)
    try:
        rows = [str(row[0]) for row in connection.execute("PRAGMA integrity_check")]
        if rows != ["ok"]:
            problems.extend(rows)
        try:
            connection.execute(
                "INSERT INTO memory_fts (memory_fts, rank) VALUES ('integrity-check', 0)"
            ).fetchall()
        except apsw.Error as exc:
            problems.append(f"fts5 integrity-check: {exc}")
        indexed = {row[0] for row in connection.execute("SELECT id FROM memory_fts_docsize")}
        live = {
            row[0] for row in connection.execute("SELECT id FROM memories WHERE deleted IS NULL")
        }
        if indexed != live:
            problems.append(
                f"search index rows {sorted(indexed - live)} are not live memories, and live"
                f" memories {sorted(live - indexed)} are not indexed"
            )
    finally:
        connection.close()
    return problems


def file_facts(path: Path) -> tuple[int, int, str] | None:
    """(inode, size, sha256) of a file, or None if it is missing: a file that was replaced,
    moved back, rewritten or truncated differs in one of them."""
    import hashlib

    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, hashlib.sha256(path.read_bytes()).hexdigest())


# -- an MCP adapter driven by the official SDK's stdio client ----------------------------------


def tool_name(verb: str) -> str:
    """CONTRACT section 7: ``_`` becomes ``_u``, then ``.`` becomes ``_d``."""
    return verb.replace("_", "_u").replace(".", "_d")


@attrs.define
class McpClient:
    """A blocking handle on one ``venom-mem mcp`` subprocess and its initialized session."""

    portal: Any
    session: Any

    def call(self, verb: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The ok object, or raise VenomError with the error the tool reported."""
        from venom_mem_core.errors import VenomError

        result = self.portal.call(self.session.call_tool, tool_name(verb), dict(arguments))
        [content] = result.content
        body = json.loads(content.text)
        if result.is_error:
            raise VenomError.from_json(body["error"])
        assert result.structured_content == body, (verb, result)
        return dict(body)

    def list_tools(self) -> list[Any]:
        return list(self.portal.call(self.session.list_tools).tools)


@contextlib.contextmanager
def mcp_adapter(env: Mapping[str, str], cwd: Path, log: Path) -> Iterator[McpClient]:
    """Start ``venom-mem mcp`` with ``env`` as its whole environment; its stderr goes to
    ``log``. The SDK client checks every structured result against the tool's output schema.
    """
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from tests.support.daemon_env import VENOM_MEM

    params = StdioServerParameters(command=VENOM_MEM, args=["mcp"], env=dict(env), cwd=str(cwd))

    @contextlib.asynccontextmanager
    async def session(errlog: Any) -> Any:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as opened,
        ):
            await opened.initialize()
            yield opened

    with (
        log.open("w") as errlog,
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(session(errlog)) as opened,
    ):
        yield McpClient(portal, opened)
