"""Operations verbs served by the daemon itself, one module each: ``ping`` and ``stop``
(:mod:`.stop`), ``doctor``, ``config.*`` (:mod:`.config_verbs`), ``events``, ``skill`` and
``skill.install``, ``audit``: the manifest verbs whose ``op`` names a function here
(``"doctor.doctor_verb"``), looked up by :func:`handlers` when a daemon is built.

:class:`Ops` is their state, one per daemon: the lock that keeps config changes one at a
time, the audit log and the cache of session reporters. :meth:`Ops.start` starts what runs
beside the verbs for the daemon's whole life (the audit log's and the reporter cache's
subscriptions to the event log); the function that builds a daemon calls it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import anyio

from venom_mem_core.lookup import find
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Manifest
from venom_mem_core.ports import Store

from ..context import DaemonHandler
from ..event_log import EventLog
from . import audit
from .events import Reporters

__all__ = ["Ops", "handlers"]


@functools.cache
def handlers(manifest: Manifest = MANIFEST) -> Mapping[str, DaemonHandler]:
    """The handler of every verb whose ``op`` names one in this package, by verb name;
    ``failed.internal`` naming the verb when one is missing."""
    return {v.name: find(v, __name__, v.op, "op") for v in manifest.verbs if v.op is not None}


class Ops:
    """The operations verbs' state for one daemon, and their handlers by verb name."""

    def __init__(self, *, store_path: Path, store: Store, events: EventLog) -> None:
        self.handlers = handlers()  # every op looked up: one missing stops the start
        self.config_lock = anyio.Lock()  # each config change reads, changes and writes the file
        self.audit = audit.AuditLog(audit.audit_path(store_path), events)
        self.reporters = Reporters(store, events)

    def start(self) -> None:
        """Start the audit log and the reporter cache (idempotent)."""
        self.audit.start()
        self.reporters.start()
