"""Where the daemon's socket and lock live (CONTRACT section 1), checked the way the store
directory is: a real directory, ours, with no group or world bits.

The runtime directory is ``$XDG_RUNTIME_DIR/venom-mem`` when that variable names an absolute
directory we own; else ``/run/user/<uid>/venom-mem`` when ``/run/user/<uid>`` is ours and
0700; else ``run/`` inside the store's own directory. Never a directory other users can write
such as ``/tmp``: whoever creates a directory there first decides who answers our ``hello``.

Standard library only, and no pathlib: the CLI's ``--json`` path imports this.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping

from venom_mem_core.errors import VenomError

__all__ = [
    "MAX_SOCKET_PATH_BYTES",
    "RUN_USER_BASE",
    "default_store_path",
    "ensure_private_dir",
    "runtime_dir",
    "socket_path",
]

RUN_USER_BASE = "/run/user"
MAX_SOCKET_PATH_BYTES = 107  # sun_path is 108 bytes, with its NUL


def default_store_path(environ: Mapping[str, str], configured: str = "", url: str = "") -> str:
    """``store.path`` when configured, else ``$XDG_DATA_HOME/venom-mem/store.db`` (only an
    absolute XDG_DATA_HOME counts), else ``~/.local/share/venom-mem/store.db``. ``HOME`` is
    trusted only when absolute; otherwise the password database says where home is.

    With ``store.url`` (a PostgreSQL store, docs/adr/0028) there is no file: the path
    returned is this machine's anchor for that database, ``venom-mem/postgres-<key>/store``
    in the same data directory, keyed by the URL without credentials. Its lock, daemon
    record and fallback socket sit beside it exactly as a SQLite file's would, so one daemon
    per machine serves a database and a client finds it the same way."""
    if configured:
        return configured
    if url:
        from ..config import url_key

        store_dir = os.path.dirname(default_store_path(environ))
        return os.path.join(store_dir, f"postgres-{url_key(url)}", "store")
    data_home = environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(data_home):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            import pwd

            home = pwd.getpwuid(os.getuid()).pw_dir
        data_home = os.path.join(home, ".local", "share")
    return os.path.join(data_home, "venom-mem", "store.db")


def _own_dir(path: str, *, private: bool) -> bool:
    """A real directory (``lstat``: not a link) owned by us; with ``private``, mode 0700."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    return not (private and stat.S_IMODE(info.st_mode) != 0o700)


def runtime_dir(
    environ: Mapping[str, str],
    store_dir: Callable[[], str],
    *,
    run_user_base: str = RUN_USER_BASE,
) -> str:
    """The runtime directory as the module docstring says. ``store_dir`` is asked only when
    neither XDG_RUNTIME_DIR nor ``/run/user/<uid>`` will do (it may have to read config)."""
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg):
        try:
            info = os.stat(xdg)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            return os.path.join(xdg, "venom-mem")
    per_user = os.path.join(run_user_base, str(os.getuid()))
    if _own_dir(per_user, private=True):
        return os.path.join(per_user, "venom-mem")
    return os.path.join(store_dir(), "run")


def socket_path(
    environ: Mapping[str, str],
    store_dir: Callable[[], str],
    *,
    run_user_base: str = RUN_USER_BASE,
) -> str:
    """``VENOM_MEM_SOCKET`` when set (made absolute against the working directory, so the
    launched daemon, which runs in ``/``, binds the socket the caller meant), else
    ``daemon.sock`` in the runtime directory."""
    override = environ.get("VENOM_MEM_SOCKET", "")
    if override:
        path = os.path.abspath(override)
    else:
        base = runtime_dir(environ, store_dir, run_user_base=run_user_base)
        path = os.path.join(base, "daemon.sock")
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise VenomError(
            "failed.socket",
            f"a socket path is at most {MAX_SOCKET_PATH_BYTES} bytes: {path}",
            {
                "path": path,
                "fix": "VENOM_MEM_SOCKET=/run/user/$(id -u)/venom-mem.sock  # any short path "
                "in a directory only you can write",
            },
        )
    return path


def ensure_private_dir(path: str | os.PathLike[str]) -> None:
    """Create ``path`` 0700 if missing, then insist it is a directory (not a symlink) owned by
    us with no group or world bits; anything else is ``failed.store`` naming the path."""
    from pathlib import Path  # the daemon's side: the client path stays free of pathlib

    from ..private_files import make_private_dirs

    try:
        make_private_dirs(Path(path))
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
