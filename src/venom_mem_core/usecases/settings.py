"""The settings the use cases read, apart from :mod:`.app`'s ports: the config
(:mod:`venom_mem_core.config`) takes its defaults from here without importing the store's
ports and the ranking (a cold ``venom-mem mcp`` reads the config to launch the daemon)."""

from __future__ import annotations

import attrs

from ..grammar import MAX_ISSUED_TTL_S
from ..search_options import DEFAULT_FUSION, DEFAULT_QUERY_MODE, SIMILAR_THRESHOLD

__all__ = ["MemorySettings"]


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
