"""Where the daemon's socket and lock live (CONTRACT section 1), checked the way the store
directory is: a real directory, ours, with no group or world bits.

Standard library only, and no pathlib: the CLI's ``--json`` path imports this.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

from venom_mem_core.errors import VenomError

__all__ = ["ensure_private_dir", "runtime_dir", "socket_path"]


def runtime_dir(environ: Mapping[str, str]) -> str:
    """``$XDG_RUNTIME_DIR/venom-mem`` when that is an absolute directory we own, else
    ``/tmp/venom-mem-<uid>``."""
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg):
        try:
            info = os.stat(xdg)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            return os.path.join(xdg, "venom-mem")
    return f"/tmp/venom-mem-{os.getuid()}"


MAX_SOCKET_PATH_BYTES = 107  # sun_path is 108 bytes, with its NUL


def socket_path(environ: Mapping[str, str]) -> str:
    """``VENOM_MEM_SOCKET`` when set (made absolute against the working directory, so the
    launched daemon, which runs in ``/``, binds the socket the caller meant), else
    ``daemon.sock`` in the runtime directory."""
    override = environ.get("VENOM_MEM_SOCKET", "")
    path = (
        os.path.abspath(override) if override else os.path.join(runtime_dir(environ), "daemon.sock")
    )
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise VenomError(
            "failed.socket",
            f"a socket path is at most {MAX_SOCKET_PATH_BYTES} bytes: {path}",
            {"path": path, "fix": "set VENOM_MEM_SOCKET to a shorter path in a directory you own"},
        )
    return path


def ensure_private_dir(path: str | os.PathLike[str]) -> None:
    """Create ``path`` 0700 if missing, then insist it is a directory (not a symlink) owned by
    us with no group or world bits; anything else is ``failed.store`` naming the path."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise VenomError(
            "failed.store", f"cannot create {path}: {exc.strerror}", {"path": str(path)}
        ) from None
    if not stat.S_ISDIR(info.st_mode):
        raise VenomError("failed.store", f"{path} is not a directory", {"path": str(path)})
    if info.st_uid != os.getuid():
        raise VenomError("failed.store", f"{path} is owned by another user", {"path": str(path)})
    if info.st_mode & 0o077:
        raise VenomError(
            "failed.store",
            f"{path} is accessible to group or others (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run: chmod 700 {path}",
            {"path": str(path)},
        )
