"""Operations verbs served by the daemon itself, one module each: ``ping`` and ``stop``
(:mod:`.stop`), ``doctor``, ``config.*`` (:mod:`.config_verbs`), ``events``, ``skill`` and
``skill.install``, ``audit``: the manifest verbs whose ``op`` names a function here
(``"doctor.doctor_verb"``). :func:`handlers` looks every one up (tests/unit/test_verb_table.py
holds that each is there); a daemon looks each up when the verb is first called, so that its
start loads none of their modules but the audit log's (docs/adr/0038).

:class:`Ops` is their state, one per daemon: the lock that keeps config changes one at a
time, the audit log and the cache of session reporters. :meth:`Ops.start` starts what runs
beside the verbs for the daemon's whole life (the audit log's and the reporter cache's
subscriptions to the event log); the function that builds a daemon calls it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

import anyio

from venom_mem_core.lookup import find
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Manifest
from venom_mem_core.ports import Store

from ..context import DaemonHandler
from ..event_log import EventLog
from . import audit
from .reporters import Reporters

__all__ = ["Ops", "handlers"]


@functools.cache
def handlers(manifest: Manifest = MANIFEST) -> Mapping[str, DaemonHandler]:
    """The handler of every verb whose ``op`` names one in this package, by verb name, all
    looked up now; ``failed.internal`` naming the verb when one is missing."""
    return dict(_OnFirstCall(manifest))


class _OnFirstCall(Mapping[str, DaemonHandler]):
    """The handler of every verb whose ``op`` names one in this package, by verb name, each
    looked up when first asked for (``failed.internal`` naming the verb when it is missing,
    as :func:`handlers` says it)."""

    def __init__(self, manifest: Manifest) -> None:
        self._verbs = {v.name: v for v in manifest.verbs if v.op is not None}
        self._found: dict[str, DaemonHandler] = {}

    def __getitem__(self, name: str) -> DaemonHandler:
        found = self._found.get(name)
        if found is None:
            verb = self._verbs[name]  # a KeyError, as a dict's, for a verb with no op
            assert verb.op is not None
            found = self._found[name] = find(verb, __name__, verb.op, "op")
        return found

    def __contains__(self, name: object) -> bool:  # without looking the op up
        return name in self._verbs

    def __iter__(self) -> Iterator[str]:
        return iter(self._verbs)

    def __len__(self) -> int:
        return len(self._verbs)


class Ops:
    """The operations verbs' state for one daemon, and their handlers by verb name."""

    def __init__(self, *, store_path: Path, store: Store, events: EventLog) -> None:
        self.handlers: Mapping[str, DaemonHandler] = _OnFirstCall(MANIFEST)
        self.config_lock = anyio.Lock()  # each config change reads, changes and writes the file
        self.audit = audit.AuditLog(audit.audit_path(store_path), events)
        self.reporters = Reporters(store, events)

    def start(self) -> None:
        """Start the audit log and the reporter cache (idempotent)."""
        self.audit.start()
        self.reporters.start()
