"""The composition root: the one place adapters are built and wired into the core.

``serve`` runs RFC-0020 section 8's start-up in order: config, the socket lock, the store
lock, the store (with its migrations), and only then the socket. A launcher waiting on
``--status-fd`` hears ``ready``, ``lost`` (another daemon holds the socket lock) or the
error that stopped this one. A person who ran ``venom-mem serve`` gets one line on stderr
when it is ready, or the error and its fix.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import anyio

from venom_mem_core.errors import VenomError

if TYPE_CHECKING:
    from venom_mem_adapters.daemon.context import DaemonPaths
    from venom_mem_adapters.daemon.event_log import EventLog
    from venom_mem_adapters.daemon.server import Daemon
    from venom_mem_adapters.store_backend import StoreBackend
    from venom_mem_core.config import Config
    from venom_mem_core.ports import Clock, Store

__all__ = ["build_daemon", "run_serve", "wait_as_standby"]

log = logging.getLogger("venom_mem.serve")
STOP_FIRST = "VENOM_MEM_TOKEN=@owner venom-mem stop  # then serve again"


class StatusPipe:
    """The launcher's pipe, if there is one; says one line and closes."""

    def __init__(self, fd: int | None) -> None:
        self._fd = fd

    def say(self, line: str) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.write(self._fd, line.encode("utf-8") + b"\n")
            os.close(self._fd)
        self._fd = None


# What a daemon's start and its first search import, loaded by a standby before it is told
# to go (client/_launcher.py): each module here leaves the first call's critical path. The
# use cases come from the manifest (usecases.verbs.use_cases); a test holds the list to
# what a plain launch loads (tests/integration/test_mcp_standby.py).
_DAEMON_MODULES = (
    "venom_mem_adapters.config",
    "venom_mem_adapters.daemon.credentials_env",
    "venom_mem_adapters.daemon.startup",
    "venom_mem_adapters.store_backend",
    "venom_mem_adapters.sqlite.backend",
    "venom_mem_adapters.sqlite.lock",
    "venom_mem_adapters.daemon.context",
    "venom_mem_adapters.daemon.event_log",
    "venom_mem_adapters.daemon.ops",
    "venom_mem_adapters.daemon.server",
    "venom_mem_core.clock",
    "venom_mem_core.usecases.app",
    "venom_mem_adapters.config._zon",
    "venom_mem_core.text_match",
    "venom_mem_core.export_format",
    "venom_mem_core.converter",
    "anyio._backends._asyncio",
    "anyio._core._signals",
    "venom_mem_adapters.client._daemon_record",
)


def wait_as_standby(go_fd: int) -> bool:
    """A standby's wait (client/_launcher.py): True once the launcher says ``go``; False
    when the config wants no standby (it leaves at once), after ``daemon.idle_timeout_ms``
    without a word, or at the end of the pipe (no daemon was needed). The daemon's modules
    are loaded meanwhile."""
    import importlib
    import select

    from venom_mem_adapters.config import default_config_path, load_launch_config

    try:
        settings = load_launch_config(default_config_path(os.environ)).daemon
    except VenomError:
        lifetime_s = None  # go reports it, as a launch does: serving reads the file again
    else:
        if settings.mcp_standby == "off" or settings.startup == "explicit":
            return False
        lifetime_s = settings.idle_timeout_ms / 1000
    for name in _DAEMON_MODULES:
        importlib.import_module(name)
    from venom_mem_core.usecases.verbs import use_cases

    with contextlib.suppress(VenomError):  # a use case missing: the start reports it
        use_cases()  # imported and looked up once, for the daemon's build (a cache)
    try:
        word = b""
        while not word.endswith(b"\n"):
            ready, _, _ = select.select([go_fd], [], [], lifetime_s)
            if not ready:
                return False
            chunk = os.read(go_fd, 16)
            if not chunk:
                return False
            word += chunk
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(go_fd)
    if word != b"go\n":
        return False
    # Told to go before the launcher read the config: starts made explicit since this
    # standby read it leave it unsaid, and the launcher then refuses the start itself.
    with contextlib.suppress(VenomError):
        if load_launch_config(default_config_path(os.environ)).daemon.startup == "explicit":
            return False
    return True


