"""``doctor``: the checks of RFC-0020 section 11, each with a message and a fix command.

The result is ``{"status": S, "checks": [{"id", "status", "message", "fix"}, ...]}`` with S
0 when every check is ok, 1 with a warning and 2 with a failure (CONTRACT section 9). Doctor
is read-only: the store's own checks are its backend's (``StoreBackend.examine``: a SQLite
file is read through a read-only connection of doctor's own, a PostgreSQL database through
the daemon's store), the files are looked at with ``lstat``, and the embeddings endpoint is
never called. What it says about embeddings comes from the last calls the worker made,
through the daemon's embedding service (``embeddings.facts.EmbeddingFacts``), else from the
embedder's ``last_health`` and the store itself. The check vocabulary is ``health.py``.

``embeddings.api_key`` never appears: messages name hosts and models, not URLs' secrets, and
a failed call's message is the embedder's own, which never quotes the key.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from venom_mem_core.config import is_loopback_url
from venom_mem_core.errors import VenomError

from ...health import FIX_STATUS, Check, Inputs, VectorCounts, check, worst
from ...sqlite.paths import check_private_dir, check_private_file, lock_path
from ..context import Request
from .audit import audit_path, audit_state

if TYPE_CHECKING:
    from venom_mem_core.ports import Store

    from ...embeddings.facts import EmbeddingFacts
    from ...store_backend import StoreBackend

__all__ = ["doctor_verb", "run_checks"]

PENDING_AGE = datetime.timedelta(hours=1)
FIX_EMBEDDINGS = "venom-mem config get --key embeddings --json"
FIX_DAEMON = "venom-mem config get --key daemon --json"


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment.microsecond // 1000:03d}Z"
    )


# -- files -------------------------------------------------------------------------------------


def _permissions_check(path: Path, store_files: Iterable[Path]) -> Check:
    """This machine's files of the store: its directory, the backend's own files (a SQLite
    file, its sidecars and backups), the store lock and the audit log."""
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
    for file in (*store_files, lock_path(path), audit_path(path)):
        try:
            checked += int(check_private_file(file))
        except VenomError as error:
            note(error, f"ls -l '{file}'  # it must be a regular 0600 file of yours")
    if problems:
        return check("store.permissions", "fail", "; ".join(problems), " && ".join(fixes))
    return check(
        "store.permissions",
        "ok",
        f"{path.parent} is 0700 and its {checked} store files 0600, all yours",
        f"ls -la '{path.parent}'",
    )


def _audit_check(store: Path) -> Check:
    """Issuing and revoking tokens stop when the audit log can't be written: say so first."""
    path = audit_path(store)
    problem = audit_state(path)
    fix = f"ls -l '{path}'  # it must be a regular 0600 file of yours"
    if problem is not None:
        return check(
            "audit.log",
            "fail",
            f"The audit log {path} can't be written ({problem}): issuing and revoking"
            " tokens are refused until it can",
            fix,
        )
    if not path.exists():
        return check("audit.log", "ok", f"No audit log yet; the first token makes {path}", fix)
    return check("audit.log", "ok", f"The audit log {path} can be appended to", fix)


# -- daemon ------------------------------------------------------------------------------------


def _duration(ms: int) -> str:
    seconds, rest = divmod(ms, 1000)
    if rest:
        return f"{ms} ms"
    minutes, secs = divmod(seconds, 60)
    if secs or not minutes:
        return f"{seconds} s"
    return f"{minutes} min"


