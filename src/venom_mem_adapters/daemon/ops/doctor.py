"""``doctor``: the checks of RFC-0020 section 11, each with a message and a fix command.

The result is ``{"status": S, "checks": [{"id", "status", "message", "fix"}, ...]}`` with S
0 when every check is ok, 1 with a warning and 2 with a failure (CONTRACT section 9). Doctor
is read-only: it opens its own read-only connection to the store, looks at the files with
``lstat``, and never calls the embeddings endpoint. What it says about embeddings comes from
the last calls the worker made, through the daemon's embedding service
(:class:`EmbeddingFacts`), else from the embedder's ``last_health`` and the
store itself.

``embeddings.api_key`` never appears: messages name hosts and models, not URLs' secrets, and
a failed call's message is the embedder's own, which never quotes the key.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict
from urllib.parse import urlsplit

import anyio
import apsw
import attrs

from venom_mem_core.config import Config, is_loopback_url
from venom_mem_core.errors import VenomError

from ...sqlite import DEFAULT_MIGRATIONS, open_connection
from ...sqlite.paths import check_private_dir, check_private_file, lock_path, sidecar_paths
from ...sqlite.schema import APPLICATION_ID
from ..server import Request
from .audit import audit_path, audit_state
from .doctor_search import search_check

if TYPE_CHECKING:
    from ...sql_vectors import SqlVectors

__all__ = ["EmbeddingFacts", "Inputs", "doctor_verb", "run_checks"]

Status = Literal["ok", "warn", "fail"]
MIN_SQLITE = (3, 42, 0)
PENDING_AGE = datetime.timedelta(hours=1)
_RANK = {"ok": 0, "warn": 1, "fail": 2}

FIX_STATUS = "venom-mem store status --json"
FIX_EMBEDDINGS = "venom-mem config get --key embeddings --json"
FIX_DAEMON = "venom-mem config get --key daemon --json"


class EmbeddingFacts(TypedDict, total=False):
    """What the embeddings worker knows, for doctor. Every key is optional.

    ``last_error``: the latest call's failure message, or ``None`` if it succeeded.
    ``last_ok``: when a call last succeeded. ``pending_over_hour``: live memories that have
    waited over an hour for a vector. ``vectors``: stored vectors.
    """

    last_error: str | None
    last_ok: str | None
    pending_over_hour: int
    vectors: int


@attrs.frozen(kw_only=True)
class Inputs:
    """Everything the checks look at, gathered from the daemon on the reactor."""

    store: Path
    config: Config  # the running config (restart keys as the daemon started)
    on_demand: bool
    facts: EmbeddingFacts | None = None
    health: Any = None  # an embedder's ``last_health`` (``.ok``, ``.message``) if it has one
    write_failure: str | None = None  # why the daemon stopped taking writes, if it did
    disk_full: str | None = None  # the last disk-full error while writes wait for room
    now: datetime.datetime = attrs.field(factory=lambda: datetime.datetime.now(datetime.UTC))


def _check(id: str, status: Status, message: str, fix: str) -> dict[str, str]:
    return {"id": id, "status": status, "message": message, "fix": fix}


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment.microsecond // 1000:03d}Z"
    )


# -- store -------------------------------------------------------------------------------------


def _unopened(message: str) -> list[dict[str, str]]:
    """store.open failed with ``message``, so store.schema can't be read either."""
    return [
        _check("store.open", "fail", message, FIX_STATUS),
        _check("store.schema", "fail", "Schema version unknown: the store didn't open", FIX_STATUS),
    ]


def _schema_check(version: int, supported: int, migrate_fix: str) -> dict[str, str]:
    """store.schema: the store's version is the one this venom-mem migrates to."""
    if version != supported:
        return _check(
            "store.schema",
            "fail",
            f"Schema version {version}; this venom-mem uses schema version {supported}",
            migrate_fix,
        )
    return _check("store.schema", "ok", f"Schema version {version}", FIX_STATUS)


