"""Search ranking that does not depend on a store: query tokens, RRF fusion, snippets.

RFC-0020 section 5: user text is never FTS5 syntax (each whitespace token becomes a quoted
string, joined with OR), lists are fused with Reciprocal Rank Fusion (k = 60), and every tie
is broken by the highest rowid, so results are exact and reproducible.

``query_mode = "natural"`` (docs/adr/0015) changes only how the query becomes terms: each
whitespace token is split further at every character that is not a letter or digit, English
stopwords are dropped unless nothing else is left, repeats are dropped, a word with irregular
forms brings them along (docs/adr/0023), and the terms are then quoted and OR-ed exactly as in
the RFC mode; the store ranks them with NATURAL_WEIGHTS (search_options.py). The other fusions
are in fusion.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import attrs

from .errors import VenomError
from .inflections import irregular_group
from .search_options import QUERY_MODES
from .stopwords import ENGLISH_STOPWORDS

__all__ = [
    "LIST_DEPTH",
    "QUERY_MODES",
    "RRF_K",
    "SNIPPET_BYTES",
    "Fused",
    "bounded_snippet",
    "cut_utf8",
    "fuse",
    "natural_terms",
    "preview",
    "query_tokens",
    "search_terms",
    "with_irregular_forms",
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


# FTS5's unicode61 tokenizer separates words at everything but letters, digits and private-use
# characters, so splitting there yields the words it would index; "_" separates too.
_SEPARATORS = re.compile(r"[\W_]+")


def natural_terms(query: str) -> list[str]:
    """The terms of ``query_mode = "natural"``: words split at punctuation, English stopwords
    and repeats dropped, unless only stopwords are left (then all the words are kept); each
    word with irregular forms followed by them (``went`` -> ``went go gone``, inflections.py).

    A query with no letter or digit at all (``"*"``, ``"--"``) keeps its whitespace tokens,
    so it searches as in the RFC mode instead of becoming an error.
    """
    tokens = query_tokens(query)
    words: list[str] = []
    seen: set[str] = set()
    for token in tokens:
        for word in _SEPARATORS.split(token):
            folded = word.casefold()
            if word and folded not in seen:
                seen.add(folded)
                words.append(word)
    if not words:
        return tokens
    kept = [word for word in words if word.casefold() not in ENGLISH_STOPWORDS]
    return with_irregular_forms(kept) if kept else words


def with_irregular_forms(words: Sequence[str]) -> list[str]:
    """``words``, each with the other forms of its irregular group that are neither stopwords
    nor already there (docs/adr/0023). A regular form of a group's base (``goes``,
    ``giving``) gives way to the base, which the stemmer makes the same term."""
    out: list[str] = []
    seen: set[str] = set()
    for word in words:
        group = irregular_group(word.casefold())
        forms = [word] if not group or word.casefold() in group else []
        forms += [form for form in group if form not in ENGLISH_STOPWORDS]
        for form in forms:
            if form.casefold() not in seen:
                seen.add(form.casefold())
                out.append(form)
    return out


def search_terms(query: str, query_mode: str) -> list[str]:
    """The query's terms under ``query_mode`` (``rfc`` or ``natural``)."""
    if query_mode == "natural":
        return natural_terms(query)
    return query_tokens(query)


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


def preview(text: str) -> str:
    """The snippet of a vector-only hit: the text itself when it fits SNIPPET_BYTES, else its
    start cut at the last word boundary that fits, with "…" (all within SNIPPET_BYTES)."""
    if len(text.encode("utf-8", "surrogatepass")) <= SNIPPET_BYTES:
        return text
    cut = cut_utf8(text, SNIPPET_BYTES - len("…".encode()))
    if not text[len(cut)].isspace():  # the cut fell inside a word: drop its start
        boundary = next((i for i in range(len(cut) - 1, 0, -1) if cut[i].isspace()), 0)
        if boundary > 0:  # one word longer than the snippet is cut where it must be
            cut = cut[:boundary]
    return cut.rstrip() + "…"


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
    vector_weight: float = 1.0,
) -> list[Fused]:
    """Reciprocal Rank Fusion of up to two ranked ID lists, ranks starting at 1.

    ``vector_weight`` scales the vector list's terms (weighted RRF, fusion.py); at 1.0 this is
    RFC-0020's formula exactly. Ordered by score, then by highest ID; the first ``limit``
    are returned.
    """
    fts_rank = {id_: rank for rank, id_ in enumerate(fts, start=1)}
    vec_rank = {id_: rank for rank, id_ in enumerate(vector, start=1)}
    fused: list[Fused] = []
    for id_ in fts_rank.keys() | vec_rank.keys():
        fr, vr = fts_rank.get(id_), vec_rank.get(id_)
        vector_term = vector_weight / (RRF_K + vr) if vr else 0.0
        score = (1 / (RRF_K + fr) if fr else 0.0) + vector_term
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
