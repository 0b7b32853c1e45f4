"""How a hybrid search fuses its full-text and vector lists: the ``fusion`` option.

``rrf`` is RFC-0020 section 5, step 4, exactly: Σ 1/(60 + rank) over both lists, equal
weights, and the default (DEFAULT_FUSION, docs/adr/0032). It lets a weak vector list push
good full-text hits down, which is what the LoCoMo benchmark (bench/retrieval.py) measured
with a small model. ``weighted``, ``margin`` and ``rerank`` keep rank fusion and change how
much the vector list may say; ``convex`` fuses scores. Each is one ``fusion`` param or
``search.fusion`` away (docs/search.md says which helps with which model). All are exact and
reproducible, ties by highest ID. docs/adr/0016 and 0023 have the figures:

- ``weighted``: the vector list's terms count VECTOR_WEIGHT as much as the full-text list's.
- ``margin``: the vector list keeps only hits within SIMILARITY_MARGIN of its best hit's
  similarity, so a query the model can't place adds few votes, then plain RRF.
- ``rerank``: the vector list votes only for memories the full-text list found (dense
  re-ranking of lexical candidates); vector-only hits follow every full-text hit, in vector
  order, with score 0, so they fill a short list but never displace a full-text hit.
- ``convex``: not ranks but scores (Bruch, Gai and Ingber, "An Analysis of Fusion Functions
  for Hybrid Retrieval", 2023): BM25_WEIGHT x the BM25 score, plus the rest x the
  similarity, each min-max scaled over its own list as the paper does (docs/adr/0023; ADR
  0016 first scaled BM25 over its best only, ``bm25_min_max=False``). Both parts are in
  [0, 1] for any model and any query, so the one weight carries across models; a memory
  missing from a list scores 0 there. Where BM25 has a clear winner it stays; where many
  hits match equally (a name every turn of a chat contains), the vector decides among
  them.

Every option applies the vector list's ``search.min_similarity`` floor first, as step 3 says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from .ranking import RRF_K, Fused, fuse
from .search_options import DEFAULT_FUSION

__all__ = [
    "BM25_WEIGHT",
    "DEFAULT_FUSION",
    "FUSIONS",
    "SIMILARITY_MARGIN",
    "VECTOR_WEIGHT",
    "Fusion",
    "fuse_lists",
]

VECTOR_WEIGHT = 0.5
SIMILARITY_MARGIN = 0.1
BM25_WEIGHT = 0.8


@attrs.frozen(kw_only=True)
class Fusion:
    """One way to fuse: the vector list's weight, an optional cut relative to its best
    similarity, whether it votes only for full-text hits; or, with ``blend``, a convex
    combination of scores with that weight on BM25, min-max scaled (else over its best)."""

    vector_weight: float = 1.0
    margin: float | None = None
    within_fts: bool = False
    blend: float | None = None
    bm25_min_max: bool = True

    def apply(
        self,
        fts: Sequence[int],
        vector: Sequence[tuple[int, float]],
        *,
        limit: int,
        fts_scores: Mapping[int, float] | None = None,
    ) -> list[Fused]:
        """Fuse ``fts`` (IDs, best first) and ``vector`` ((ID, similarity), best first);
        ``fts_scores`` (BM25, higher is better) is needed by ``blend`` only."""
        if self.blend is not None:
            scaled = _min_max if self.bm25_min_max else _over_best
            return _convex(fts, vector, scaled(fts, fts_scores or {}), self.blend, limit)
        if self.margin is not None and vector:
            floor = vector[0][1] - self.margin
            vector = [hit for hit in vector if hit[1] >= floor]
        similarity = dict(vector)
        if not self.within_fts:
            return fuse(
                fts,
                [id_ for id_, _ in vector],
                similarity,
                limit=limit,
                vector_weight=self.vector_weight,
            )
        # Ranks stay those of the whole vector list, so vector_rank means the same thing in
        # every fusion; only the votes for memories outside the full-text list are withheld.
        lexical = set(fts)
        vector_rank = {id_: rank for rank, (id_, _) in enumerate(vector, start=1)}
        fused = [
            attrs.evolve(f, vector_rank=vector_rank.get(f.id), similarity=similarity.get(f.id))
            for f in _vote(fts, vector_rank, self.vector_weight, limit)
        ]
        extra = [id_ for id_, _ in vector if id_ not in lexical][: max(0, limit - len(fused))]
        fused.extend(
            Fused(id=id_, score=0.0, vector_rank=vector_rank[id_], similarity=similarity[id_])
            for id_ in extra
        )
        return fused


def _vote(
    fts: Sequence[int], vector_rank: dict[int, int], weight: float, limit: int
) -> list[Fused]:
    """RRF over the full-text list, with the vector ranks of its members only."""
    fused = []
    for rank, id_ in enumerate(fts, start=1):
        vr = vector_rank.get(id_)
        score = 1 / (RRF_K + rank) + (weight / (RRF_K + vr) if vr else 0.0)
        fused.append(Fused(id=id_, score=score, fts_rank=rank))
    fused.sort(key=lambda f: (-f.score, -f.id))
    return fused[:limit]


def _over_best(ids: Sequence[int], scores: Mapping[int, float]) -> dict[int, float]:
    best = max((scores.get(id_, 0.0) for id_ in ids), default=0.0)
    return {id_: scores.get(id_, 0.0) / best if best > 0 else 1.0 for id_ in ids}


def _min_max(ids: Sequence[int], scores: Mapping[int, float]) -> dict[int, float]:
    """Each score scaled to [0, 1] over the list's own range; all of them 1 when equal."""
    values = [scores.get(id_, 0.0) for id_ in ids]
    low, high = (min(values), max(values)) if values else (0.0, 0.0)
    return {
        id_: (v - low) / (high - low) if high > low else 1.0
        for id_, v in zip(ids, values, strict=True)
    }


def _convex(
    fts: Sequence[int],
    vector: Sequence[tuple[int, float]],
    lexical: Mapping[int, float],
    blend: float,
    limit: int,
) -> list[Fused]:
    """``lexical``: the full-text list's scores already scaled to [0, 1]."""
    dense = _min_max([id_ for id_, _ in vector], dict(vector))
    fts_rank = {id_: rank for rank, id_ in enumerate(fts, start=1)}
    vector_rank = {id_: rank for rank, (id_, _) in enumerate(vector, start=1)}
    similarity = dict(vector)
    fused = [
        Fused(
            id=id_,
            score=blend * lexical.get(id_, 0.0) + (1 - blend) * dense.get(id_, 0.0),
            fts_rank=fts_rank.get(id_),
            vector_rank=vector_rank.get(id_),
            similarity=similarity.get(id_),
        )
        for id_ in fts_rank.keys() | vector_rank.keys()
    ]
    fused.sort(key=lambda f: (-f.score, -f.id))
    return fused[:limit]


FUSIONS: dict[str, Fusion] = {
    "rrf": Fusion(),
    "weighted": Fusion(vector_weight=VECTOR_WEIGHT),
    "margin": Fusion(margin=SIMILARITY_MARGIN),
    "rerank": Fusion(within_fts=True),
    "convex": Fusion(blend=BM25_WEIGHT),
}


def fuse_lists(
    fusion: str,
    fts: Sequence[int],
    vector: Sequence[tuple[int, float]],
    *,
    limit: int,
    fts_scores: Mapping[int, float] | None = None,
) -> list[Fused]:
    """Fuse with the named option (one of FUSIONS)."""
    return FUSIONS[fusion].apply(fts, vector, limit=limit, fts_scores=fts_scores)
