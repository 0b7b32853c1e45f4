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

Publishing is off the write path (docs/adr/0031): an append only wakes the publishing
thread, which sends every event appended since its last round in one statement, in seq
order (a transaction's notifications are delivered in the order sent), on a connection with
``synchronous_commit`` off: a NOTIFY's commit is a commit, and waiting for its WAL flush
would cost each write a second fsync for a delivery that is at most once anyway. Each
payload carries its ``seq``, so two alike events in one round are both delivered (PostgreSQL
folds identical payloads of one transaction).

Under faults (docs/adr/0030) neither side holds anything up: the listener reconnects with
backoff and logs once per outage; the publisher waits at most PUBLISH_WITHIN_S for the
server, and while the server is away it drops the events it can't send, trying again after
a backoff, instead of waiting on every round.
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
from ..retrying import Retrying
from .connection import AnsweringConnection
from .store import conninfo

__all__ = ["EventBridge", "channel_name"]

log = logging.getLogger("venom_mem.events")

PUBLISH_WITHIN_S = 1.0  # a NOTIFY is one short round trip; the next round waits on it


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
        # How this daemon's own payloads begin (_publish_new writes "source" first): its
        # echoes are told without decoding them, every daemon hearing every daemon's events.
        self._own = '{"source":' + json.dumps(events.source) + ","
        self._published = events.last_seq
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._publisher: AnsweringConnection | None = None
        self._appended = threading.Event()
        self._publishing = Retrying("publishing events to other daemons", log, cap=10.0)
        self._publish_again = 0.0  # while publishing fails, when to try next
        self._listening = Retrying("the event listener", log, start=0.25, cap=5.0)
        self._thread = threading.Thread(target=self._listen, name="venom-mem-notify", daemon=True)
        self._publisher_thread = threading.Thread(
            target=self._publish_loop, name="venom-mem-publish", daemon=True
        )
        self._unsubscribe: Any = None
        self._relisten: list[Callable[[], None]] = []

    def after_relisten(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` in the listening thread each time LISTEN is on again after the
        connection was lost (not the first time): events sent meanwhile were missed."""
        self._relisten.append(callback)

    def start(self, timeout_s: float = 10.0) -> None:
        """Start listening and follow the local log; waits until LISTEN is on (the publisher
        connects at its first round, so a server away at start holds nothing up)."""
        self._thread.start()
        self._ready.wait(timeout_s)
        self._publisher_thread.start()
        self._unsubscribe = self._events.subscribe(self._wake_publisher)

    def _wake_publisher(self) -> None:
        """After every append, in the appending thread. The listening thread appends only
        other daemons' events, which are never published: no wake for those."""
        if threading.current_thread() is not self._thread:
            self._appended.set()

    def _connect_publisher(self) -> AnsweringConnection:
        connection = AnsweringConnection.connect(self._url, autocommit=True)
        connection.answer_within = PUBLISH_WITHIN_S
        connection.execute("SET synchronous_commit = off")
        return connection

    def _publish_loop(self) -> None:
        while not self._stop.is_set():
            self._appended.wait()
            self._appended.clear()
            self._publish_new()

    def _publish_new(self) -> None:
        """Every local event appended since the last round, in one transaction."""
        with self._lock:
            new = self._events.after(self._published)
            if not new:
                return
            self._published = new[-1]["seq"]
            texts = [
                json.dumps(
                    {
                        "source": self._events.source,
                        "seq": event["seq"],
                        "type": event["type"],
                        "resource": event["resource"],
                        "data": event["data"],
                    },
                    separators=(",", ":"),
                )
                for event in new
                if not self._events.is_relayed(event["seq"])
            ]
            if texts:
                self._send(texts)

    def _send(self, texts: list[str]) -> None:
        if self._publishing.failing and time.monotonic() < self._publish_again:
            return  # the server is away: these events are lost, as the ADR's at-most-once says
        for attempt in (1, 2):  # once more on a new connection
            try:
                if self._publisher is None or self._publisher.closed:
                    self._publisher = self._connect_publisher()
                # One statement, one transaction: the array's order is the order sent.
                self._publisher.execute(
                    "SELECT pg_notify(%s, payload) FROM unnest(%s::text[]) AS payload",
                    (self._channel, texts),
                )
            except psycopg.Error as exc:  # the writes are committed; only their echo is lost
                if attempt == 2:
                    delay = self._publishing.failed(f"{len(texts)} events: {exc}")
                    self._publish_again = time.monotonic() + delay
                elif self._publisher is not None:
                    self._publisher.close()
            else:
                self._publishing.succeeded()
                return

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
        if payload.startswith(self._own):
            return  # our own echo
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
        self._appended.set()
        if self._publisher_thread.is_alive():
            self._publisher_thread.join(5)
        self._publish_new()  # what was appended since the last round
        self._thread.join(5)
        if self._publisher is not None:
            self._publisher.close()
