"""Files and directories only their owner may read: the one place venom-mem creates them.

config.zon, the installed skill and the daemon record are replaced whole
(:func:`write_private_file`: temp file beside it, fsync, rename, fsync the directory), so a
reader never sees half a file, and a crash leaves the old one or the new one. The store's
and the runtime's directories are made 0700 (:func:`make_private_dirs`), and the store's
files 0600 before SQLite opens them (:func:`create_private_file`). Checking what exists is
each owner's own business (sqlite/paths.py, client/_runtime_paths.py): their refusals differ.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "create_private_file",
    "make_private_dirs",
    "write_private_file",
]

DIR_MODE = 0o700
FILE_MODE = 0o600
_NAME_TRIES = 100


def make_private_dirs(directory: Path, *, stop_at: Path | None = None) -> None:
    """Create the missing directories up to ``directory``, each new one 0700 (the umask may
    have taken owner bits); existing ones, and anything at or above ``stop_at``, are left
    as their owner set them."""
    missing: list[Path] = []
    current = directory
    while not current.exists() and current not in (stop_at, current.parent):
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(path, DIR_MODE)


def create_private_file(path: Path) -> None:
    """Create an empty 0600 file, refusing to follow a link or reuse an existing file (the
    umask may have taken owner bits). Raises OSError."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new empty file ``.<name>.<random>.tmp`` beside ``path``, opened for writing, as
    ``tempfile.mkstemp`` makes one: mode 0600, never an existing file or a link (tempfile
    itself, with shutil and the compressors it loads, was 5 ms of a daemon's start; the name
    is os.urandom's, as secrets.token_hex's is, without secrets' hmac and OpenSSL, 3 MiB
    of every relay that reads the config)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(_NAME_TRIES):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, flags, FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def write_private_file(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``, mode 0600, atomically and durably. Raises OSError."""
    make_private_dirs(path.parent)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), FILE_MODE)
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):  # some filesystems can't fsync a directory
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
