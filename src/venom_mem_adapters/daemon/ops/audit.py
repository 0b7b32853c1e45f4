"""The audit log (docs/adr/0009-audit-log.md): tokens issued and revoked, kept across restarts.

The event log lives in memory and dies with the daemon, so ``principal.issued`` and
``principal.revoked`` are also appended, one JSON object a line, to ``<store path>.audit.jsonl``
beside the store (0600, never followed through a link). An entry is
``{"ts", "type", "principal", "label"?, "source", "seq"}``: IDs and labels, never a token.

:meth:`AuditLog.start` subscribes to the daemon's event log and first writes whatever
``principal.*`` events the log already holds, so starting late loses nothing the log still
retains. The ``audit`` verb (admin) returns the newest ``limit`` entries, oldest first.

Auditing fails closed (docs/adr/0013): the verbs that issue or revoke a token (``audited`` in
the core's verb registry) first make sure the file can be appended to (:meth:`AuditLog.
check`), and answer ``failed.audit`` naming the path, with nothing changed, when it can't (a
link planted at the path, a directory, a file of someone else's, no room to create it).
"""

from __future__ import annotations

import collections
import errno
import functools
import json
import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any

import anyio

from venom_mem_core.errors import VenomError

from ..context import Request
from ..event_log import EventLog

__all__ = [
    "AuditLog",
    "audit_path",
    "audit_problem",
    "audit_state",
    "audit_verb",
    "read_entries",
]

log = logging.getLogger("venom_mem.audit")

AUDITED = ("principal.",)
_FILE_MODE = 0o600
_OPEN = os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def audit_path(store: Path) -> Path:
    return Path(f"{store}.audit.jsonl")


def _entry(event: dict[str, Any]) -> dict[str, Any]:
    data = event.get("data") or {}
    entry: dict[str, Any] = {"ts": event["ts"], "type": event["type"]}
    for key in ("principal", "label"):
        if key in data:
            entry[key] = data[key]
    entry.update(source=event["source"], seq=event["seq"])
    return entry


def _refusal(info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_uid != os.geteuid():
        return f"it belongs to uid {info.st_uid}, not to this daemon's user"
    if info.st_mode & 0o077:
        return f"its mode is {stat.S_IMODE(info.st_mode):04o}, not 0600"
    return None


def audit_state(path: Path) -> str | None:
    """What is wrong with the audit log as it stands, looking only (doctor's check): ``None``
    when it is a regular 0600 file of ours, or absent (the first entry creates it)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        return err.strerror or str(err)
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link is at its path"
    return _refusal(info)


def audit_problem(path: Path) -> str | None:
    """Why an entry could not be appended to ``path`` now, or ``None`` when it could. Opens
    the file as an append does (creating it 0600 if missing, never through a link)."""
    try:
        fd = os.open(path, _OPEN | os.O_WRONLY, _FILE_MODE)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a symbolic link is at its path"
        return err.strerror or str(err)
    try:
        return _refusal(os.fstat(fd))
    finally:
        os.close(fd)


def _audit_error(path: Path, problem: str) -> VenomError:
    return VenomError(
        "failed.audit",
        f"the audit log {path} can't be written ({problem}); nothing was changed",
        {"path": str(path), "fix": f"ls -l '{path}'  # it must be a regular 0600 file of yours"},
    )


def _append(path: Path, lines: list[str]) -> None:
    fd = os.open(path, _OPEN | os.O_RDWR, _FILE_MODE)
    try:
        info = os.fstat(fd)
        problem = _refusal(info)
        if problem is not None:
            raise OSError(f"{path}: {problem}")
        text = "".join(lines)
        if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
            text = "\n" + text  # end a line a crash tore, so this entry stands on its own
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


class AuditLog:
    """Appends audited events to the file as they are emitted. Thread-safe."""

    def __init__(self, path: Path, events: EventLog) -> None:
        self.path = path
        self._events = events
        self._seen = 0
        self._lock = threading.Lock()
        self._unsubscribe: Any = None

    def start(self) -> None:
        """Follow the event log, after writing what it already holds. Idempotent."""
        with self._lock:
            if self._unsubscribe is not None:
                return
            self._unsubscribe = self._events.subscribe(self.catch_up)
        self.catch_up()

    async def check(self) -> None:
        """``failed.audit`` unless an entry could be appended now (an audited verb's guard)."""
        problem = await anyio.to_thread.run_sync(audit_problem, self.path)
        if problem is not None:
            raise _audit_error(self.path, problem)

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def catch_up(self) -> None:
        """Write the audited events after the last one seen. Called after every append to
        the event log, on the thread that emitted: it must never raise into a use case."""
        with self._lock:
            fresh = self._events.after(self._seen)
            if not fresh:
                return
            lines = [
                json.dumps(_entry(e), ensure_ascii=False, separators=(",", ":")) + "\n"
                for e in fresh
                if str(e["type"]).startswith(AUDITED)
            ]
            try:
                if lines:
                    _append(self.path, lines)
            except OSError:
                log.exception("can't append to the audit log %s", self.path)
                return  # retried with the next event
            self._seen = int(fresh[-1]["seq"])


def read_entries(path: Path, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` entries, oldest first; no file means none."""
    newest: collections.deque[dict[str, Any]] = collections.deque(maxlen=limit)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    except OSError as err:
        problem = "a symbolic link is at its path" if err.errno == errno.ELOOP else None
        raise _audit_error(path, problem or err.strerror or str(err)) from None
    with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn last line after a crash
            if isinstance(entry, dict):
                newest.append(entry)
    return list(newest)


async def audit_verb(request: Request) -> dict[str, Any]:
    audit = request.daemon.ops.audit
    limit = int(request.params.get("limit") or 100)
    await anyio.to_thread.run_sync(audit.catch_up)
    entries = await anyio.to_thread.run_sync(functools.partial(read_entries, audit.path, limit))
    return {"entries": entries}