def _store_checks(inputs: Inputs, connection: apsw.Connection | None, error: str) -> list[Any]:
    path = inputs.store
    if connection is None:
        return _unopened(f"Can't open the store at {path}: {error}")
    checks = [_open_check(inputs, connection)]
    supported = len(DEFAULT_MIGRATIONS)
    version = int(connection.pragma("user_version"))
    application_id = int(connection.pragma("application_id"))
    if application_id != APPLICATION_ID:
        checks.append(
            _check(
                "store.schema",
                "fail",
                f"Schema version {version}, but the file is not a venom-mem store "
                f"(application_id {application_id})",
                FIX_STATUS,
            )
        )
    else:
        fix = "venom-mem serve  # a restart migrates an older store"
        checks.append(_schema_check(version, supported, fix))
    return checks


def _open_check(inputs: Inputs, connection: apsw.Connection) -> dict[str, str]:
    """Open, readable page by page (quick_check), and still taking writes."""
    path = inputs.store
    recover = (
        f"stop the daemon, keep a copy of {path}, then: sqlite3 '{path}' .recover"
        f" | sqlite3 '{path}.recovered'  # venom-mem never repairs a store itself"
    )
    try:
        problems = [str(row[0]) for row in connection.execute("PRAGMA quick_check")]
    except apsw.Error as exc:
        problems = [str(exc)]
    if problems != ["ok"]:
        return _check(
            "store.open", "fail", f"The store at {path} is corrupt: {problems[0]}", recover
        )
    if inputs.write_failure is not None:
        return _check(
            "store.open",
            "fail",
            f"The store at {path} stopped taking writes: {inputs.write_failure}",
            "check the disk (space, I/O errors), then restart the daemon: venom-mem serve",
        )
    if inputs.disk_full is not None:
        return _check(
            "store.open",
            "warn",
            f"The disk under {path} is full: writes are refused until there is room, then"
            f" resume by themselves ({inputs.disk_full})",
            f"df -h '{path.parent}'  # free space there",
        )
    return _check("store.open", "ok", f"Store open at {path}", FIX_STATUS)


def _sqlite_check(connection: apsw.Connection | None) -> dict[str, str]:
    if connection is None:
        version, options = apsw.sqlite_lib_version(), set(apsw.compile_options)
    else:
        version = str(next(connection.execute("SELECT sqlite_version()"))[0])
        options = {str(row[0]) for row in connection.execute("PRAGMA compile_options")}
    numbers = tuple(int(part) for part in version.split(".")[:3] if part.isdigit())
    fts5 = "ENABLE_FTS5" in options
    fix = "pip install --upgrade venom-mem  # it ships its own SQLite"
    if numbers < MIN_SQLITE:
        return _check(
            "store.sqlite",
            "fail",
            f"SQLite {version} is older than 3.42, which FTS5 secure-delete needs",
            fix,
        )
    if not fts5:
        return _check("store.sqlite", "fail", f"SQLite {version} was built without FTS5", fix)
    return _check("store.sqlite", "ok", f"SQLite {version} with FTS5", FIX_STATUS)


def _store_files(path: Path) -> Iterator[Path]:
    yield path
    yield from sidecar_paths(path)
    yield lock_path(path)
    yield audit_path(path)
    yield from sorted(path.parent.glob(f"{path.name}.bak-*"))


def _permissions_check(path: Path) -> dict[str, str]:
    problems: list[str] = []
    fixes: list[str] = []
    checked = 0

    def note(error: VenomError, fix: str) -> None:
        problems.append(error.message)
        fixes.append(str(error.data.get("fix") or fix))

    try:
        check_private_dir(path.parent)
    except VenomError as error:
        note(error, f"chmod 0700 '{path.parent}'")
    for file in _store_files(path):
        try:
            checked += int(check_private_file(file))
        except VenomError as error:
            note(error, f"ls -l '{file}'  # it must be a regular 0600 file of yours")
    if problems:
        return _check("store.permissions", "fail", "; ".join(problems), " && ".join(fixes))
    return _check(
        "store.permissions",
        "ok",
        f"{path.parent} is 0700 and its {checked} store files 0600, all yours",
        f"ls -la '{path.parent}'",
    )


def _audit_check(store: Path) -> dict[str, str]:
    """Issuing and revoking tokens stop when the audit log can't be written: say so first."""
    path = audit_path(store)
    problem = audit_state(path)
    fix = f"ls -l '{path}'  # it must be a regular 0600 file of yours"
    if problem is not None:
        return _check(
            "audit.log",
            "fail",
            f"The audit log {path} can't be written ({problem}): issuing and revoking"
            " tokens are refused until it can",
            fix,
        )
    if not path.exists():
        return _check("audit.log", "ok", f"No audit log yet; the first token makes {path}", fix)
    return _check("audit.log", "ok", f"The audit log {path} can be appended to", fix)


# -- daemon ------------------------------------------------------------------------------------


def _duration(ms: int) -> str:
    seconds, rest = divmod(ms, 1000)
    if rest:
        return f"{ms} ms"
    minutes, secs = divmod(seconds, 60)
    if secs or not minutes:
        return f"{seconds} s"
    return f"{minutes} min"


def _lifetime_check(inputs: Inputs) -> dict[str, str]:
    idle = inputs.config.daemon.idle_timeout_ms
    if inputs.on_demand:
        return _check(
            "daemon.lifetime",
            "ok",
            f"On-demand daemon: it stops after {_duration(idle)} with no connection "
            f"(daemon.idle_timeout_ms = {idle})",
            "venom-mem serve  # run a persistent daemon instead",
        )
    return _check(
        "daemon.lifetime",
        "ok",
        "Persistent daemon (venom-mem serve): it runs until it is stopped",
        FIX_DAEMON,
    )


# -- embeddings --------------------------------------------------------------------------------


