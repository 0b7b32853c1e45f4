"""PostgresStore: the Store port on one PostgreSQL database, shared by several daemons.

Every transaction runs on a connection borrowed from a psycopg pool. A read is one
``REPEATABLE READ READ ONLY`` transaction, so it sees one committed snapshot; a write is one
``READ COMMITTED`` transaction that commits when the block exits cleanly and rolls back when
it raises, and takes the row and advisory locks that tx.py describes, so daemons on other
machines writing the same rows queue behind each other the way SQLite's one writer would
have them. A lock not had within 5 s (``lock_timeout``) is ``unavailable.store_busy``.

Those locks serialize this daemon's own writes as well as other machines', so the store
declares :class:`~venom_mem_core.ports.ConcurrentWrites`: the daemon runs :data:`WRITERS`
write jobs at once, and the server commits them in groups (docs/adr/0031). Each job runs
inside :meth:`PostgresStore.write_job`, whose :class:`~venom_mem_adapters.commit_order.
CommitOrder` keeps what follows each commit (the events) in commit order.

Under faults (docs/adr/0030): every connection has a ``connect_timeout`` and a server-side
``statement_timeout``, and every wait for the server a deadline kept from this side
(connection.py),
so a server that is down or a link that stalls gives ``unavailable.store`` within the
verb's budget, never a hang. An idle connection the server or the link closed is noticed
when it is borrowed (its socket is readable) and replaced, and the pool reconnects with a
short backoff, so the first transaction after the server is back succeeds. A COMMIT whose
reply was lost is settled by the transaction's ID (:meth:`PostgresStore._settle_commit`):
a write that committed is reported done, one that didn't is reported not applied.

Credentials come from libpq alone (url.py); the store names its database by its public URL.
"""

from __future__ import annotations

import datetime
import logging
import select
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import TYPE_CHECKING, Any, Final

import attrs
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from venom_mem_core.errors import VenomError
from venom_mem_core.ports import ERASE_PENDING, ConcurrentWrites, SharedPrincipals, Store

from ..commit_order import CommitOrder
from ..config import check_url, public_url
from ..sql import SqlStore
from . import errors
from .connection import ANSWER_WITHIN_S, AnsweringConnection
from .errors import is_lost_connection, translated, unreachable
from .migrations import DEFAULT_MIGRATIONS, Migration, migrate
from .tx import PgReadTx, PgWriteTx

if TYPE_CHECKING:
    from ..sql import SqlVectorRows

__all__ = ["PostgresStore"]

log = logging.getLogger("venom_mem.store")

Connection = AnsweringConnection
LOCK_TIMEOUT_MS = 5000  # SQLite's busy_timeout
# The server ends a statement that runs longer (57014, unavailable.store): above the lock
# timeout, so a lock wait is store_busy first; far below a verb's budget (10 s for a read).
STATEMENT_TIMEOUT_MS = 6000
# A session left in an open transaction by a client that went away holds its locks until
# the server notices; this bounds that when the link stalled rather than closed.
IDLE_IN_TRANSACTION_MS = 10_000
# libpq's options, unless the URL sets them: a server that doesn't answer a connect, and a
# peer gone without a FIN (keepalives; TCP only), are given up on in seconds.
CONNECT_DEFAULTS = {
    "connect_timeout": "2",
    "keepalives_idle": "10",
    "keepalives_interval": "3",
    "keepalives_count": "3",
}
# How long one exchange may wait for the server (connection.py) while it doesn't answer:
# once it failed, the next callers learn it fast instead of each waiting the whole
# ANSWER_WITHIN_S; the first success ends the outage.
OUTAGE_ANSWER_WITHIN_S = 2.0
# How long a caller waits for a pooled connection, ordinarily and during an outage.
BORROW_WAIT_S = 3.0  # below hello's 5 s: hello reads the clients counter first
OUTAGE_BORROW_WAIT_S = 1.0
# The pool gives up a reconnection after this and starts again at the next borrow, so
# its backoff (1 s, doubling) never grows past about a second.
RECONNECT_WINDOW_S = 2.0
# A failure this soon after the store answered again is the same outage going on (the
# other writers' connections from before it fail one by one as they are borrowed): it is
# not logged again, and doctor's "since" stays the outage's first.
SAME_OUTAGE_S = 3.0
# How long a COMMIT whose reply was lost may take to settle (the server must be back).
SETTLE_WITHIN_S = 10.0
# A purge's VACUUM may run long: no statement_timeout, and a wait of its own.
VACUUM_ANSWER_WITHIN_S = 60.0
_OPEN_TIMEOUT_S = 10.0
# Write jobs a daemon runs at once (docs/adr/0031: 4 keep one daemon's commits grouped;
# more gained nothing on 2 cores), and the connections beside them: the daemon's readers,
# one for the token check and one for the embedding worker or a VACUUM. docs/team-store.md
# gives the server's max_connections this implies.
WRITERS = 4
READERS = 4
CONNECTIONS = WRITERS + READERS + 2
_BEGIN_WRITE = "BEGIN ISOLATION LEVEL READ COMMITTED"
# The write's ID and the server's start, to settle a lost COMMIT reply (_settle_commit).
_XID = "SELECT pg_current_xact_id()::text, pg_postmaster_start_time()::text"
# The tables a purge leaves dead tuples in; erase_traces vacuums them.
_PURGED_TABLES = ("memories", "memory_versions", "memory_fts", "memory_fts_terms", "memory_vectors")


