"""Events across daemons on one PostgreSQL store, through LISTEN/NOTIFY (docs/adr/0028).

Each daemon's event log (daemon/event_log.py) holds the events of its own writes. On a store
several daemons share, :class:`EventBridge` publishes every local event with ``pg_notify``
right after the commit it describes (the log is appended after the commit), and a thread
listening on the same channel appends the other daemons' events to the local log, marked as
relayed so they are not published again. A follower of one daemon's ``events`` so sees every
daemon's writes, each with this daemon's ``source`` and ``seq`` (the stream's, as before), and
the embeddings index, which follows the log, hears of changes made elsewhere.

Events carry IDs, never text (RFC-0020 section 10), so a payload is far below NOTIFY's 8000
bytes. Delivery is at most once, as for the in-memory log itself: a daemon that is down or
reconnecting misses what was sent meanwhile, and the store remains the record. What follows
the log to keep state in step (the embeddings index) registers with :meth:`EventBridge.
after_relisten`: it is called each time the listener is back after losing the database, once
LISTEN is on again, so a reload from the store then misses nothing in between. A publish that
fails is sent again once on a new connection. The channel is named after the store's key (its
public URL), so stores in one database never mix.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import psycopg

from ..config import url_key

__all__ = ["EventBridge", "channel_name"]

log = logging.getLogger("venom_mem.events")

_RECONNECT_S = 1.0


class RelayLog(Protocol):
    """What the bridge needs of the daemon's EventLog."""

    source: str

    def emit(
        self, type: str, resource: str, data: dict[str, Any], *, relayed: bool = False
    ) -> None: ...

    def after(self, seq: int) -> list[dict[str, Any]]: ...

    def is_relayed(self, seq: int) -> bool: ...

    @property
    def last_seq(self) -> int: ...

    def subscribe(self, listener: Any) -> Any: ...


def channel_name(url: str) -> str:
    return f"venom_mem_{url_key(url)}"


class EventBridge:
    """Publish this daemon's events, relay the others'. :meth:`start`, then :meth:`close`."""

    def __init__(self, url: str, events: RelayLog) -> None:
        self._url = url
        self._channel = channel_name(url)
        self._events = events
        self._published = events.last_seq
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._publisher: psycopg.Connection[Any] | None = None
        self._thread = threading.Thread(target=self._listen, name="venom-mem-notify", daemon=True)
        self._unsubscribe: Any = None
        self._relisten: list[Callable[[], None]] = []

    def after_relisten(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` in the listening thread each time LISTEN is on again after the
        connection was lost (not the first time): events sent meanwhile were missed."""
        self._relisten.append(callback)

    def start(self, timeout_s: float = 10.0) -> None:
        """Connect, start listening, and follow the local log; waits until LISTEN is on."""
        self._publisher = psycopg.connect(self._url, autocommit=True)
        self._thread.start()
        self._ready.wait(timeout_s)
        self._unsubscribe = self._events.subscribe(self._publish_new)

    def _publish_new(self) -> None:
        """Called after every local append, in the appending thread."""
        with self._lock:
            new = self._events.after(self._published)
            if not new:
                return
            self._published = new[-1]["seq"]
            for event in new:
                if self._events.is_relayed(event["seq"]):
                    continue
                payload = {
                    "source": self._events.source,
                    "type": event["type"],
                    "resource": event["resource"],
                    "data": event["data"],
                }
                text = json.dumps(payload, separators=(",", ":"))
                for attempt in (1, 2):  # once more on a new connection
                    try:
                        assert self._publisher is not None
                        self._publisher.execute("SELECT pg_notify(%s, %s)", (self._channel, text))
                        break
                    except psycopg.Error as exc:  # the write is committed; only its echo is lost
                        if attempt == 2:
                            log.warning(
                                "could not publish %s to other daemons: %s", event["type"], exc
                            )
                        self._reconnect_publisher()

    def _reconnect_publisher(self) -> None:
        try:
            if self._publisher is not None:
                self._publisher.close()
            self._publisher = psycopg.connect(self._url, autocommit=True)
        except psycopg.Error as exc:
            log.warning("could not reconnect the event publisher: %s", exc)

    def _listen(self) -> None:
        lost = False
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as connection:
                    connection.execute(f'LISTEN "{self._channel}"')
                    self._ready.set()
                    if lost:
                        lost = False
                        self._relistened()
                    while not self._stop.is_set():
                        for note in connection.notifies(timeout=0.5):
                            self._relay(note.payload)
            except psycopg.Error as exc:
                if self._stop.is_set():
                    return
                log.warning("event listener lost the store (%s); reconnecting", exc)
                lost = True
                self._ready.set()
                time.sleep(_RECONNECT_S)

    def _relistened(self) -> None:
        for callback in list(self._relisten):
            try:
                callback()
            except Exception:  # one follower's failure must not stop the relay
                log.exception("catching up after the event listener reconnected failed")

    def _relay(self, payload: str) -> None:
        try:
            event = json.loads(payload)
        except ValueError:
            return
        if not isinstance(event, dict) or event.get("source") == self._events.source:
            return  # our own echo
        kind, resource, data = event.get("type"), event.get("resource"), event.get("data")
        if isinstance(kind, str) and isinstance(resource, str) and isinstance(data, dict):
            self._events.emit(kind, resource, data, relayed=True)

    def close(self) -> None:
        self._stop.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._thread.join(5)
        if self._publisher is not None:
            self._publisher.close()
