"""Verb name -> use case, for every verb the core answers by itself.

Verbs that need the daemon's own state (hello, ping, events, doctor, config.*, skill) are
answered by the daemon, which adds them to this table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import VenomError
from ..records import Principal
from . import context, memories, principals, search, sessions, spaces
from .app import App

__all__ = ["HANDLERS", "Handler"]

Handler = Callable[..., dict[str, Any]]

HANDLERS: Mapping[str, Callable[..., dict[str, Any]]] = {
    "memory.add": memories.add_memory,
    "memory.get": memories.get_memory,
    "memory.update": memories.update_memory,
    "memory.delete": memories.delete_memory,
    "memory.restore": memories.restore_memory,
    "memory.history": memories.memory_history,
    "memory.search": search.search_memories,
    "memory.list": search.list_memories,
    "memory.purge": memories.purge_memory,
    "memory.context": context.memory_context,
    "space.list": spaces.list_spaces,
    "space.describe": spaces.describe_space,
    "store.status": spaces.store_status,
    "session.start": sessions.start_session,
    "session.end": sessions.end_session,
    "session.get": sessions.get_session,
    "session.list": sessions.list_sessions,
    "session.chain": sessions.session_chain,
    "session.purge": sessions.purge_session,
    "client.add": principals.add_client,
    "client.list": principals.list_clients,
    "client.remove": principals.remove_client,
    "grant.issue": principals.issue_grant,
    "grant.list": principals.list_grants,
    "grant.revoke": principals.revoke_grant,
    "whoami": principals.whoami,
}


def call(app: App, who: Principal, verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Run a core verb with params already checked against the manifest. A manifest verb
    that only a daemon answers (ping, doctor, events, ...) is ``unsupported.verb`` here."""
    handler = HANDLERS.get(verb)
    if handler is None:
        raise VenomError(
            "unsupported.verb",
            f"{verb} is answered by the daemon, not in process",
            {"fix": "from venom_mem_adapters.client import connect  # and call it there"},
        )
    return handler(app, who, **params)
