"""What every use case works with: the ports, wired once by a composition root, and settings."""

from __future__ import annotations

from typing import Any

import attrs

from ..ports import Clock, Embedder, EventSink, Store, VectorSearch
from ..registry import Registry
from .settings import MemorySettings

__all__ = ["App", "NullEvents"]


class NullEvents:
    """An event sink that drops events, for library use with no daemon."""

    def emit(self, type: str, resource: str, data: dict[str, Any]) -> None:
        return None


def _load_registry(app: App) -> Registry:
    return Registry.load(app.store)


@attrs.define(kw_only=True)
class App:
    """The ports and settings a use case needs. Settings may change on config reload.

    ``registry`` is loaded from the store when the app is made, so an app made at serve holds
    every durable client before the socket exists (RFC-0020 section 4).

    With an ``embedder`` and ``vectors`` (the index of the memories' vectors), memory.search
    embeds the query and is hybrid; with an embedder alone it falls back to full text.
    """

    store: Store
    clock: Clock
    events: EventSink = attrs.field(factory=NullEvents)
    embedder: Embedder | None = None
    vectors: VectorSearch | None = None
    settings: MemorySettings = attrs.field(factory=MemorySettings)
    registry: Registry = attrs.field(default=attrs.Factory(_load_registry, takes_self=True))
