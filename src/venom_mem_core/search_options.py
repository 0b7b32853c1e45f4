"""The names of memory.search's extension options, for the manifest, config and use case.

Standard library only, so the manifest can import it (docs/adr/0015, 0016).
"""

from __future__ import annotations

__all__ = ["DEFAULT_FUSION", "DEFAULT_QUERY_MODE", "FUSION_NAMES", "QUERY_MODES"]

QUERY_MODES = ("rfc", "natural")
DEFAULT_QUERY_MODE = "rfc"
FUSION_NAMES = ("rrf", "weighted", "margin", "rerank", "convex")
DEFAULT_FUSION = "convex"
