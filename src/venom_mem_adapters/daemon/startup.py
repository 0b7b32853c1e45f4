"""The daemon's claim on its socket, before the store (RFC-0020 section 8's start-up order:
config, the socket lock, the store lock, the store, and only then the socket).

:func:`claimed_socket` makes the socket's directory (one a client would refuse to trust stops
serve here, where the reason can be read), takes the kernel flock that makes one daemon own
the socket, and clears a socket a dead daemon left. Another daemon holding the lock is not
an error here: the caller decides (an on-demand daemon says ``lost`` and exits; ``serve``
refuses with ``conflict.store_locked``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from venom_mem_core.errors import VenomError

from ..runtime_paths import ensure_private_dir
from ..socket_trust import check_socket_dir
from ..sqlite.paths import ensure_private_dir as ensure_store_dir

__all__ = ["claimed_socket"]


def _socket_lock_path(socket: Path, environ: Mapping[str, str]) -> Path:
    """``daemon.lock`` beside the default socket; ``<socket>.lock`` for an overridden one."""
    if environ.get("VENOM_MEM_SOCKET"):
        return socket.with_name(socket.name + ".lock")
    return socket.with_name("daemon.lock")


@contextlib.contextmanager
def claimed_socket(sock: Path, store_path: Path, environ: Mapping[str, str]) -> Iterator[bool]:
    """Hold the socket for this daemon (its directory made, its lock taken, a dead daemon's
    socket cleared); yields False, touching nothing, when another daemon holds it."""
    try:
        _prepare_socket_dir(sock, store_path, environ)
    except OSError as exc:
        raise _socket_error(
            sock, f"can't make {exc.filename or sock.parent}: {exc.strerror}"
        ) from None
    with _socket_lock(_socket_lock_path(sock, environ)) as owned:
        if owned:
            _clear_stale_socket(sock)
        yield owned


@contextlib.contextmanager
def _socket_lock(path: Path) -> Iterator[bool]:
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


def _prepare_socket_dir(sock: Path, store_path: Path, environ: Mapping[str, str]) -> None:
    """Make the socket's directory; one a client would refuse to trust (another owner, a
    link, group or world write) stops serve here. The store's directory comes first, 0700:
    the last fallback puts the socket inside it."""
    ensure_store_dir(store_path.parent)
    if environ.get("VENOM_MEM_SOCKET"):
        sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    else:
        ensure_private_dir(sock.parent)
    check_socket_dir(str(sock))
