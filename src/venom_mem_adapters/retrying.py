"""Background work that meets a store that is away: back off, and say so once.

A task that runs while serving (the tombstone sweep, the erase a purge left, the NOTIFY
listener, the embedding worker) must neither stop the daemon's writes nor fill its log when
the database is down: :class:`Retrying` gives the wait before the next attempt (``start``,
doubling, at most ``cap``) and logs the first failure of a run and the first success after
it, nothing in between (docs/adr/0030).
"""

from __future__ import annotations

import logging
import time

__all__ = ["Retrying"]


class Retrying:
    def __init__(
        self, what: str, log: logging.Logger, *, start: float = 0.5, cap: float = 30.0
    ) -> None:
        self.what = what
        self._log = log
        self.start = start
        self.cap = cap
        self.delay: float | None = None  # None: the last attempt succeeded
        self.failures = 0
        self._since = 0.0

    @property
    def failing(self) -> bool:
        return self.delay is not None

    def failed(self, error: object) -> float:
        """Note one more failure; returns the wait before the next attempt."""
        self.failures += 1
        if self.delay is None:
            self._since = time.monotonic()
            self.delay = self.start
            self._log.warning("%s failed, retrying with backoff: %s", self.what, error)
        else:
            self.delay = min(self.delay * 2, self.cap)
        return self.delay

    def succeeded(self) -> None:
        if self.delay is not None:
            self._log.warning(
                "%s works again after %d failures in %.1f s",
                self.what,
                self.failures,
                time.monotonic() - self._since,
            )
        self.delay = None
        self.failures = 0
