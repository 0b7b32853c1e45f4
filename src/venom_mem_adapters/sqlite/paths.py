"""Where the store lives, and the permission rules its directory and files must pass.

CONTRACT section 1 and RFC-0020 section 6: ``store.path``, else
``$XDG_DATA_HOME/venom-mem/store.db``, else ``~/.local/share/venom-mem/store.db``. The
directory is 0700 and every file beside the database (``-wal``, ``-shm``, ``.lock``,
``.bak-N``) 0600. Each is checked with ``lstat``: a symlink, another owner, or any group or
world bit is ``failed.store`` naming the path. The store holds other agents' text, so we
refuse rather than repair: a chmod would hide that something else touched the files.

SQLite creates ``-wal`` and ``-shm`` with the database file's own mode, so creating the
database 0600 ourselves, before SQLite opens it, is what keeps them private.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from venom_mem_core.errors import VenomError

from .. import private_files

__all__ = [
    "backup_path",
    "check_private_dir",
    "check_private_file",
    "create_private_file",
    "default_store_path",
    "ensure_private_dir",
    "lock_path",
    "sidecar_paths",
]


def default_store_path(environ: Mapping[str, str], configured: str | None = None) -> Path:
    """The store database path: ``configured`` (store.path), else the XDG data location.

    ``XDG_DATA_HOME`` counts only when it is set, nonempty and absolute; otherwise the home
    directory's ``.local/share`` is used. ``HOME`` is trusted only when absolute, else the
    password database says where home is.
    """
    if configured:
        if not os.path.isabs(configured):
            raise VenomError.param(
                "config", "store.path", f"store.path must be an absolute path, got {configured!r}"
            )
        return Path(configured)
    from venom_mem_adapters.client import default_store_path as location

    return Path(location(environ))


def sidecar_paths(path: Path) -> tuple[Path, Path]:
    """The WAL and shared-memory files SQLite keeps beside the database."""
    return Path(f"{path}-wal"), Path(f"{path}-shm")


def lock_path(path: Path) -> Path:
    return Path(f"{path}.lock")


def backup_path(path: Path, version: int) -> Path:
    """Where a migration copies the database before leaving ``version`` (RFC-0020 section 6)."""
    return Path(f"{path}.bak-{version}")


def _refuse(path: Path, reason: str, fix: str | None = None) -> VenomError:
    data: dict[str, str] = {"path": str(path)}
    if fix:
        data["fix"] = fix
    return VenomError("failed.store", f"{path}: {reason}", data)


def _check(path: Path, st: os.stat_result, *, want_dir: bool) -> None:
    mode = private_files.DIR_MODE if want_dir else private_files.FILE_MODE
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(path, "is a symbolic link; the store does not follow links")
    if want_dir and not stat.S_ISDIR(st.st_mode):
        raise _refuse(path, "is not a directory")
    if not want_dir and not stat.S_ISREG(st.st_mode):
        raise _refuse(path, "is not a regular file")
    uid = os.getuid()
    if st.st_uid != uid:
        raise _refuse(path, f"is owned by uid {st.st_uid}, not by the current user (uid {uid})")
    if st.st_mode & 0o077:
        raise _refuse(
            path,
            f"has mode {stat.S_IMODE(st.st_mode):04o}; group and others must have no access",
            f"chmod {mode:04o} '{path}'",
        )


def check_private_dir(path: Path) -> None:
    """Refuse a store directory that is a link, someone else's, or open to others."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise _refuse(path, "does not exist") from None
    _check(path, st, want_dir=True)


def ensure_private_dir(path: Path) -> None:
    """Create the store directory 0700 if it is missing (parents as usual), then check it."""
    if not os.path.lexists(path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Someone else may make it first: the checks below decide.
            private_files.make_private_dirs(path, stop_at=path.parent)
        except OSError as exc:
            raise _refuse(path, f"cannot create the store directory: {exc.strerror}") from exc
    check_private_dir(path)


def check_private_file(path: Path) -> bool:
    """Check a store file if it exists; ``False`` when it does not."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    _check(path, st, want_dir=False)
    return True


def create_private_file(path: Path) -> None:
    """Create an empty 0600 file, refusing to follow a link or reuse an existing file."""
    try:
        private_files.create_private_file(path)
    except OSError as exc:
        raise _refuse(path, f"cannot create: {exc.strerror}") from exc
