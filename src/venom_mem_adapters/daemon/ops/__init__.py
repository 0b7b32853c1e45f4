"""Operations verbs served by the daemon itself: config, doctor, events, skill, audit."""

from __future__ import annotations

from ..server import DaemonHandler

__all__ = ["handlers"]


def handlers() -> dict[str, DaemonHandler]:
    """Verb name -> handler, merged into the daemon's table at start-up."""
    return {}
