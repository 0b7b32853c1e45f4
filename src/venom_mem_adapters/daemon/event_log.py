"""The daemon's event log (RFC-0020 section 10, CONTRACT section 8): in memory, per source.

Events carry IDs, never text, and are appended after the commit they describe. The log is
bounded and not stored: a restart starts a new source, and the store is the record.
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from venom_mem_core.ports import Clock

__all__ = ["EventLog"]

RETENTION = 10_000


class EventLog:
    """Thread-safe: handlers emit from worker threads; followers are woken by ``on_append``."""

    def __init__(self, clock: Clock, *, retention: int = RETENTION) -> None:
        self.source = secrets.token_hex(8)
        self._clock = clock
        self._events: deque[dict[str, Any]] = deque(maxlen=retention)
        self._seq = 0
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []
        # Seqs of events another daemon wrote, relayed here (docs/adr/0028), newest last.
        self._relayed: deque[int] = deque(maxlen=retention)
        self._relayed_set: set[int] = set()  # the same seqs: is_relayed runs per event

    def emit(
        self, type: str, resource: str, data: dict[str, Any], *, relayed: bool = False
    ) -> None:
        """Append an event. ``relayed``: it describes another daemon's write on a shared
        store, so :meth:`is_relayed` tells a bridge not to publish it again."""
        with self._lock:
            self._seq += 1
            if relayed:
                if len(self._relayed) == self._relayed.maxlen:
                    self._relayed_set.discard(self._relayed[0])  # about to fall off
                self._relayed.append(self._seq)
                self._relayed_set.add(self._seq)
            self._events.append(
                {
                    "seq": self._seq,
                    "source": self.source,
                    "type": type,
                    "resource": resource,
                    "data": data,
                    "ts": self._clock.now(),
                }
            )
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def after(self, seq: int) -> list[dict[str, Any]]:
        """Events with a sequence number above ``seq``, oldest first."""
        with self._lock:
            # Sequence numbers are consecutive, so the answer is the last (newest - seq)
            # events: walk from the new end, not over everything retained.
            count = min(max(self._seq - seq, 0), len(self._events))
            newest = list(itertools.islice(reversed(self._events), count))
        newest.reverse()
        return newest

    def is_relayed(self, seq: int) -> bool:
        with self._lock:
            return seq in self._relayed_set

    @property
    def last_seq(self) -> int:
        with self._lock:
            return self._seq

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after every append; returns the function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe
