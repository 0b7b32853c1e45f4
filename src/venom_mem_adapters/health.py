"""doctor's vocabulary (RFC-0020 section 11, CONTRACT section 9): a check is
``{"id", "status", "message", "fix"}``, its status ``ok``, ``warn`` or ``fail``, and a
report's status the worst of them (0, 1, 2).

Shared by the daemon's doctor (daemon/ops/doctor.py: files, audit log, lifetime, embeddings)
and each store backend's own checks (``sqlite/doctor.py``, ``postgres/doctor.py``), so the
backends don't import the daemon and the daemon doesn't import a backend's internals.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import attrs

if TYPE_CHECKING:
    from venom_mem_core.config import Config

    from .embeddings.facts import EmbeddingFacts

__all__ = [
    "FIX_STATUS",
    "Check",
    "Inputs",
    "Status",
    "VectorCounts",
    "check",
    "schema_check",
    "unopened",
    "worst",
]

Status = Literal["ok", "warn", "fail"]
Check = dict[str, str]
FIX_STATUS = "venom-mem store status --json"
_RANK = {"ok": 0, "warn": 1, "fail": 2}


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


class VectorCounts(Protocol):
    """What doctor counts in a store's ``memory_vectors`` (sql_vectors.SqlVectors)."""

    def count_pending_since(self, since: str, model: str) -> int: ...

    def count_vectors(self) -> int: ...


def check(id: str, status: Status, message: str, fix: str) -> Check:
    return {"id": id, "status": status, "message": message, "fix": fix}


def worst(checks: Iterable[Check]) -> int:
    """The report's status: 0 when every check is ok, 1 with a warning, 2 with a failure."""
    return max(_RANK[c["status"]] for c in checks)


def unopened(message: str) -> list[Check]:
    """store.open failed with ``message``, so store.schema can't be read either."""
    return [
        check("store.open", "fail", message, FIX_STATUS),
        check("store.schema", "fail", "Schema version unknown: the store didn't open", FIX_STATUS),
    ]


def schema_check(version: int, supported: int, migrate_fix: str) -> Check:
    """store.schema: the store's version is the one this venom-mem migrates to."""
    if version != supported:
        return check(
            "store.schema",
            "fail",
            f"Schema version {version}; this venom-mem uses schema version {supported}",
            migrate_fix,
        )
    return check("store.schema", "ok", f"Schema version {version}", FIX_STATUS)
