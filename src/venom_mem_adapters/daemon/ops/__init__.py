"""Operations verbs served by the daemon itself, one module each: ``doctor``, ``config.*``
(:mod:`.config_verbs`), ``events``, ``skill`` and ``skill.install``, ``audit`` and ``stop``.

:func:`handlers` is merged into the daemon's table at start-up. :func:`attach` starts what
runs beside the verbs for the daemon's whole life (the audit log's subscription to the event
log); the composition root calls it once the daemon is built.
"""

from __future__ import annotations

from ..server import Daemon, DaemonHandler
from . import audit, config_verbs, doctor, events, skill, stop

__all__ = ["attach", "handlers"]


def attach(daemon: Daemon) -> None:
    """Start the daemon's audit log (idempotent), and the events verb's reporter cache."""
    audit.attach(daemon)
    events.remember_reporters(daemon)


def handlers() -> dict[str, DaemonHandler]:
    """Verb name -> handler, merged into the daemon's table at start-up."""
    return {
        "doctor": doctor.doctor_verb,
        "config.get": config_verbs.config_get,
        "config.set": config_verbs.config_set,
        "config.reload": config_verbs.config_reload,
        "events": events.events_verb,
        "skill": skill.skill_verb,
        "skill.install": skill.skill_install_verb,
        "audit": audit.audit_verb,
        "stop": stop.stop_verb,
        **audit.audited_handlers(),
    }
