"""A SQLite VFS shim (apsw) that models a disk with a volatile write cache, and breaks it.

Every file the shim opens has an *image*: what a read sees, as the page cache would show it.
``xWrite`` and ``xTruncate`` change only the image and queue the change; ``xSync`` writes the
queued changes to the real file. So at any moment the real file holds exactly what was
synced, which is what a power cut leaves behind. Images are shared by every handle on one
path (as the page cache is shared by every descriptor) and outlive ``xClose``.

Two ways to break it, each counted in :attr:`FaultyVFS.stats`:

- :meth:`FaultyVFS.cut_power_at`: the Nth write, truncate or sync from now fails with an I/O
  error (the request in flight never gets its reply) and the power goes off. Unsynced
  changes are lost: all of them (``keep="none"``), or a random subset in order
  (``keep="random"``: the kernel may have written some dirty pages back before the cut).
  From then on nothing reaches the real files; reads still see the images, so connections
  can be closed. :meth:`FaultyVFS.restore_power` forgets the images once they are.
- :meth:`FaultyVFS.fail_nth`: the Nth ``xWrite`` or ``xSync`` from now fails with
  ``SQLITE_IOERR_WRITE`` or ``SQLITE_IOERR_FSYNC``, once. A failed sync also forgets that
  file's unsynced changes while the image keeps showing them, as Linux does after an fsync
  error (the pages are marked clean): a later sync then "succeeds" without them. That is why
  a store must not retry a failed fsync and carry on.
Both count only the store's own files; temporary files go straight to the default VFS.

The shim does not call fsync on the real files: what is durable is what the shim says it is.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from typing import Literal

import apsw
import attrs

__all__ = ["OPERATIONS", "FaultyVFS", "Keep"]

Keep = Literal["none", "random"]
OPERATIONS = frozenset({"write", "truncate", "sync"})
_Change = tuple[int, bytes | None]  # (offset, data) for a write, (size, None) for a truncate


@attrs.define
class _Image:
    data: bytearray
    pending: list[_Change] = attrs.field(factory=list)
    handles: int = 0


def _path_of(name: str | apsw.URIFilename) -> str:
    return name.filename() if isinstance(name, apsw.URIFilename) else name


class FaultyVFS(apsw.VFS):
    """Register with a unique ``name``; pass that name as ``vfs=`` to a connection or to
    ``SqliteStore.open``. Call :meth:`unregister` when done."""

    def __init__(self, name: str, *, seed: int = 0) -> None:
        self.vfs_name = name
        super().__init__(name, "")
        self.lock = threading.RLock()
        self.images: dict[str, _Image] = {}
        self.powered = True
        self.stats: Counter[str] = Counter()
        self.rng = random.Random(seed)
        self._cut_in: int | None = None
        self._cut_keep: Keep = "none"
        self._cut_kinds: frozenset[str] = OPERATIONS
        self._fail: tuple[str, int] | None = None

    # -- arming ---------------------------------------------------------------------------

    def cut_power_at(
        self, n: int, keep: Keep = "none", kinds: frozenset[str] = frozenset()
    ) -> None:
        """The ``n``-th operation from now (1 is the next) of ``kinds`` ("write", "truncate",
        "sync"; all three by default) cuts the power."""
        with self.lock:
            self._cut_in, self._cut_keep = n, keep
            self._cut_kinds = kinds or OPERATIONS

    def fail_nth(self, kind: Literal["write", "sync"], n: int) -> None:
        """The ``n``-th ``xWrite`` (or ``xSync``) from now fails with an I/O error, once."""
        with self.lock:
            self._fail = (kind, n)

    def disarm(self) -> None:
        with self.lock:
            self._cut_in, self._fail = None, None

    @property
    def armed(self) -> bool:
        with self.lock:
            return self._cut_in is not None or self._fail is not None

    def cut_power(self, keep: Keep = "none") -> None:
        """Cut the power now, between operations."""
        with self.lock:
            self._lose_power(keep)

    def restore_power(self) -> None:
        """Power on with a cold cache: the real files are all there is. Every connection on
        this VFS must be closed first."""
        with self.lock:
            still_open = [path for path, image in self.images.items() if image.handles]
            if still_open:
                raise RuntimeError(f"files still open on {self.vfs_name}: {still_open}")
            self.images.clear()
            self.powered = True
            self.disarm()

    # -- what the file methods call ---------------------------------------------------------

    def _lose_power(self, keep: Keep) -> None:
        self.powered = False
        self._cut_in = None
        self.stats["power_cuts"] += 1
        for path, image in self.images.items():
            survivors = [c for c in image.pending if keep == "random" and self.rng.random() < 0.5]
            self.stats["changes_lost"] += len(image.pending) - len(survivors)
            self.stats["bytes_lost"] += sum(
                len(d) for _, d in image.pending if d is not None
            ) - sum(len(d) for _, d in survivors if d is not None)
            self.stats["changes_kept_at_cut"] += len(survivors)
            image.pending.clear()
            if survivors:
                _apply_to_disk(path, survivors)

    def _before(self, kind: str) -> None:
        """Count one operation; raise the I/O error the armed fault calls for."""
        self.stats[kind] += 1
        if self._cut_in is not None and kind in self._cut_kinds:
            self._cut_in -= 1
            if self._cut_in == 0:
                self._lose_power(self._cut_keep)
                self.stats["cut_during_" + kind] += 1
                raise apsw.exception_for(_IOERR[kind])
        if self._fail is not None and self._fail[0] == kind:
            remaining = self._fail[1] - 1
            self._fail = None if remaining == 0 else (kind, remaining)
            if remaining == 0:
                self.stats["faults_" + kind] += 1
                raise _Injected(kind)

    # -- apsw.VFS ---------------------------------------------------------------------------

    def xOpen(self, name: str | apsw.URIFilename | None, flags: list[int]) -> apsw.VFSFile:
        if name is None:  # a temporary file: private to one statement, nothing to model
            return apsw.VFSFile("", name, flags)
        return _ShimFile(self, name, flags)

    def xDelete(self, filename: str, syncdir: bool) -> None:
        with self.lock:
            if not self.powered:
                return  # the machine is off: nothing changes on disk any more
            self.images.pop(filename, None)
        try:
            super().xDelete(filename, syncdir)
        except apsw.IOError as exc:
            # A missing file is not an error (SQLite >= 3.7.8); the C VFS's code for it
            # would otherwise reach Python as a pending exception.
            if getattr(exc, "extendedresult", None) != apsw.SQLITE_IOERR_DELETE_NOENT:
                raise

    def xAccess(self, pathname: str, flags: int) -> bool:
        # The unix VFS says a file "exists" only when it is nonempty; the size it sees
        # includes unsynced writes (st_size comes from the page cache), so ask the image.
        with self.lock:
            image = self.images.get(pathname)
            if flags == apsw.SQLITE_ACCESS_EXISTS and image is not None:
                return len(image.data) > 0
        return bool(super().xAccess(pathname, flags))


_IOERR = {
    "write": apsw.SQLITE_IOERR_WRITE,
    "sync": apsw.SQLITE_IOERR_FSYNC,
    "truncate": apsw.SQLITE_IOERR_TRUNCATE,
}


class _Injected(Exception):
    """Raised inside the file methods and turned into the matching apsw I/O error there."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _apply_to_disk(path: str, changes: list[_Change]) -> None:
    with open(path, "r+b") as handle:
        for offset, data in changes:
            if data is None:
                handle.truncate(offset)
            else:
                handle.seek(offset)
                handle.write(data)


