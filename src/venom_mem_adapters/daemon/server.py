"""The daemon's reactor: accept connections, frame requests, authenticate, dispatch.

One connection is one caller. After ``hello`` every request is checked against the
manifest and the caller's rights before any handler runs (:func:`venom_mem_core.dispatch.
prepare`). The manifest says what answers a verb and where it runs (docs/adr/0033): a core
use case (looked up by :func:`venom_mem_core.usecases.verbs.use_cases` when the daemon is
built), writes one at a time on the store's one writer, reads on a small pool of read-only
connections (so a read answers while a write is held); or an operations verb answered from
the daemon's own state (:mod:`.ops`). A query the use case will
embed is embedded first, off the pool, within ``embeddings.query_timeout_ms``. Requests on a
connection may be pipelined and are answered as they finish, each reply carrying its
request's ``id``.

Bounds (docs/adr/0013): at most ``max_connections`` connections (the one over it is told so
and closed), unread bytes held to a budget (flow.py), the readers and the writer shared
between connections least demand first (flow.FairGate); connection.py bounds each
connection's requests and drops those of a peer that went away.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.abc
import attrs

import venom_mem_core
from venom_mem_core.commands import Command
from venom_mem_core.config import Config
from venom_mem_core.dispatch import prepare
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.ports import Embedder, SharedPrincipals
from venom_mem_core.records import Grant, Principal
from venom_mem_core.usecases import principals
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.memories import sweep_tombstones
from venom_mem_core.usecases.search import embed_text
from venom_mem_core.usecases.verbs import UseCase, command, use_cases

from .connection import CALLER, Connection
from .context import DaemonPaths, Request
from .event_log import EventLog
from .flow import ByteBudget, FairGate, HeapTrimmer
from .writer import WriterThread

if TYPE_CHECKING:
    from ..embeddings.service import EmbeddingService
    from ..store_backend import StoreBackend
    from .ops import Ops

__all__ = ["Daemon"]

log = logging.getLogger("venom_mem.daemon")

# Room for a thousand hostile connections, and the ones still closing as they are replaced,
# beside everyone else's (every connection comes from the same user).
MAX_CONNECTIONS = 2048
# Bytes of unfinished frames held beyond the connections' own allowances (flow.py).
FRAME_BUDGET = 32 * 1024 * 1024
READERS = 4
ACCEPT_BATCH = 16
# Writes handed to the writer thread at once: enough that it never waits on the event loop.
WRITES_AHEAD = 2
SHUTDOWN_DEADLINE_S = 2.0
SWEEP_INTERVAL_S = 86400.0
# While the disk is full, one write is let through as a probe this long after the last
# failure, the wait doubling up to the most; everything else is refused without a try.
DISK_PROBE_FIRST_S = 0.25
DISK_PROBE_MAX_S = 2.0
# A purge's checkpoint that a reader kept busy is retried this often while serving.
ERASE_RETRY_S = 30.0

T = TypeVar("T")


class Embedded:
    """The embedder a use case gets once its query was embedded ahead: it answers with that
    vector, or ``unavailable.embeddings`` when embedding it failed or took too long."""

    def __init__(self, provider: Embedder, vector: Sequence[float] | None) -> None:
        self.model = provider.model
        self.dimensions = provider.dimensions
        self._vector = vector

    def embed(self, texts: Sequence[str], *, timeout_s: float) -> list[list[float]]:
        if self._vector is None:
            raise VenomError("unavailable.embeddings", "the query could not be embedded")
        return [list(self._vector) for _ in texts]


class DiskFull:
    """Writes are failing for want of space: the last error, and when to probe again."""

    def __init__(self, error: VenomError) -> None:
        self.error = error
        self._wait_s = DISK_PROBE_FIRST_S
        self._next = time.monotonic() + self._wait_s

    def probe_due(self) -> bool:
        """True at most once per backoff: the caller's write is then the probe."""
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + self._wait_s  # one probe at a time, until it reports back
        return True

    def failed_again(self, error: VenomError) -> None:
        self.error = error
        self._wait_s = min(self._wait_s * 2, DISK_PROBE_MAX_S)
        self._next = time.monotonic() + self._wait_s


def _check_served(core: Mapping[str, UseCase], ops: Ops) -> None:
    """Refuse to serve a manifest whose daemon verbs aren't all answered here: each has its
    use case or its op (``hello`` is the connection's own)."""
    for verb in MANIFEST.verbs:
        answered = verb.name in core or verb.name in ops.handlers
        if not answered and verb.local is None and verb.name != "hello":
            raise VenomError(
                "failed.internal",
                f"verb {verb.name} is answered by nothing in this daemon: the manifest "
                "gives it no use_case or op",
                {"verb": verb.name},
            )


