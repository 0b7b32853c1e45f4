"""Search ranking that does not depend on a store: query tokens, RRF fusion, snippets.

RFC-0020 section 5: user text is never FTS5 syntax (each whitespace token becomes a quoted
string, joined with OR), lists are fused with Reciprocal Rank Fusion (k = 60), and every tie
is broken by the highest rowid, so results are exact and reproducible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from .errors import VenomError

__all__ = [
    "LIST_DEPTH",
    "RRF_K",
    "SNIPPET_BYTES",
    "Fused",
    "bounded_snippet",
    "cut_utf8",
    "fts_match_expression",
    "fuse",
    "query_tokens",
]

RRF_K = 60
LIST_DEPTH = 100
SNIPPET_BYTES = 240
# 64 tokens is usually a few hundred bytes, but one token can be a whole base64 blob or a
# run of CJK text: the bound keeps 100 hits inside one 1 MiB frame (RFC-0020 section 5).
FTS_SNIPPET_MAX_BYTES = 1024


def query_tokens(query: str) -> list[str]:
    """Whitespace-separated tokens; none at all is ``invalid_params.query``."""
    tokens = query.split()
    if not tokens:
        raise VenomError.param("query", "query", "query has no words to search for")
    return tokens


def fts_match_expression(tokens: Sequence[str]) -> str:
    """Each token an FTS5 string with ``"`` doubled, joined with OR."""
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that is at most ``max_bytes`` in UTF-8."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text
    return raw[:max_bytes].decode("utf-8", "ignore")


def bounded_snippet(snippet: str) -> str:
    """An FTS5 snippet cut to at most FTS_SNIPPET_MAX_BYTES, ending in … when cut."""
    cut = cut_utf8(snippet, FTS_SNIPPET_MAX_BYTES - len("…".encode()))
    return snippet if cut == snippet else cut + "…"


@attrs.frozen(kw_only=True)
class Fused:
    id: int
    score: float
    fts_rank: int | None = None
    vector_rank: int | None = None
    similarity: float | None = None


def fuse(
    fts: Sequence[int],
    vector: Sequence[int] = (),
    similarity: Mapping[int, float] | None = None,
    *,
    limit: int,
) -> list[Fused]:
    """Reciprocal Rank Fusion of up to two ranked ID lists, ranks starting at 1.

    Ordered by score, then by highest ID; the first ``limit`` are returned.
    """
    fts_rank = {id_: rank for rank, id_ in enumerate(fts, start=1)}
    vec_rank = {id_: rank for rank, id_ in enumerate(vector, start=1)}
    fused: list[Fused] = []
    for id_ in fts_rank.keys() | vec_rank.keys():
        fr, vr = fts_rank.get(id_), vec_rank.get(id_)
        score = (1 / (RRF_K + fr) if fr else 0.0) + (1 / (RRF_K + vr) if vr else 0.0)
        fused.append(
            Fused(
                id=id_,
                score=score,
                fts_rank=fr,
                vector_rank=vr,
                similarity=similarity.get(id_) if similarity is not None and vr else None,
            )
        )
    fused.sort(key=lambda f: (-f.score, -f.id))
    return fused[:limit]