def conninfo(url: str) -> str:
    """``url`` with :data:`CONNECT_DEFAULTS` for what it doesn't set itself."""
    given = conninfo_to_dict(url)
    return make_conninfo(url, **{k: v for k, v in CONNECT_DEFAULTS.items() if k not in given})


def _configure(connection: Connection) -> None:
    connection.autocommit = True
    connection.execute(  # one round trip for a new connection
        f"SET lock_timeout = {LOCK_TIMEOUT_MS}; SET statement_timeout = {STATEMENT_TIMEOUT_MS};"
        f" SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS};"
        " SET application_name = 'venom-mem'"
    )


def _still_connected(connection: Connection) -> bool:
    """The check at every borrow, without a round trip: an idle connection has nothing to
    read, so a readable socket is the server's goodbye (a shutdown's FATAL, a closed or
    reset link). Such a connection is closed, so the pool replaces it when it is returned."""
    if connection.closed:
        return False
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError):
        readable = [True]
    if readable:
        connection.close()
    return not readable


@attrs.frozen(kw_only=True)
class Outage:
    """The store stopped answering: why (``data.reason``), the server's words, since when."""

    reason: str
    detail: str
    since: str  # RFC 3339, UTC
    began: float  # time.monotonic()


class _Pool(ConnectionPool[Connection]):
    """psycopg's pool, remembering why its last connection attempt failed: a caller told
    "no connection within 1 s" learns the server's reason too (doctor's store.reachable)."""

    last_failure: str | None = None

    def _connect(self, timeout: float | None = None) -> Connection:
        try:
            connection = super()._connect(timeout)
        except psycopg.Error as exc:
            self.last_failure = str(exc).strip().splitlines()[-1] if str(exc).strip() else "?"
            raise
        self.last_failure = None
        return connection