def _host(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "an unparseable URL"
    host = parts.hostname or "?"
    return f"{host}:{port}" if port else host


def _embedding_checks(inputs: Inputs, vectors_table: SqlVectors | None) -> list[Any]:
    """The embeddings checks; ``vectors_table`` counts in the store what the running service
    doesn't say (``None``: the store didn't open)."""
    emb = inputs.config.embeddings
    if emb.provider == "off":
        off = "Embeddings off: full-text search only"
        return [
            _check("embeddings.provider", "ok", off, FIX_EMBEDDINGS),
            _check(
                "embeddings.remote",
                "ok",
                "Embeddings off: no text leaves this machine",
                FIX_EMBEDDINGS,
            ),
            _check("embeddings.health", "ok", "Embeddings off: nothing to call", FIX_EMBEDDINGS),
            _check(
                "embeddings.pending",
                "ok",
                "Embeddings off: nothing waits for a vector",
                FIX_EMBEDDINGS,
            ),
            _check(
                "embeddings.vectors", "ok", "Embeddings off: no vectors are searched", FIX_STATUS
            ),
        ]
    host = _host(emb.base_url)
    checks = [
        _check(
            "embeddings.provider",
            "ok",
            f"Embeddings from {host} with model {emb.model} ({emb.dimensions} dimensions)",
            FIX_EMBEDDINGS,
        )
    ]
    if is_loopback_url(emb.base_url):
        checks.append(
            _check(
                "embeddings.remote",
                "ok",
                f"Embeddings stay on this machine ({host})",
                FIX_EMBEDDINGS,
            )
        )
    else:
        checks.append(
            _check(
                "embeddings.remote",
                "warn",
                f"Memory text is sent to {host}, which is not this machine",
                "venom-mem config set --key embeddings.base_url --value http://127.0.0.1:11434/v1"
                "  # a local server keeps text here",
            )
        )
    facts: EmbeddingFacts = inputs.facts or {}
    checks.append(_health_check(facts, inputs.health))
    pending = facts.get("pending_over_hour")
    vectors = facts.get("vectors")
    if (pending is None or vectors is None) and vectors_table is not None:
        since = _rfc3339(inputs.now - PENDING_AGE)
        if pending is None:
            pending = vectors_table.count_pending_since(since, emb.model)
        if vectors is None:
            vectors = vectors_table.count_vectors()
    if pending:
        checks.append(
            _check(
                "embeddings.pending",
                "warn",
                f"{pending} memories have waited over an hour for a vector",
                "venom-mem doctor --json  # see embeddings.health; the worker retries",
            )
        )
    else:
        checks.append(
            _check(
                "embeddings.pending",
                "ok",
                "No memory has waited over an hour for a vector",
                FIX_STATUS,
            )
        )
    warn_at = inputs.config.embeddings.warn_vectors
    if vectors is not None and vectors > warn_at:
        checks.append(
            _check(
                "embeddings.vectors",
                "warn",
                f"{vectors} vectors are stored, more than embeddings.warn_vectors ({warn_at}); "
                "every vector search scans them all",
                FIX_STATUS,
            )
        )
    else:
        shown = "unknown" if vectors is None else str(vectors)
        checks.append(
            _check(
                "embeddings.vectors",
                "ok",
                f"{shown} vectors stored (warning above {warn_at})",
                FIX_STATUS,
            )
        )
    checks.append(search_check(inputs.config))
    return checks


def _health_check(facts: EmbeddingFacts, health: Any) -> dict[str, str]:
    error = facts.get("last_error") if "last_error" in facts else None
    known = "last_error" in facts or "last_ok" in facts
    if not known and health is not None:
        known = True
        if not getattr(health, "ok", True):
            error = str(getattr(health, "message", "failed"))
    if error:
        return _check(
            "embeddings.health",
            "warn",
            f"The last embeddings call failed: {error}",
            FIX_EMBEDDINGS + "  # check base_url, model and dimensions",
        )
    if not known:
        return _check(
            "embeddings.health", "ok", "No embeddings call has been made yet", FIX_EMBEDDINGS
        )
    return _check("embeddings.health", "ok", "The last embeddings call succeeded", FIX_EMBEDDINGS)


# -- all of it ---------------------------------------------------------------------------------


def run_checks(inputs: Inputs) -> dict[str, Any]:
    """Every check, in the order of RFC-0020 section 11. Blocking: run it off the reactor."""
    connection: apsw.Connection | None = None
    error = ""
    try:
        connection = open_connection(inputs.store, readonly=True)
    except VenomError as err:
        error = err.message
    try:
        checks: list[dict[str, str]] = _store_checks(inputs, connection, error)
        checks.append(_sqlite_check(connection))
        checks.append(_permissions_check(inputs.store))
        checks.append(_audit_check(inputs.store))
        checks.append(_lifetime_check(inputs))
        table = None
        if connection is not None and inputs.config.embeddings.provider != "off":
            from ...sqlite.vectors import SqliteVectors  # numpy: only when embeddings are on

            table = SqliteVectors(connection)
        checks.extend(_embedding_checks(inputs, table))
    finally:
        if connection is not None:
            connection.close()
    status = max(_RANK[c["status"]] for c in checks)
    return {"status": status, "checks": checks}


async def doctor_verb(request: Request) -> dict[str, Any]:
    daemon = request.daemon
    inputs = Inputs(
        store=daemon.paths.store,
        config=daemon.config,
        on_demand=daemon.on_demand,
        facts=daemon.embeddings.embedding_facts() if daemon.embeddings is not None else None,
        health=getattr(daemon.app.embedder, "last_health", None),
        write_failure=daemon.write_failure,
        disk_full=daemon.disk_full.error.message if daemon.disk_full is not None else None,
    )
    if daemon.config.store.url:  # a PostgreSQL store (docs/adr/0028)
        from .doctor_postgres import run_postgres_checks

        check = functools.partial(run_postgres_checks, inputs, daemon.app.store)
        return await anyio.to_thread.run_sync(check)
    return await anyio.to_thread.run_sync(functools.partial(run_checks, inputs))
