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

Under faults (docs/adr/0030) neither side holds anything up: the listener reconnects with
backoff and logs once per outage; the publisher waits at most PUBLISH_WITHIN_S for the server
(it runs in the thread that appended, a write's), and while the server is away it drops the
events it can't send, trying again after a backoff, instead of waiting on every one.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import psycopg

from ..retrying import Retrying
from ..store_url import url_key
from .connection import AnsweringConnection
from .store import conninfo

__all__ = ["EventBridge", "channel_name"]

log = logging.getLogger("venom_mem.events")

PUBLISH_WITHIN_S = 1.0  # a NOTIFY is one short round trip; a write's thread waits on it


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
        self._url = conninfo(url)
        self._channel = channel_name(url)
        self._events = events
        self._published = events.last_seq
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._publisher: AnsweringConnection | None = None
        self._publishing = Retrying("publishing events to other daemons", log, cap=10.0)
        self._publish_again = 0.0  # while publishing fails, when to try next
        self._listening = Retrying("the event listener", log, start=0.25, cap=5.0)
        self._thread = threading.Thread(target=self._listen, name="venom-mem-notify", daemon=True)
        self._unsubscribe: Any = None
        self._relisten: list[Callable[[], None]] = []

    def after_relisten(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` in the listening thread each time LISTEN is on again after the
        connection was lost (not the first time): events sent meanwhile were missed."""
        self._relisten.append(callback)

    def start(self, timeout_s: float = 10.0) -> None:
        """Connect, start listening, and follow the local log; waits until LISTEN is on."""
        self._publisher = self._connect_publisher()
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
                self._send(event["type"], text)

    def _send(self, kind: str, text: str) -> None:
        if self._publishing.failing and time.monotonic() < self._publish_again:
            return  # the server is away: this event is lost, as the ADR's at-most-once says
        for attempt in (1, 2):  # once more on a new connection
            try:
                if self._publisher is None or self._publisher.closed:
                    self._publisher = self._connect_publisher()
                self._publisher.execute("SELECT pg_notify(%s, %s)", (self._channel, text))
            except psycopg.Error as exc:  # the write is committed; only its echo is lost
                if attempt == 2:
                    delay = self._publishing.failed(f"{kind}: {exc}")
                    self._publish_again = time.monotonic() + delay
                elif self._publisher is not None:
                    self._publisher.close()
            else:
                self._publishing.succeeded()
                return

    def _connect_publisher(self) -> AnsweringConnection:
        connection = AnsweringConnection.connect(self._url, autocommit=True)
        connection.answer_within = PUBLISH_WITHIN_S
        return connection

    def _listen(self) -> None:
        lost = False
        while not self._stop.is_set():
            try:
                with AnsweringConnection.connect(self._url, autocommit=True) as connection:
                    connection.execute(f'LISTEN "{self._channel}"')
                    self._ready.set()
                    self._listening.succeeded()
                    if lost:
                        lost = False
                        self._relistened()
                    while not self._stop.is_set():
                        for note in connection.notifies(timeout=0.5):
                            self._relay(note.payload)
            except psycopg.Error as exc:
                if self._stop.is_set():
                    return
                lost = True
                self._ready.set()
                self._stop.wait(self._listening.failed(exc))

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
