"""What every use case works with: the ports, wired once by a composition root, and settings."""

from __future__ import annotations

from typing import Any

import attrs

from ..grammar import MAX_ISSUED_TTL_S
from ..ports import Clock, Embedder, EventSink, Store, VectorSearch
from ..registry import Registry
from ..search_options import DEFAULT_FUSION, DEFAULT_QUERY_MODE
from ..similarity import SIMILAR_THRESHOLD

__all__ = ["App", "MemorySettings", "NullEvents"]


@attrs.frozen(kw_only=True)
class MemorySettings:
    """What the use cases read of the config (RFC-0020 section 11): the ``memory`` and
    ``search`` sections, how a query is embedded, and the longest life of a grant.issue
    token."""

    max_content_bytes: int = 65536
    max_versions: int = 20
    tombstone_days: int = 30
    similar_threshold: float = SIMILAR_THRESHOLD  # 0: no ``similar`` (docs/adr/0043)
    min_similarity: float = 0.0
    query_mode: str = DEFAULT_QUERY_MODE
    fusion: str = DEFAULT_FUSION
    max_token_ttl: int = MAX_ISSUED_TTL_S
    query_timeout_ms: int = 2000
    embed_input_bytes: int = 32768


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