def run_serve(
    environ: Mapping[str, str],
    *,
    on_demand: bool,
    status_fd: int | None,
    stderr: TextIO = sys.stderr,
) -> int:
    """Run a daemon until it is stopped (or idles out, on demand). Returns the exit code."""
    from venom_mem_adapters.config import default_config_path, load_config
    from venom_mem_adapters.daemon.credentials_env import forget_credentials

    forget_credentials()  # a daemon holds no caller's token (docs/adr/0013)
    from venom_mem_adapters.client import default_store_path, socket_path
    from venom_mem_adapters.daemon.startup import claimed_socket
    from venom_mem_adapters.store_backend import backend_for

    status = StatusPipe(status_fd)
    logging.basicConfig(level=logging.WARNING, stream=stderr)
    try:
        config_path = default_config_path(environ)
        config = load_config(config_path)
        store_path = Path(default_store_path(environ, config.store.path, config.store.url))
        sock = Path(socket_path(environ, lambda: str(store_path.parent)))
        with claimed_socket(sock, store_path, environ) as owned:
            if not owned:
                if on_demand:
                    status.say("lost")
                    return 0
                raise VenomError(
                    "conflict.store_locked",
                    f"another daemon already serves {sock}",
                    {"path": str(sock), "fix": STOP_FIRST},
                )
            return _serve_locked(
                config,
                backend_for(config.store, store_path),
                config_path,
                store_path,
                sock,
                on_demand=on_demand,
                status=status,
                stderr=None if on_demand else stderr,
            )
    except VenomError as error:
        status.say(json.dumps(error.to_json()))
        print(f"error: {error.code}: {error.message}", file=stderr)
        fix = error.data.get("fix") or (STOP_FIRST if error.code == "conflict.store_locked" else "")
        if fix:  # the store lock's conflict (another socket's daemon) has no fix of its own
            print(f"fix: {fix}", file=stderr)
        return error.exit_code


def _serve_locked(
    config: Config,
    backend: StoreBackend,
    config_path: Path,
    store_path: Path,
    sock: Path,
    *,
    on_demand: bool,
    status: StatusPipe,
    stderr: TextIO | None,
) -> int:
    """Serve while holding the socket: the store lock, the store (``store_path`` is a
    PostgreSQL store's anchor on this machine, client.default_store_path: the lock
    makes one daemon per machine serve it, and PostgreSQL serializes the machines)."""
    import venom_mem_core
    from venom_mem_adapters.daemon.context import DaemonPaths
    from venom_mem_adapters.daemon.event_log import EventLog
    from venom_mem_adapters.sqlite.lock import StoreLock
    from venom_mem_core.clock import SystemClock

    with StoreLock(store_path):
        store = backend.open()
        bridge = None
        try:
            paths = DaemonPaths(socket=sock, store=store_path, config=config_path)
            events = EventLog(SystemClock())
            # Other daemons' writes reach this log (docs/adr/0028). Listening before the
            # embeddings index loads: a write after the load's snapshot is relayed.
            bridge = backend.events_bridge(events)
            if bridge is not None:
                bridge.start()
            daemon = build_daemon(
                store, config, paths, on_demand=on_demand, events=events, backend=backend
            )
            if bridge is not None and daemon.embeddings is not None:
                # Relayed events missed while the listener was away: reload from the store.
                bridge.after_relisten(daemon.embeddings.reload)
            shown = getattr(store, "url", store_path)  # a PostgreSQL store's public URL
            ready = (
                f"venom-mem {venom_mem_core.__version__}: ready on {sock} (pid {os.getpid()}, "
                f"store {shown}); Ctrl-C or venom-mem stop stops it"
            )
            try:
                announce = (ready, stderr) if stderr is not None else None
                anyio.run(
                    functools.partial(
                        _run_daemon,
                        daemon,
                        sock,
                        store_path=store_path,
                        status=status,
                        announce=announce,
                    )
                )
            finally:
                daemon.close()
        finally:
            if bridge is not None:
                bridge.close()
            store.close()
    return 0