class _ShimFile(apsw.VFSFile):
    def __init__(self, vfs: FaultyVFS, name: str | apsw.URIFilename, flags: list[int]) -> None:
        super().__init__("", name, flags)
        self.vfs = vfs
        self.path = _path_of(name)
        self.readonly = bool(flags[0] & apsw.SQLITE_OPEN_READONLY)
        with vfs.lock:
            image = vfs.images.get(self.path)
            if image is None:
                size = super().xFileSize()
                data = super().xRead(size, 0) if size else b""
                image = vfs.images[self.path] = _Image(bytearray(data))
            image.handles += 1
            self.image = image

    def xLock(self, level: int) -> None:
        try:
            super().xLock(level)
        except apsw.IOError:
            if not self.readonly:
                raise
            # SQLite asks a read-only handle for a write lock when its connection closes
            # (to checkpoint if it is the last one) and ignores the failure. apsw would keep
            # the C VFS's I/O error pending and raise it from close(); "busy" is the answer
            # SQLite expects and apsw clears.
            raise apsw.BusyError("a read-only handle takes no write lock") from None

    def xRead(self, amount: int, offset: int) -> bytes:
        with self.vfs.lock:
            return bytes(self.image.data[offset : offset + amount])

    def xFileSize(self) -> int:
        with self.vfs.lock:
            return len(self.image.data)

    def xWrite(self, data: bytes, offset: int) -> None:
        vfs = self.vfs
        with vfs.lock:
            if vfs.powered:
                try:
                    vfs._before("write")
                except _Injected:
                    raise apsw.exception_for(apsw.SQLITE_IOERR_WRITE) from None
            image = self.image
            end = offset + len(data)
            if len(image.data) < offset:
                image.data.extend(bytes(offset - len(image.data)))
            image.data[offset:end] = data
            if vfs.powered:
                image.pending.append((offset, bytes(data)))

    def xTruncate(self, newsize: int) -> None:
        vfs = self.vfs
        with vfs.lock:
            if vfs.powered:
                vfs._before("truncate")
            image = self.image
            if newsize < len(image.data):
                del image.data[newsize:]
            else:
                image.data.extend(bytes(newsize - len(image.data)))
            if vfs.powered:
                image.pending.append((newsize, None))

    def xSync(self, flags: int) -> None:
        vfs = self.vfs
        with vfs.lock:
            if not vfs.powered:
                return
            try:
                vfs._before("sync")
            except _Injected:
                # The kernel reported the error and marked the pages clean: the changes are
                # gone from the disk's future, while the cache still shows them.
                vfs.stats["changes_dropped_by_failed_sync"] += len(self.image.pending)
                self.image.pending.clear()
                raise apsw.exception_for(apsw.SQLITE_IOERR_FSYNC) from None
            pending = self.image.pending
            if pending:
                for offset, data in pending:
                    if data is None:
                        super().xTruncate(offset)
                    else:
                        super().xWrite(data, offset)
                vfs.stats["changes_synced"] += len(pending)
                pending.clear()

    def xClose(self) -> None:
        with self.vfs.lock:
            self.image.handles -= 1
        super().xClose()