def _lifetime_check(inputs: Inputs) -> Check:
    idle = inputs.config.daemon.idle_timeout_ms
    if inputs.on_demand:
        return check(
            "daemon.lifetime",
            "ok",
            f"On-demand daemon: it stops after {_duration(idle)} with no connection "
            f"(daemon.idle_timeout_ms = {idle})",
            "venom-mem serve  # run a persistent daemon instead",
        )
    return check(
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


def _embedding_checks(inputs: Inputs, vectors_table: VectorCounts | None) -> list[Check]:
    """The embeddings checks; ``vectors_table`` counts in the store what the running service
    doesn't say (``None``: the store didn't open)."""
    emb = inputs.config.embeddings
    if emb.provider == "off":
        off = "Embeddings off: full-text search only"
        return [
            check("embeddings.provider", "ok", off, FIX_EMBEDDINGS),
            check(
                "embeddings.remote",
                "ok",
                "Embeddings off: no text leaves this machine",
                FIX_EMBEDDINGS,
            ),
            check("embeddings.health", "ok", "Embeddings off: nothing to call", FIX_EMBEDDINGS),
            check(
                "embeddings.pending",
                "ok",
                "Embeddings off: nothing waits for a vector",
                FIX_EMBEDDINGS,
            ),
            check(
                "embeddings.vectors", "ok", "Embeddings off: no vectors are searched", FIX_STATUS
            ),
        ]
    host = _host(emb.base_url)
    checks = [
        check(
            "embeddings.provider",
            "ok",
            f"Embeddings from {host} with model {emb.model} ({emb.dimensions} dimensions)",
            FIX_EMBEDDINGS,
        )
    ]
    if is_loopback_url(emb.base_url):
        checks.append(
            check(
                "embeddings.remote",
                "ok",
                f"Embeddings stay on this machine ({host})",
                FIX_EMBEDDINGS,
            )
        )
    else:
        checks.append(
            check(
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
            check(
                "embeddings.pending",
                "warn",
                f"{pending} memories have waited over an hour for a vector",
                "venom-mem doctor --json  # see embeddings.health; the worker retries",
            )
        )
    else:
        checks.append(
            check(
                "embeddings.pending",
                "ok",
                "No memory has waited over an hour for a vector",
                FIX_STATUS,
            )
        )
    warn_at = inputs.config.embeddings.warn_vectors
    if vectors is not None and vectors > warn_at:
        checks.append(
            check(
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
            check(
                "embeddings.vectors",
                "ok",
                f"{shown} vectors stored (warning above {warn_at})",
                FIX_STATUS,
            )
        )
    return checks


def _health_check(facts: EmbeddingFacts, health: Any) -> Check:
    error = facts.get("last_error") if "last_error" in facts else None
    known = "last_error" in facts or "last_ok" in facts
    if not known and health is not None:
        known = True
        if not getattr(health, "ok", True):
            error = str(getattr(health, "message", "failed"))
    if error:
        return check(
            "embeddings.health",
            "warn",
            f"The last embeddings call failed: {error}",
            FIX_EMBEDDINGS + "  # check base_url, model and dimensions",
        )
    if not known:
        return check(
            "embeddings.health", "ok", "No embeddings call has been made yet", FIX_EMBEDDINGS
        )
    return check("embeddings.health", "ok", "The last embeddings call succeeded", FIX_EMBEDDINGS)


# -- all of it ---------------------------------------------------------------------------------


def run_checks(inputs: Inputs, backend: StoreBackend, store: Store | None = None) -> dict[str, Any]:
    """Every check, in the order of RFC-0020 section 11: the backend's store checks first
    (``store`` is the daemon's own, which a PostgreSQL store reads through). Blocking: run it
    off the reactor."""
    embeddings_on = inputs.config.embeddings.provider != "off"
    with backend.examine(inputs, store, vectors=embeddings_on) as exam:
        checks = list(exam.checks)
        checks.append(_permissions_check(inputs.store, exam.files))
        checks.append(_audit_check(inputs.store))
        checks.append(_lifetime_check(inputs))
        try:
            embedding = _embedding_checks(inputs, exam.vectors)
        except VenomError:  # the store went away while counting: store.open says so
            embedding = _embedding_checks(inputs, None)
        checks.extend(embedding)
    return {"status": worst(checks), "checks": checks}


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
    checks = functools.partial(run_checks, inputs, daemon.backend, daemon.app.store)
    return await anyio.to_thread.run_sync(checks)