class PostgresStore(SqlStore):
    """The Store port on PostgreSQL. Build it with :meth:`open`."""

    # FTS5's terms, bm25 and snippets through venom_mem_core.fts (postgres/fts.py), so the
    # contract's exact-ranking cases run here too (venom_mem_core.ports.RanksLikeFts5).
    ranks_like_fts5: Final = True

    def __init__(self, url: str, pool: _Pool) -> None:
        self.url = public_url(url)
        self._conninfo = conninfo(url)
        self._pool = pool
        self._writing = threading.local()
        self._order = CommitOrder()
        self._closed = False
        self._outage_lock = threading.Lock()
        self.outage: Outage | None = None  # doctor's store.reachable
        self._ended: tuple[Outage, float] | None = None  # the last outage, when it ended

    @classmethod
    def open(
        cls,
        url: str,
        *,
        migrations: Sequence[Migration] = DEFAULT_MIGRATIONS,
        connections: int = CONNECTIONS,
    ) -> PostgresStore:
        """Check the URL, connect, migrate (or create) the schema.

        A server that can't be reached here is ``failed.store``, as RFC-0020 has a store
        that can't be opened at serve: there is no daemon yet to wait and reconnect."""
        check_url(url)
        where = public_url(url)
        try:
            with translated(where), psycopg.connect(conninfo(url), autocommit=True) as connection:
                migrate(connection, where, migrations)
        except VenomError as error:
            if error.code != "unavailable.store":
                raise
            data = {k: v for k, v in error.data.items() if k != "fix"}
            detail = error.message.split("): ", 1)[-1]  # the server's or libpq's words
            raise VenomError("failed.store", f"store {where}: {detail}", data) from None
        # The pool logs every failed attempt; the store logs once an outage (_lost, _back).
        logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
        pool = _Pool(
            conninfo(url),
            connection_class=AnsweringConnection,
            min_size=1,
            max_size=connections,
            configure=_configure,
            open=False,
            name="venom-mem",
            timeout=BORROW_WAIT_S,
            reconnect_timeout=RECONNECT_WINDOW_S,
        )
        try:
            pool.open(wait=True, timeout=_OPEN_TIMEOUT_S)
        except Exception as exc:
            pool.close()
            raise VenomError(
                "failed.store", f"store {where}: cannot connect: {exc}", {"path": where}
            ) from None
        return cls(url, pool)

    def _check_open(self) -> None:
        if self._closed:
            raise VenomError("failed.internal", f"the store {self.url} is closed")

    # -- outages --------------------------------------------------------------------------

    def _lost(self, error: VenomError) -> None:
        """Note an outage on its first ``unavailable.store``, and log it once (a failure
        within SAME_OUTAGE_S of its end takes the last outage up again, silently)."""
        if error.code != "unavailable.store":
            return
        with self._outage_lock:
            if self.outage is not None:
                return
            if self._ended is not None and time.monotonic() - self._ended[1] < SAME_OUTAGE_S:
                self.outage = self._ended[0]
                return
            now = datetime.datetime.now(datetime.UTC)
            self.outage = Outage(
                reason=str(error.data.get("reason", errors.LOST)),
                detail=error.message,
                since=now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                began=time.monotonic(),
            )
        log.warning("lost the store; retrying until it answers: %s", error.message)

    def _back(self) -> None:
        if self.outage is None:
            return
        with self._outage_lock:
            outage, self.outage = self.outage, None
            if outage is not None:
                self._ended = (outage, time.monotonic())
        if outage is not None:
            log.warning(
                "the store %s answers again after %.1f s", self.url, time.monotonic() - outage.began
            )

    def _borrow(self, answer_within: float) -> Connection:
        down = self.outage is not None
        wait = OUTAGE_BORROW_WAIT_S if down else BORROW_WAIT_S
        give_up = time.monotonic() + wait
        while True:
            try:
                connection = self._pool.getconn(timeout=max(give_up - time.monotonic(), 0.01))
            except PoolTimeout:
                why = self._pool.last_failure or f"no connection to the server within {wait:g} s"
                error = unreachable(self.url, "cannot_connect", why)
                self._lost(error)
                raise error from None
            if _still_connected(connection):
                break
            # Closed: the pool replaces it now. Ask again at once (the pool's own check
            # would sleep a backoff before each next idle connection, all dead alike).
            self._pool.putconn(connection)
        connection.answer_within = min(answer_within, OUTAGE_ANSWER_WITHIN_S if down else 1e9)
        return connection

    @contextmanager
    def _connection(self, answer_within: float = ANSWER_WITHIN_S) -> Iterator[Connection]:
        """A pooled connection; errors become VenomErrors, and an outage is noted."""
        connection = self._borrow(answer_within)
        try:
            with translated(self.url):
                yield connection
        except VenomError as error:
            self._lost(error)
            raise
        finally:
            self._pool.putconn(connection)
        self._back()

    @contextmanager
    def _transaction(self, begin: str, *, write: bool) -> Iterator[Connection]:
        """BEGIN ... COMMIT in pipeline mode: statements whose results nothing reads (BEGIN,
        the postings, versions, COMMIT) travel with the next one that is read, so a write
        costs a few round trips to the server rather than one per statement.

        A write first asks for its transaction ID, in the same round trip as its first
        read: when the COMMIT's reply is lost, :meth:`_settle_commit` asks the server, once
        it answers, whether that transaction committed.

        A write takes its commit_order ticket just before COMMIT is sent and, once
        committed and its connection back in the pool, waits for its turn, so what follows
        each commit (its events) keeps commit order (docs/adr/0031)."""
        ticket = None
        try:
            with self._connection() as connection:
                committing = False
                xid: Any = None
                backend = connection.info.backend_pid  # known locally; gone with the connection
                try:
                    with connection.pipeline():
                        connection.execute(begin)
                        asked = connection.execute(_XID) if write else None
                        yield connection
                        if asked is not None:
                            xid = asked.fetchone()
                        ticket = self._order.take() if write else None
                        committing = True
                        connection.execute("COMMIT")
                except psycopg.Error as exc:
                    if not (committing and xid is not None and is_lost_connection(exc)):
                        with suppress(psycopg.Error):  # the original error is the one to report
                            connection.execute("ROLLBACK")
                        raise
                    if not self._settle_commit(xid, backend, exc):
                        raise _not_applied(self.url, exc) from exc
                    # it committed: the write is done, and its answer stands
                except BaseException:
                    with suppress(psycopg.Error):
                        connection.execute("ROLLBACK")
                    raise
        except BaseException:
            if ticket is not None:
                self._order.give_back(ticket)
            raise
        if ticket is not None:
            self._order.wait_turn(ticket)

    def _settle_commit(self, xid: Any, backend: int, exc: psycopg.Error) -> bool:
        """Whether the transaction ``xid`` (its ID and the server's start time, read at
        BEGIN), whose COMMIT was sent but not answered, committed.

        Asked on a new connection until the server answers (at most SETTLE_WITHIN_S):
        ``pg_xact_status`` says committed or aborted (a transaction a crash cut is
        aborted). While it is "in progress" the old session still lives, the link to it
        stalled: it is terminated first, so the answer is final. A server that restarted
        meanwhile may have given the ID again (an ID whose WAL never reached the disk is
        free after recovery), so there "committed" is believed only when the last row the
        write wrote carries the ID as its ``xmin``. Unsettled, the caller gets
        ``unavailable.store`` with reason ``commit_unknown``: memory.add and session.start
        are safe to repeat, and memory.update checks the revision (RFC-0020 section 8)."""
        log.warning("a COMMIT's reply was lost (%s); asking the server whether it committed", exc)
        give_up = time.monotonic() + SETTLE_WITHIN_S
        while True:
            status = None
            try:
                with AnsweringConnection.connect(self._conninfo, autocommit=True) as probe:
                    probe.answer_within = OUTAGE_ANSWER_WITHIN_S
                    status = self._xact_status(probe, xid, backend, self._witness())
                if status is not None:
                    log.warning("the transaction whose COMMIT reply was lost %s", status)
                    if status in ("committed", "aborted"):
                        return status == "committed"
            except psycopg.Error:
                pass
            if status == "unknown" or time.monotonic() >= give_up:
                raise unreachable(
                    self.url,
                    "commit_unknown",
                    f"the COMMIT's reply was lost ({exc}) and whether it committed can't be"
                    " told" + ("" if status == "unknown" else f" within {SETTLE_WITHIN_S:g} s"),
                    fix="read it back (memory.get, memory.list) before repeating; memory.add"
                    " with the same content is safe to repeat",
                ) from exc
            time.sleep(0.2)

    def _witness(self) -> tuple[str, str, int | str] | None:
        tx = getattr(self._writing, "tx", None)
        return tx.witness if isinstance(tx, PgWriteTx) else None

    @staticmethod
    def _xact_status(
        probe: Connection, began: Any, backend: int, witness: tuple[str, str, int | str] | None
    ) -> str | None:
        """committed, aborted, unknown, or None (ask again)."""
        xid, started = began
        row = probe.execute(
            "SELECT pg_xact_status(%s::xid8), pg_postmaster_start_time()::text", (xid,)
        ).fetchone()
        if row is None or row[0] is None:
            return None
        status, restarted = str(row[0]), str(row[1]) != started
        if status == "in progress":
            probe.execute("SELECT pg_terminate_backend(%s)", (backend,))
            return None  # asked again: it has ended now, one way or the other
        if status != "committed" or not restarted:
            return status
        if witness is None:
            return "unknown"
        table, column, key = witness  # names from our own SQL (tx.py), never a caller's
        row = probe.execute(
            f"SELECT xmin::text FROM {table} WHERE {column} = %s", (key,)
        ).fetchone()
        if row is not None and int(row[0]) == int(xid) % 2**32:
            return "committed"
        return "aborted" if row is None else "unknown"

    @contextmanager
    def read(self) -> Iterator[PgReadTx]:
        self._check_open()
        with self._transaction(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", write=False
        ) as connection:
            yield PgReadTx(connection, self.url)

    @contextmanager
    def write(self) -> Iterator[PgWriteTx]:
        self._check_open()
        if getattr(self._writing, "active", False):
            raise VenomError("failed.internal", "store.write() is not reentrant")
        self._writing.active = True
        self._order.end_turn()  # the job's last commit's followers are done
        try:
            with self._transaction(_BEGIN_WRITE, write=True) as connection:
                self._writing.tx = PgWriteTx(connection, self.url)
                yield self._writing.tx
        finally:
            self._writing.active = False
            self._writing.tx = None

    # -- several writers at once (ports.ConcurrentWrites) ---------------------------------

    @property
    def writers(self) -> int:
        return WRITERS

    def write_job(self) -> AbstractContextManager[None]:
        """Around one of the daemon's writer jobs: its commits' followers in commit order."""
        return self._order.job()

    # -- what several daemons share ------------------------------------------------------

    def clients_version(self) -> str:
        """A counter every client.add or removal bumps in its own transaction: a daemon
        that sees it move reloads its registry before trusting a token (docs/adr/0028)."""
        self._check_open()
        with self._connection() as connection:
            row = connection.execute(
                "SELECT value FROM meta WHERE key = 'clients_version'"
            ).fetchone()  # one statement, one round trip: it runs before every token's request
        return str(row[0]) if row else "0"

    def vector_rows(self) -> SqlVectorRows[PgReadTx]:
        """``memory_vectors`` for the embedding service (embeddings/vector_rows.py)."""
        from ..sql import SqlVectorRows  # numpy: only when embeddings are on
        from .vectors import PgVectors

        return SqlVectorRows(self, lambda tx: PgVectors(tx.connection))

    # -- maintenance ---------------------------------------------------------------------

    def erase_traces(self) -> None:
        """VACUUM the tables a purge touches, then clear :data:`ERASE_PENDING`.

        This is all a client of a PostgreSQL server can do, and less than SQLite's
        secure_delete and checkpoint give: VACUUM makes the dead tuples' space reusable but
        does not zero it, WAL segments keep the text until they are recycled, and backups
        and replicas keep it for as long as they are kept (doctor warns; docs/adr/0028).
        """
        self._check_open()
        # A purge's events are out: later commits' followers need not wait for the VACUUM.
        self._order.end_turn()
        with self._connection(VACUUM_ANSWER_WITHIN_S) as connection:
            connection.execute("SET statement_timeout = 0")
            try:
                for table in _PURGED_TABLES:
                    connection.execute(f"VACUUM {table}")
            finally:
                connection.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
        with self.write() as tx:
            tx.delete_meta(ERASE_PENDING)

    def describe(self) -> dict[str, Any]:
        with self.read() as tx:
            version = tx.schema_version()
            row = tx.connection.execute(
                "SELECT pg_database_size(current_database()), current_setting('server_version')"
            ).fetchone()
        # "15.18 (Debian 15.18-1)": the version is the first word
        size, server = (int(row[0]), str(row[1]).split(" ")[0]) if row else (0, "")
        return {
            "path": self.url,
            "schema_version": version,
            "sqlite_version": "none",
            "postgres_version": server,
            "engine": f"postgresql {server}",
            "bytes": size,
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pool.close()


def _not_applied(where: str, exc: psycopg.Error) -> VenomError:
    """A write whose COMMIT was lost and which the server says did not commit."""
    error = errors.to_venom_error(exc, where)
    return VenomError(
        error.code,
        f"{error.message}; the write was not applied",
        {**error.data, "applied": False},
    )


if TYPE_CHECKING:

    def _conforms(store: PostgresStore) -> Store:
        return store

    def _writes_at_once(store: PostgresStore) -> ConcurrentWrites:
        return store

    def _shared(store: PostgresStore) -> SharedPrincipals:
        return store
