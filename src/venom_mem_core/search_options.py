"""The names of memory.search's extension options, for the manifest, config and use case.

Standard library only, so the manifest can import it (docs/adr/0015, 0016, 0023).
"""

from __future__ import annotations

__all__ = [
    "COLUMN_WEIGHTS",
    "DEFAULT_FUSION",
    "DEFAULT_QUERY_MODE",
    "FUSION_NAMES",
    "NATURAL_WEIGHTS",
    "QUERY_MODES",
    "RFC_WEIGHTS",
    "SIMILAR_THRESHOLD",
    "Weights",
]

# memory.add's near-duplicates (similarity.py), here for the settings' default to take
# without the ranking's imports. Measured by bench/bench_similar.py on
# tests/fixtures/similar_pairs.json and LoCoMo's repeated facts (ADR 0043 has the table).
SIMILAR_THRESHOLD = 0.65

QUERY_MODES = ("rfc", "natural")
DEFAULT_QUERY_MODE = "rfc"
FUSION_NAMES = ("rrf", "weighted", "margin", "rerank", "convex")
DEFAULT_FUSION = "rrf"
"""RFC-0020 section 5 step 4: a default config ranks as the RFC says (docs/adr/0032)."""

Weights = tuple[float, float, float]
"""bm25's column weights: title, content, tags."""

RFC_WEIGHTS: Weights = (5.0, 1.0, 3.0)
"""RFC-0020 section 5: ``bm25(memory_fts, 5.0, 1.0, 3.0)``."""

NATURAL_WEIGHTS: Weights = (20.0, 4.0, 12.0)
"""``query_mode = "natural"``: the RFC's weights, each x4. bm25 with every weight x c ranks
as bm25 with k1 / c (the weights multiply each term's frequency, and k1 is what a frequency
is measured against), so this is k1 = 0.3 instead of 1.2 in the same built-in function:
a word's first occurrence counts almost fully, and the text's length much less
(docs/adr/0023)."""

COLUMN_WEIGHTS: dict[str, Weights] = {"rfc": RFC_WEIGHTS, "natural": NATURAL_WEIGHTS}
