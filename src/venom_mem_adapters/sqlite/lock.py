"""The store lock: one daemon per store file, whatever socket it listens on.

RFC-0020 section 8: serve takes an exclusive ``flock`` on ``<store path>.lock`` after the
socket lock and before opening the database, so two daemons on different sockets never both
write one store. The kernel drops the lock when the process dies, so there is nothing stale to
clean up after a kill -9. The lock file is created 0600 and checked like every store file.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Self

from venom_mem_core.errors import VenomError

from ..closing import ClosesOnExit
from .paths import check_private_file, ensure_private_dir, lock_path

__all__ = ["StoreLock"]


class StoreLock(ClosesOnExit):
    """An exclusive, non-blocking ``flock`` on ``<store path>.lock``; a context manager."""

    def __init__(self, store_path: str | os.PathLike[str]) -> None:
        self.path = lock_path(Path(store_path))
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise ``conflict.store_locked``; a second call is a no-op."""
        if self._fd is not None:
            return
        ensure_private_dir(self.path.parent)
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            raise VenomError(
                "failed.store",
                f"{self.path}: cannot open the store lock: {exc.strerror}",
                {"path": str(self.path)},
            ) from exc
        try:
            check_private_file(self.path)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise VenomError(
                "conflict.store_locked",
                f"another venom-mem daemon holds the store lock {self.path}",
                {"path": str(self.path)},
            ) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor drops the flock

    close = release  # ClosesOnExit: leaving the ``with`` block releases the lock

    def __enter__(self) -> Self:
        self.acquire()
        return self
