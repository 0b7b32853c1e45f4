"""Operations verbs served by the daemon itself, one module each: ``ping`` and ``stop``
(:mod:`.stop`), ``doctor``, ``config.*`` (:mod:`.config_verbs`), ``events``, ``skill`` and
``skill.install``, ``audit``. These are the verbs the core's registry
(:data:`venom_mem_core.usecases.verbs.VERBS`) says run on the ``daemon``.

:class:`Ops` is their state, one per daemon: the lock that keeps config changes one at a
time, the audit log and the cache of session reporters. :meth:`Ops.start` starts what runs
beside the verbs for the daemon's whole life (the audit log's and the reporter cache's
subscriptions to the event log); the function that builds a daemon calls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import anyio

from venom_mem_core.ports import Store

from ..context import DaemonHandler
from ..event_log import EventLog
from . import audit, config_verbs, doctor, events, skill, stop
from .events import Reporters

__all__ = ["HANDLERS", "Ops"]

HANDLERS: Mapping[str, DaemonHandler] = {
    "ping": stop.ping_verb,
    "doctor": doctor.doctor_verb,
    "config.get": config_verbs.config_get,
    "config.set": config_verbs.config_set,
    "config.reload": config_verbs.config_reload,
    "events": events.events_verb,
    "skill": skill.skill_verb,
    "skill.install": skill.skill_install_verb,
    "audit": audit.audit_verb,
    "stop": stop.stop_verb,
}


class Ops:
    """The operations verbs' state for one daemon, and their handlers by verb name."""

    handlers: Mapping[str, DaemonHandler] = HANDLERS

    def __init__(self, *, store_path: Path, store: Store, events: EventLog) -> None:
        self.config_lock = anyio.Lock()  # each config change reads, changes and writes the file
        self.audit = audit.AuditLog(audit.audit_path(store_path), events)
        self.reporters = Reporters(store, events)

    def start(self) -> None:
        """Start the audit log and the reporter cache (idempotent)."""
        self.audit.start()
        self.reporters.start()
