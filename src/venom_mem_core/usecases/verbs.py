"""The verb registry: every manifest verb the daemon serves, bound to what answers it and
where it runs. The daemon's dispatch, :class:`~venom_mem_core.local.LocalClient` and the MCP
adapter all read this one table.

``runs`` is one of:

* ``reader``: a core use case on the pool of read-only connections;
* ``writer``: a core use case on the store's one writer (every verb whose right is ``write``
  or ``admin``, as the daemon has always run them);
* ``daemon``: answered by the daemon itself from its own state (``hello``, ``ping``,
  ``doctor``, ``config.*``, ``events``, ``skill``, ``audit``, ``stop``). In process, with no
  daemon, these are ``unsupported.verb``.

``audited``: the verb issues or revokes a token, so a daemon keeping an audit log refuses it
when the log can't be written (docs/adr/0009). ``embeds``: the function giving the text the
use case will embed through ``app.embedder`` (``None`` when it won't), so a host may embed it
ahead of time, off its store threads (docs/adr/0026).

A use case is named here (``"memories.add_memory"``) and imported on first use: the MCP
adapter reads this table to size its catalog and must answer ``tools/list`` without loading
every use case (bench/bench_mcp_start.py). A use case receives its verb's typed command
(:mod:`venom_mem_core.commands`), which :func:`command` structures from checked params with
the boundary's one converter (:mod:`venom_mem_core.converter`, loaded on first use too: it
imports cattrs).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from ..errors import VenomError
from ..manifest import MANIFEST
from ..manifest_types import Verb

if TYPE_CHECKING:
    from ..commands import Command
    from ..records import Principal
    from .app import App

__all__ = ["VERBS", "Binding", "Handler", "Runs", "call", "command"]

Handler = Callable[..., dict[str, Any]]  # handler(app, who, command)
Runs = Literal["reader", "writer", "daemon"]


@functools.cache
def _use_case(name: str) -> Callable[..., Any]:
    module, function = name.split(".")
    found = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    return cast("Callable[..., Any]", found)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)  # no attrs: as light as the manifest
class Binding:
    """One verb: its manifest entry, where it runs, and the use case answering it (``None``
    for a verb the daemon answers itself)."""

    verb: Verb
    runs: Runs
    use_case: str | None = None
    audited: bool = False
    embeds_with: str | None = None

    @property
    def handler(self) -> Handler | None:
        """The use case: ``handler(app, who, command)`` gives the verb's ok object."""
        return None if self.use_case is None else _use_case(self.use_case)

    @property
    def embeds(self) -> Callable[..., str | None] | None:
        """``embeds(app, command)``: the text the use case will embed, or ``None``."""
        return None if self.embeds_with is None else _use_case(self.embeds_with)

    @property
    def read_only(self) -> bool:
        """Whether a call can change nothing (MCP's ``readOnlyHint``)."""
        return self.verb.right in (None, "read")


def _verb(name: str) -> Verb:
    verb = MANIFEST.verb(name)
    assert verb is not None, name  # a test holds the table to the manifest
    return verb


def _core(name: str, use_case: str, **extra: Any) -> tuple[str, Binding]:
    verb = _verb(name)
    runs: Runs = "writer" if verb.right in ("write", "admin") else "reader"
    return name, Binding(verb=verb, runs=runs, use_case=use_case, **extra)


def _daemon(name: str) -> tuple[str, Binding]:
    return name, Binding(verb=_verb(name), runs="daemon")


VERBS: Mapping[str, Binding] = dict(
    [
        _core("memory.add", "memories.add_memory"),
        _core("memory.get", "memories.get_memory"),
        _core("memory.update", "memories.update_memory"),
        _core("memory.delete", "memories.delete_memory"),
        _core("memory.restore", "memories.restore_memory"),
        _core("memory.history", "memories.memory_history"),
        _core("memory.search", "search.search_memories", embeds_with="search.query_text"),
        _core("memory.list", "search.list_memories"),
        _core("memory.purge", "memories.purge_memory"),
        _core("memory.context", "context.memory_context"),
        _core("space.list", "spaces.list_spaces"),
        _core("space.describe", "spaces.describe_space"),
        _core("session.start", "sessions.start_session"),
        _core("session.end", "sessions.end_session"),
        _core("session.get", "sessions.get_session"),
        _core("session.list", "sessions.list_sessions"),
        _core("session.chain", "sessions.session_chain"),
        _core("session.purge", "sessions.purge_session"),
        _core("client.add", "principals.add_client", audited=True),
        _core("client.list", "principals.list_clients"),
        _core("client.remove", "principals.remove_client", audited=True),
        _core("store.status", "spaces.store_status"),
        _daemon("hello"),
        _core("whoami", "principals.whoami"),
        _daemon("ping"),
        _daemon("doctor"),
        _daemon("config.get"),
        _daemon("config.set"),
        _daemon("config.reload"),
        _core("grant.issue", "principals.issue_grant", audited=True),
        _core("grant.list", "principals.list_grants"),
        _core("grant.revoke", "principals.revoke_grant", audited=True),
        _daemon("audit"),
        _daemon("events"),
        _daemon("skill"),
        _daemon("skill.install"),
        _daemon("stop"),
    ]
)


def command(verb: str, params: Mapping[str, Any]) -> Command:
    """Core verb ``verb``'s command from params checked against the manifest; a value the
    converter can't take is ``invalid_params.*`` (see :mod:`venom_mem_core.converter`)."""
    from ..converter import structure_command  # cattrs: only where commands are made

    return structure_command(verb, params)


def call(app: App, who: Principal, verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Run a core verb with params already checked against the manifest. A manifest verb
    that only a daemon answers (ping, doctor, events, ...) is ``unsupported.verb`` here."""
    binding = VERBS.get(verb)
    handler = binding.handler if binding is not None else None
    if handler is None:
        raise VenomError(
            "unsupported.verb",
            f"{verb} is answered by the daemon, not in process",
            {"fix": "from venom_mem_adapters.client import connect  # and call it there"},
        )
    return handler(app, who, command(verb, params))
