"""What a daemon-level handler (daemon/ops) gets: the :class:`Request`, and through it the
:class:`DaemonContext`, the few parts of the serving daemon an operations verb reads or
changes.

This module is below both the server (server.py, whose ``Daemon`` satisfies the protocol)
and the handlers (ops/), so neither imports the other: the server imports the handler table,
the handlers import only this. Each member is read-only here and typed by what the handlers
use of it, not by the class that happens to provide it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    import anyio

    from venom_mem_core.config import Config
    from venom_mem_core.errors import VenomError
    from venom_mem_core.manifest_types import Verb
    from venom_mem_core.records import Principal
    from venom_mem_core.usecases.app import App

    from ..embeddings.facts import EmbeddingFacts
    from ..store_backend import StoreBackend
    from .event_log import EventLog

__all__ = [
    "AuditTrail",
    "DaemonContext",
    "DaemonHandler",
    "DaemonPaths",
    "DiskFullState",
    "EmbeddingFactsSource",
    "OpsState",
    "Request",
    "SessionReporters",
]


@attrs.frozen(kw_only=True)
class DaemonPaths:
    """Where this daemon's files are, for doctor, store.status and config verbs."""

    socket: Path
    store: Path
    config: Path


class AuditTrail(Protocol):
    """The audit log as the ``audit`` verb reads it (ops/audit.py's ``AuditLog``)."""

    @property
    def path(self) -> Path: ...

    def catch_up(self) -> None: ...


class SessionReporters(Protocol):
    """Who reported each session, for ``events``' ``self`` readers (ops/events.py)."""

    def of(self, numbers: set[int]) -> dict[int, str]: ...


class OpsState(Protocol):
    """The operations verbs' own state, one per daemon (ops/__init__.py's ``Ops``)."""

    @property
    def config_lock(self) -> anyio.Lock: ...

    @property
    def audit(self) -> AuditTrail: ...

    @property
    def reporters(self) -> SessionReporters: ...


class EmbeddingFactsSource(Protocol):
    """The running embedding service, as doctor asks it (embeddings/service.py)."""

    def embedding_facts(self) -> EmbeddingFacts: ...


class DiskFullState(Protocol):
    """Writes are waiting for room: the last disk-full error (server.py's ``DiskFull``)."""

    @property
    def error(self) -> VenomError: ...


class DaemonContext(Protocol):
    """The serving daemon, as much of it as the operations verbs use."""

    @property
    def app(self) -> App: ...

    @property
    def events(self) -> EventLog: ...

    @property
    def config(self) -> Config: ...

    @property
    def started_config(self) -> Config: ...

    @property
    def paths(self) -> DaemonPaths: ...

    @property
    def on_demand(self) -> bool: ...

    @property
    def source(self) -> str: ...

    @property
    def backend(self) -> StoreBackend: ...

    @property
    def ops(self) -> OpsState: ...

    @property
    def embeddings(self) -> EmbeddingFactsSource | None: ...

    @property
    def write_failure(self) -> str | None: ...

    @property
    def disk_full(self) -> DiskFullState | None: ...

    def stop(self) -> None: ...

    def apply_config(self, config: Config) -> None: ...


@attrs.frozen(kw_only=True)
class Request:
    """What a daemon-level handler gets: the caller, the checked params, the verb."""

    daemon: DaemonContext
    principal: Principal
    verb: Verb
    params: dict[str, Any]


DaemonHandler = Callable[[Request], Awaitable[dict[str, Any]]]
