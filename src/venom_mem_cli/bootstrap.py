"""The composition root: the one place adapters are built and wired into the core.

``serve`` runs RFC-0020 section 8's start-up in order: config, the socket lock, the store
lock, the store (with its migrations), and only then the socket. A launcher waiting on
``--status-fd`` hears ``ready``, ``lost`` (another daemon holds the socket lock) or the
error that stopped this one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import stat
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import anyio

from venom_mem_core.errors import VenomError

__all__ = ["run_serve"]

log = logging.getLogger("venom_mem.serve")


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


def socket_lock_path(socket: Path, environ: Mapping[str, str]) -> Path:
    """``daemon.lock`` beside the default socket; ``<socket>.lock`` for an overridden one."""
    if environ.get("VENOM_MEM_SOCKET"):
        return socket.with_name(socket.name + ".lock")
    return socket.with_name("daemon.lock")


@contextlib.contextmanager
def socket_lock(path: Path) -> Iterator[bool]:
    """Hold the kernel flock that makes one daemon own a socket; yields False if taken."""
    try:
        # O_NOFOLLOW: a planted symlink would have us lock (and create) someone else's file.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise _socket_error(path, f"can't open the socket lock {path}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _socket_error(sock: Path, message: str) -> VenomError:
    return VenomError(
        "failed.socket",
        message,
        {"path": str(sock), "fix": "set VENOM_MEM_SOCKET to a short path in a directory you own"},
    )


def _clear_stale_socket(sock: Path) -> None:
    """Remove a socket a dead daemon left (we hold the socket lock, so nobody serves it);
    anything else at the path is somebody's file, refused rather than deleted."""
    try:
        mode = os.lstat(sock).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise _socket_error(sock, f"{sock} exists and is not a socket; it is left as it is")
    sock.unlink()


def _prepare_socket_dir(sock: Path, environ: Mapping[str, str]) -> None:
    from venom_mem_adapters.runtime_paths import ensure_private_dir

    if environ.get("VENOM_MEM_SOCKET"):
        sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    else:
        ensure_private_dir(sock.parent)


def run_serve(
    environ: Mapping[str, str],
    *,
    on_demand: bool,
    status_fd: int | None,
    stderr: TextIO = sys.stderr,
) -> int:
    """Run a daemon until it is stopped (or idles out, on demand). Returns the exit code."""
    from venom_mem_adapters.config_file import default_config_path, load_config
    from venom_mem_adapters.credentials_env import forget_credentials

    forget_credentials()  # a daemon holds no caller's token (docs/adr/0013)
    from venom_mem_adapters.runtime_paths import socket_path

    status = StatusPipe(status_fd)
    logging.basicConfig(level=logging.WARNING, stream=stderr)
    try:
        config_path = default_config_path(environ)
        config = load_config(config_path)
        sock = Path(socket_path(environ))
        try:
            _prepare_socket_dir(sock, environ)
        except OSError as exc:
            raise _socket_error(
                sock, f"can't make {exc.filename or sock.parent}: {exc.strerror}"
            ) from None
        with socket_lock(socket_lock_path(sock, environ)) as owned:
            if not owned:
                if on_demand:
                    status.say("lost")
                    return 0
                raise VenomError(
                    "conflict.store_locked",
                    f"another daemon already serves {sock}",
                    {"path": str(sock)},
                )
            _clear_stale_socket(sock)
            return _serve_locked(
                environ, config, config_path, sock, on_demand=on_demand, status=status
            )
    except VenomError as error:
        status.say(json.dumps(error.to_json()))
        print(f"error: {error.code}: {error.message}", file=stderr)
        return error.exit_code


def _serve_locked(
    environ: Mapping[str, str],
    config: Any,
    config_path: Path,
    sock: Path,
    *,
    on_demand: bool,
    status: StatusPipe,
) -> int:
    from venom_mem_adapters.daemon import ops
    from venom_mem_adapters.daemon.event_log import EventLog
    from venom_mem_adapters.daemon.server import Daemon, DaemonPaths
    from venom_mem_adapters.sqlite import SqliteStore, StoreLock, default_store_path
    from venom_mem_core.clock import SystemClock
    from venom_mem_core.usecases.app import App
    from venom_mem_core.usecases.memories import sweep_tombstones

    store_path = Path(config.store.path) if config.store.path else default_store_path(environ)
    with StoreLock(store_path):
        store = SqliteStore.open(store_path)
        try:
            clock = SystemClock()
            events = EventLog(clock)
            service: Any = None
            embedder = None
            if config.embeddings.provider != "off":
                # numpy and httpx load only when embeddings are on: cold start stays small.
                from venom_mem_adapters.embeddings.service import (
                    EmbeddingService,
                    embedder_from_config,
                )

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
                # A purge whose checkpoint was busy left its text in the WAL: it goes now,
                # at the next serve (RFC-0020 section 2), before anyone can read.
                store.erase_pending_traces()
            handlers = _extra_handlers()
            if embedder is not None:
                service = EmbeddingService(
                    app=app, store=store, config=config.embeddings, events=events
                )
                service.start()  # drops other models' vectors, loads the matrix
                handlers.update(service.handlers())
            daemon = Daemon(
                app=app,
                events=events,
                config=config,
                paths=DaemonPaths(socket=sock, store=store_path, config=config_path),
                on_demand=on_demand,
                handlers=handlers,
            )
            ops.attach(daemon)
            if service is not None:
                daemon.embedding_facts = service.embedding_facts
                daemon.config_listeners.append(lambda new: service.reconfigure(new.embeddings))
            try:
                anyio.run(_run_daemon, daemon, sock, status, app, service)
            finally:
                daemon.close()
                if service is not None:
                    service.close()
        finally:
            store.close()
    return 0


def _extra_handlers() -> dict[str, Any]:
    """Daemon-level verbs beyond the core's: the operations verbs."""
    from venom_mem_adapters.daemon import ops

    return dict(ops.handlers())


async def _run_daemon(daemon: Any, sock: Path, status: StatusPipe, app: Any, service: Any) -> None:
    listener = await anyio.create_unix_listener(sock, mode=0o600)
    try:
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        daemon.stop()  # serve returns once in-flight requests are answered
                        return

            tg.start_soon(stop_on_signal)
            tg.start_soon(daemon.sweep_tombstones_every)
            if service is not None:
                tg.start_soon(service.run)  # background embedding; not activity for idling
            status.say("ready")
            await daemon.serve(listener)
            tg.cancel_scope.cancel()
    finally:
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()
        with anyio.CancelScope(shield=True):
            await listener.aclose()