def build_daemon(
    store: Store,
    config: Config,
    paths: DaemonPaths,
    *,
    on_demand: bool,
    clock: Clock | None = None,
    events: EventLog | None = None,
    backend: StoreBackend | None = None,
) -> Daemon:
    """The daemon ``serve`` runs on an open store (the caller holds the store lock, serves
    the daemon, then calls its ``close`` and closes the store).

    Its app, with embeddings when the config turns them on (the service's index loaded and
    its vectors of other models dropped; ``daemon.embeddings`` runs its worker); the sweep of
    expired tombstones and of a purge's text left in the WAL, before anyone can read
    (RFC-0020 section 2); the operations verbs' state, started. ``events``: the log to use,
    when the caller already relays other daemons' events into it (a PostgreSQL store).
    ``backend``: the store's kind, else the one the config names.
    """
    from venom_mem_adapters.daemon.event_log import EventLog
    from venom_mem_adapters.daemon.ops import Ops
    from venom_mem_adapters.daemon.server import Daemon
    from venom_mem_adapters.store_backend import backend_for
    from venom_mem_core.clock import SystemClock
    from venom_mem_core.usecases.app import App
    from venom_mem_core.usecases.memories import sweep_tombstones

    clock = clock or SystemClock()
    events = EventLog(clock) if events is None else events
    backend = backend_for(config.store, paths.store) if backend is None else backend
    embedder = None
    if config.embeddings.provider != "off":
        # numpy and httpx load only when embeddings are on: cold start stays small.
        from venom_mem_adapters.embeddings.service import embedder_from_config

        embedder = embedder_from_config(config.embeddings)
    app = App(
        store=store,
        clock=clock,
        events=events,
        embedder=embedder,
        settings=config.memory_settings(),
    )
    with contextlib.suppress(VenomError):
        sweep_tombstones(app)
    with contextlib.suppress(VenomError):
        store.erase_pending_traces()
    service = None
    if embedder is not None:
        from venom_mem_adapters.embeddings.service import EmbeddingService
        from venom_mem_adapters.embeddings.vector_rows import HasVectorRows

        if not isinstance(store, HasVectorRows):
            raise VenomError("failed.internal", "this store serves no embeddings")
        service = EmbeddingService(
            app=app,
            store=store,
            config=config.embeddings,
            events=events,
            shared=backend.shared,  # several daemons write its vectors
        )
        service.start()  # drops other models' vectors, loads the matrix
    ops = Ops(store_path=paths.store, store=store, events=events)
    daemon = Daemon(
        app=app,
        events=events,
        config=config,
        paths=paths,
        on_demand=on_demand,
        ops=ops,
        backend=backend,
        embeddings=service,
    )
    ops.start()
    return daemon


async def _run_daemon(
    daemon: Daemon,
    sock: Path,
    *,
    store_path: Path,
    status: StatusPipe,
    announce: tuple[str, TextIO] | None,
) -> None:
    from venom_mem_adapters.client import remove_record, write_record
    from venom_mem_adapters.start_gc import resume as resume_gc

    listener = await anyio.create_unix_listener(sock, mode=0o600)
    try:
        # Under the store lock, once the socket answers: a client whose environment resolves
        # another socket for this store finds this daemon here (CONTRACT section 1).
        try:
            write_record(str(store_path), socket=str(sock), pid=os.getpid(), source=daemon.source)
        except OSError as exc:  # a full disk: serve anyway; callers on this socket still reach us
            log.warning("could not write the daemon record beside %s: %s", store_path, exc)
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        daemon.stop()  # serve returns once in-flight requests are answered
                        return

            tg.start_soon(stop_on_signal)
            tg.start_soon(daemon.sweep_tombstones_every)
            if daemon.embeddings is not None:  # background embedding; not activity for idling
                tg.start_soon(daemon.embeddings.run)
            status.say("ready")
            resume_gc()  # paused by the launched serve's entry point (start_gc.py)
            if announce is not None:  # a person ran serve: say it is ready, once
                print(announce[0], file=announce[1], flush=True)
            await daemon.serve(listener)
            tg.cancel_scope.cancel()
    finally:
        remove_record(str(store_path), os.getpid())
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()
        with anyio.CancelScope(shield=True):
            await listener.aclose()
