"""Who reported each session, for the ``events`` verb's ``self`` readers (:mod:`.events`):
a daemon keeps one cache from its start (:class:`~.Ops`), while the verb itself loads on its
first call."""

from __future__ import annotations

import contextlib
import re
import threading

from venom_mem_core.errors import VenomError
from venom_mem_core.ports import Store

from ..event_log import EventLog

__all__ = ["Reporters", "session_number"]

_OWNER_CACHE_MAX = 100_000
_SESSION_RE = re.compile(r"^session:s([1-9][0-9]*)$")


def session_number(resource: str) -> int | None:
    """N of a resource ``session:s<N>``, else ``None``."""
    match = _SESSION_RE.match(resource)
    return int(match.group(1)) if match else None


class Reporters:
    """Who reported each session, for one daemon's ``self`` readers of session events. A
    session's reporter never changes, so the cache keeps it for a session since purged;
    :meth:`start` learns each new session's reporter as it starts, while its row exists
    (ADR 0008)."""

    def __init__(self, store: Store, events: EventLog) -> None:
        self._store = store
        self._events = events
        self._cache: dict[int, str] = {}
        self._lock = threading.Lock()
        self._seen: int | None = None

    def of(self, numbers: set[int]) -> dict[int, str]:
        """The reporter of each of these sessions that is known or still stored."""
        with self._lock:
            missing = numbers - self._cache.keys()
        if missing:
            found: dict[int, str] = {}
            with self._store.read() as tx:
                for number in missing:
                    row = tx.get_session(number)
                    if row is not None:
                        found[number] = row.reported_by.principal
            with self._lock:
                if len(self._cache) + len(found) > _OWNER_CACHE_MAX:
                    self._cache.clear()
                self._cache.update(found)
        with self._lock:
            return {n: self._cache[n] for n in numbers if n in self._cache}

    def start(self) -> None:
        """Follow the event log from now on. Idempotent."""
        with self._lock:
            if self._seen is not None:
                return
            self._seen = self._events.last_seq
        self._events.subscribe(self._after_append)

    def _after_append(self) -> None:  # on the thread that emitted, right after the commit
        with self._lock:
            assert self._seen is not None
            fresh = self._events.after(self._seen)
            if not fresh:
                return
            self._seen = int(fresh[-1]["seq"])
        started = {
            number
            for event in fresh
            if event["type"] == "session.started"
            and (number := session_number(str(event["resource"]))) is not None
        }
        if started:
            with contextlib.suppress(VenomError):  # learned later, at read time, instead
                self.of(started)