class Daemon:
    """The serving state of one daemon process: one source, one app, its principals, and the
    operations verbs' state (``ops``). ``venom_mem_cli.bootstrap.build_daemon`` builds one.

    ``config`` is replaced on ``config.reload``; keys that need a restart keep the values
    this daemon started with (``started_config``).
    """

    def __init__(
        self,
        *,
        app: App,
        events: EventLog,
        config: Config,
        paths: DaemonPaths,
        on_demand: bool,
        ops: Ops,
        backend: StoreBackend,
        embeddings: EmbeddingService | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.app = app
        self.events = events
        self.config = config
        self.started_config = config
        self.paths = paths
        self.on_demand = on_demand
        self.source = events.source
        self.version = venom_mem_core.__version__
        self.ops = ops
        self.core = use_cases()  # every use case looked up: one missing stops the start
        _check_served(self.core, ops)
        self.backend = backend
        self.embeddings = embeddings
        self._writer = WriterThread()
        self._readers = FairGate(READERS)
        self._writes = FairGate(WRITES_AHEAD)
        self.max_connections = max_connections
        self.frame_budget = ByteBudget(FRAME_BUDGET)
        self._trimmer = HeapTrimmer()
        self._connections = 0
        self._open: set[Connection] = set()
        self._activity = anyio.Event()
        self._stopping = anyio.Event()
        self.write_failure: str | None = None
        self._clients_seen: str | None = None  # the store's clients counter last reloaded
        # Asked once, of the backend: a store other daemons write too (docs/adr/0028).
        self._shared: SharedPrincipals | None = None
        if backend.shared:
            if not isinstance(app.store, SharedPrincipals):
                raise VenomError("failed.internal", f"a {backend.name} store reads no clients")
            self._shared = app.store
        self.disk_full: DiskFull | None = None

    # Serving ------------------------------------------------------------------------------

    async def serve(self, listener: anyio.abc.Listener[anyio.abc.SocketStream]) -> None:
        """Serve until :meth:`stop`, or until idle for the idle timeout when on demand.

        Stopping (RFC-0020 section 8, RFC-0009 section 4's shutdown): the listener closes and
        the socket goes at once, so a new caller starts the next daemon instead of meeting
        this one on its way out; open connections read no more requests, and the ones in
        flight get SHUTDOWN_DEADLINE_S to finish and send their replies. A write that started
        always commits (the writer is shielded), even past the deadline.
        """
        _allow_descriptors(self.max_connections + 256)
        asyncio.get_running_loop().set_exception_handler(_ignore_late_wakeups)
        async with anyio.create_task_group() as connections:
            async with anyio.create_task_group() as accepting:
                accepting.start_soon(self._accept, listener, connections)
                accepting.start_soon(self._trimmer.run)
                if self.on_demand:
                    accepting.start_soon(self._stop_when_idle)
                accepting.start_soon(self._finish_pending_erase)
                await self._stopping.wait()
                accepting.cancel_scope.cancel()
            with contextlib.suppress(FileNotFoundError):
                self.paths.socket.unlink()
            await listener.aclose()
            for connection in list(self._open):
                connection.stop_reading()
            with anyio.move_on_after(SHUTDOWN_DEADLINE_S):
                while self._open:
                    self._activity = anyio.Event()
                    await self._activity.wait()
            connections.cancel_scope.cancel()

    def stop(self) -> None:
        """Begin the shutdown :meth:`serve` describes (from the event loop's thread)."""
        self._stopping.set()

    async def _accept(
        self,
        listener: anyio.abc.Listener[anyio.abc.SocketStream],
        connections: anyio.abc.TaskGroup,
    ) -> None:
        """Accept every connection that is waiting each time the socket is ready, not one per
        turn of the event loop: a burst of a few hundred connects must not queue the next
        caller's connect behind it for a second (anyio's serve() takes one per turn)."""
        raw = listener.extra(anyio.abc.SocketAttribute.raw_socket, None)
        if raw is None:
            await listener.serve(self._connection, task_group=connections)
            return
        while True:
            await anyio.wait_readable(raw)
            for _ in range(ACCEPT_BATCH):
                try:
                    client, _address = raw.accept()
                except BlockingIOError:
                    break
                except OSError as exc:  # out of descriptors: let some connections end first
                    log.warning("accept failed: %s", exc)
                    await anyio.sleep(0.1)
                    break
                client.setblocking(False)
                stream = await anyio.abc.UNIXSocketStream.from_socket(client)
                connections.start_soon(self._connection, stream)

    async def _stop_when_idle(self) -> None:
        await self._idle_watch()
        self.stop()

    def close(self) -> None:
        """After serving: let queued writes finish and stop the writer thread, then stop the
        embedding worker."""
        self._writer.close()
        if self.embeddings is not None:
            self.embeddings.close()

    def apply_config(self, config: Config) -> None:
        """Run with a reloaded config (restart-only keys already kept as started)."""
        self.config = config
        self.app.settings = config.memory_settings()
        if self.embeddings is not None:
            self.embeddings.reconfigure(config.embeddings)

    @property
    def unknown_grants(self) -> tuple[Grant, ...]:
        return tuple(self.config.grants.unknown)

    async def _idle_watch(self) -> None:
        """Return once no connection has been open for the whole idle timeout."""
        while True:
            self._activity = anyio.Event()
            if self._connections > 0:
                await self._activity.wait()
                continue
            with anyio.move_on_after(self.started_config.daemon.idle_timeout_ms / 1000):
                await self._activity.wait()
                continue
            if self._connections == 0:
                return

    def _touch(self, delta: int) -> None:
        self._connections += delta
        self._activity.set()

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        connection = Connection(self, stream)
        self._open.add(connection)
        self._touch(+1)
        try:
            if self._stopping.is_set():
                await stream.aclose()  # accepted as the listener closed: the caller retries
                return
            if len(self._open) > self.max_connections:
                await connection.refuse(
                    VenomError(
                        "unavailable.connection_limit",
                        f"the daemon already serves {self.max_connections} connections,"
                        " the most it takes at once",
                        {
                            "limit": self.max_connections,
                            "fix": "close idle connections to the daemon, then retry",
                        },
                    )
                )
                return
            await connection.run()
        except Exception:  # one connection's failure must never stop the listener
            log.exception("connection failed")
        finally:
            self._open.discard(connection)
            self._touch(-1)
            self._trimmer.due()

    # Dispatch -----------------------------------------------------------------------------

    async def hello(self, params: Any, peer_uid: int | None) -> tuple[Principal, dict[str, Any]]:
        if params is None:
            params = {}  # as for every verb: no params, no auth, unknown
        if not isinstance(params, dict):
            raise VenomError.param("type", "params", "params must be an object")
        auth = params.get("auth") or {}
        if not isinstance(auth, dict) or not isinstance(auth.get("token", ""), str):
            raise VenomError.param("type", "auth", 'auth must be {"token": "..."}')
        token = auth.get("token", "")
        if token == principals.OWNER_TOKEN:
            if peer_uid != os.getuid():
                raise VenomError(
                    "denied.token",
                    "@owner is accepted only from the daemon's own user",
                    {"reason": "invalid"},
                )
            who = principals.OWNER
        else:
            await self.sync_clients()
            who = principals.resolve_token(self.app, token, unknown=self.unknown_grants)
        ok: dict[str, Any] = {"principal": who.id}
        if who.label is not None:
            ok["label"] = who.label
        ok.update(server="venom-mem", version=self.version, source=self.source)
        return who, ok

    async def sync_clients(self) -> None:
        """Before a token is trusted: on a store several daemons share (PostgreSQL), reload
        the registry when the store's clients counter moved, so a client added or removed
        through another daemon counts here at this request (docs/adr/0028)."""
        if self._shared is None:
            return
        await anyio.to_thread.run_sync(self._sync_clients, self._shared)

    def _sync_clients(self, shared: SharedPrincipals) -> None:
        version = shared.clients_version()
        if version != self._clients_seen:
            self.app.registry.reload(self.app.store)
            self._clients_seen = version

    async def dispatch(self, principal: Principal, verb_name: Any, params: Any) -> dict[str, Any]:
        verb, checked = prepare(verb_name, params, principal)
        core = self.core.get(verb.name)
        if core is None:
            handler = self.ops.handlers.get(verb.name)
            if handler is None:  # hello after hello
                raise VenomError("unsupported.verb", f"{verb.name} is not served by this daemon")
            return await handler(
                Request(daemon=self, principal=principal, verb=verb, params=checked)
            )
        cmd = command(verb.name, checked)
        if verb.audited:
            await self.ops.audit.check()
        return await self.run_core(core, principal, cmd)

    async def run_core(self, core: UseCase, principal: Principal, cmd: Command) -> dict[str, Any]:
        """Run a core use case off the reactor: writes one at a time, reads on the pool."""
        app = self.app
        if core.embeds is not None and app.embedder is not None:
            app = await self._embedded_ahead(app, core.embeds(app, cmd))
        call = functools.partial(core.run, app, principal, cmd)
        if core.verb.runs == "writer":
            return await self.in_writer(call)
        return await self.in_reader(call)

    async def _embedded_ahead(self, app: App, text: str | None) -> App:
        """The app the use case gets once ``text`` is embedded, in a thread of its own and
        within ``query_timeout_ms``: the provider is never waited on while holding a reader
        (a provider that hangs must not hold back other callers' reads)."""
        if text is None or app.embedder is None:
            return app
        from ..embeddings.worker import in_daemon_thread  # loaded only with embeddings on

        vector = None
        with anyio.move_on_after(app.settings.query_timeout_ms / 1000):
            try:
                call = functools.partial(embed_text, app, text)
                vector = await in_daemon_thread(call, name="venom-mem query embed")
            except Exception:
                log.exception("embedding a query failed")
        return attrs.evolve(app, embedder=Embedded(app.embedder, vector))

    async def in_reader(self, fn: Callable[[], T]) -> T:
        """Run a read on the pool, in its connection's turn."""
        async with self._readers.slot(CALLER.get()):
            return await anyio.to_thread.run_sync(fn)

    async def in_writer(self, fn: Callable[[], T]) -> T:
        """Run a write on the writer. After a failure the backend says latches
        (``StoreBackend.latches``: I/O failure or corruption), later writes are refused
        until a restart: an fsync that failed once may have lied, so retrying it could
        acknowledge data that isn't on disk. Reads go on.

        A full disk (``StoreBackend.is_disk_full``) is different (the kernel refused the
        bytes; nothing was acknowledged):
        writes are refused without touching the store, except one let through as a probe
        each time the backoff (DISK_PROBE_FIRST_S doubling to DISK_PROBE_MAX_S) runs out.
        The first write that succeeds ends it, with no restart."""
        if self.write_failure is not None:
            raise VenomError(
                "failed.store",
                f"writes are stopped after an earlier store failure: {self.write_failure}",
                {"path": str(self.paths.store), "fix": "restart the daemon: venom-mem serve"},
            )
        if self.disk_full is not None and not self.disk_full.probe_due():
            raise self.disk_full.error
        try:
            async with self._writes.slot(CALLER.get()):
                result = await self._writer.run(fn)
        except VenomError as error:
            if self.backend.is_disk_full(error):
                if self.disk_full is None:
                    log.error("the disk is full; writes resume once one succeeds: %s", error)
                    self.disk_full = DiskFull(error)
                else:
                    self.disk_full.failed_again(error)
            elif self.backend.latches(error):
                self.write_failure = error.message
                log.error("store failure on a write; refusing writes until restart: %s", error)
            raise
        if self.disk_full is not None:
            log.warning("a write succeeded: the disk has room again, writes resume")
            self.disk_full = None
        return result

    async def sweep_tombstones_every(self, interval_s: float = SWEEP_INTERVAL_S) -> None:
        """Sweep expired tombstones, and finish a checkpoint a busy purge left undone, once
        per interval while serving (serve does both at start), on the writer like every other
        write. A sweep that fails is retried at the next."""
        while True:
            await anyio.sleep(interval_s)
            try:
                swept = await self.in_writer(functools.partial(sweep_tombstones, self.app))
                # For a daemon that never restarts (section 2 promises it at the next serve).
                await self.in_writer(self.app.store.erase_pending_traces)
            except VenomError as error:
                log.warning("tombstone sweep failed, retried in %ss: %s", interval_s, error)
            else:
                log.info("tombstone sweep removed %d memories", swept)

    async def _finish_pending_erase(self, interval_s: float = ERASE_RETRY_S) -> None:
        """Retry a purge's checkpoint that a reader kept busy until it is done: the text of
        an acknowledged purge should not wait for a restart or the daily sweep."""
        while True:
            await anyio.sleep(interval_s)
            with contextlib.suppress(VenomError):
                await self.in_writer(self.app.store.erase_pending_traces)


def _ignore_late_wakeups(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A socket that became ready in the same loop turn as its waiter was cancelled (a peer
    gone, a connection dropped) wakes a future that is already done; asyncio would log
    that as an error. Everything else goes to the default handler."""
    if isinstance(context.get("exception"), asyncio.InvalidStateError):
        return
    loop.default_exception_handler(context)


def _allow_descriptors(wanted: int) -> None:
    """Raise the soft limit on open files toward ``wanted`` (each connection is one)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
