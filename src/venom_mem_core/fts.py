"""SQLite FTS5's full-text semantics in pure Python, for stores that have no FTS5.

RFC-0020 section 5 searches with FTS5: ``tokenize = 'porter unicode61 remove_diacritics 2'``,
ranked by ``bm25(memory_fts, 5.0, 1.0, 3.0)`` over the columns title, content and tags, with
snippets from ``snippet(memory_fts, 1, '', '', '…', 64)``. The SQLite store gets all of that
from SQLite and shares this module's constants; a store without FTS5 (the in-memory store, a
PostgreSQL store) computes the same terms, scores and snippets here:

* :func:`tokenize` (:func:`tokens` with offsets): the terms FTS5 indexes. Tokens are runs of
  letters, numbers, private-use and unassigned characters (Unicode categories ``L*``, ``N*``,
  ``Co``, ``Cn``) and of the combining diacritics unicode61 folds away; everything else
  separates them. Each character is case-folded when that gives one character (so ``ß`` and
  ``ﬁ`` stay, as in unicode61), and a Latin letter with only those diacritics loses them
  (``é`` -> ``e``; ``й`` and Greek accents stay). Tokens of 3 to 64 bytes are then stemmed by
  :func:`porter_stem` exactly as ``fts5_porter.c`` does it (Porter's revised rules, ``bli``
  and ``logi`` included, and FTS5's quirks such as ``ies`` -> ``ie`` and ``ating`` ->
  ``at``). Checked against apsw's FTS5 on 100,000 words and on mixed-script text: SQLite's
  Unicode 6.1 tables differ only for characters assigned since then and a few letters with
  two stacked marks.
* :func:`query_phrases`: each query token is tokenized the same way; one that yields several
  terms is a phrase whose terms must be consecutive, and one that yields none matches nothing.
  (The FTS5 query text itself, quoting and ``OR``, belongs to the SQLite adapter.)
* :class:`Document`: a row's three columns as terms, its length ``D`` in tokens over all
  three, and a phrase's frequency ``f``: its hits weighted by column (:data:`WEIGHTS`: title
  5, content 1, tags 3) and summed over the columns.
* :class:`CorpusStats` and :func:`bm25`: FTS5's BM25 (``fts5_aux.c``). A store measures the
  statistics over the live rows the caller may read (docs/adr/0003, MEM-06): ``N`` rows,
  their total tokens (``avgdl`` is the mean of ``D``) and, for each phrase, ``n`` rows that
  contain it. Then ``idf = ln((N - n + 0.5) / (n + 0.5))`` (:data:`IDF_FLOOR` when not
  positive) and ``score = sum(idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)))``
  with :data:`K1` and :data:`B`, the operations in fts5_aux.c's order so that equal inputs
  round alike. Scores here are positive, higher is better: FTS5's ``bm25()`` negated, as
  :meth:`~venom_mem_core.ports.ReadTx.rank_text_scored` reports them. Order best first, ties
  by highest ID. :func:`bm25_scores` does all of it over a corpus of documents.
* :func:`snippet` approximates FTS5's ``snippet``: at most :data:`SNIPPET_TOKENS` content
  tokens around the first hit in the content (the first ones when the hit was in the title or
  tags), with ``…`` where the text was cut; FTS5 may centre on another hit when there are
  several. Content with no tokens at all gives its first 240 bytes.

A store with its rows in memory builds a :class:`Document` per row (cache it: a record is
immutable) and calls :func:`bm25_scores` on the caller's readable live rows. A store with its
rows in a database can keep each column's :func:`tokenize` terms there, measure
:class:`CorpusStats` with queries (rows, summed lengths, rows holding each phrase), and score
each candidate with :func:`bm25` from its :meth:`Document.frequency` per phrase and its
length; the result is the same to the last bit when the inputs are (tests/unit/test_fts.py
checks it against SQLite itself). Either way it may declare
:class:`~venom_mem_core.ports.RanksLikeFts5`, which the contract suite then holds it to.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol, Self, TypeVar

import attrs

from .ranking import SNIPPET_BYTES, cut_utf8
from .search_options import RFC_WEIGHTS, Weights

__all__ = [
    "FTS5_TOKENIZE",
    "IDF_FLOOR",
    "K1",
    "SNIPPET_TOKENS",
    "WEIGHTS",
    "B",
    "CorpusStats",
    "Document",
    "Phrase",
    "Scores",
    "ScoresT",
    "Token",
    "bm25",
    "bm25_scores",
    "bm25_term",
    "bm25_term_sql",
    "phrase_starts",
    "porter_stem",
    "query_phrases",
    "snippet",
    "tokenize",
    "tokens",
    "weighted_hits",
]

FTS5_TOKENIZE = "porter unicode61 remove_diacritics 2"
K1 = 1.2
B = 0.75
WEIGHTS = RFC_WEIGHTS  # title, content, tags (RFC-0020 section 5); natural mode x4 (ADR 0023)
IDF_FLOOR = 1e-6  # fts5_aux.c: "if( idf<=0.0 ) idf = 1e-6;"
SNIPPET_TOKENS = 64

Phrase = tuple[str, ...]

# --------------------------------------------------------------------------------------------
# Tokenizer: unicode61 remove_diacritics 2, then porter.

_TOKEN_CATEGORIES = ("L", "N")
_PORTER_MIN_BYTES = 3
_PORTER_MAX_BYTES = 64
# The combining marks unicode61 folds away (remove_diacritics 2); other marks separate tokens.
_DIACRITICS = frozenset(
    chr(cp)
    for cp in (
        *range(0x300, 0x305),
        *range(0x306, 0x30D),
        0x30F,
        0x311,
        0x31B,
        *range(0x323, 0x329),
        0x32D,
        0x32E,
        0x330,
        0x331,
    )
)


# Pure functions of one character and one word, called for every character and token a
# store without FTS5 indexes or snippets: text repeats, and each call was several
# unicodedata lookups or a dozen suffix rules (docs/adr/0031's amendment).
@functools.lru_cache(maxsize=4096)
def _fold_char(char: str) -> str | None:
    """The folded form of a token character, or ``None`` for a separator."""
    if char in _DIACRITICS:
        return ""
    category = unicodedata.category(char)
    if category[0] not in _TOKEN_CATEGORIES and category not in ("Co", "Cn"):
        return None
    folded = char.casefold()
    if len(folded) != 1:  # unicode61 folds one character to one: it keeps ß and ﬀ
        folded = char.lower()
    decomposed = unicodedata.normalize("NFD", folded)
    if (
        len(decomposed) > 1
        and decomposed[0].isascii()
        and all(mark in _DIACRITICS for mark in decomposed[1:])
    ):
        return decomposed[0]
    return folded


@attrs.frozen
class Token:
    """One indexed term and where its characters are in the text (``text[start:end]``)."""

    term: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """:func:`tokenize` with each term's place in ``text``."""
    out: list[Token] = []
    parts: list[str] = []
    start = -1
    for index, char in enumerate(text):
        folded = _fold_char(char)
        if folded is None:
            if start >= 0:
                _close(out, parts, start, index)
                start = -1
            continue
        if start < 0:
            start, parts = index, []
        parts.append(folded)
    if start >= 0:
        _close(out, parts, start, len(text))
    return out


def _close(out: list[Token], parts: list[str], start: int, end: int) -> None:
    word = "".join(parts)
    if word:
        out.append(Token(porter_stem(word), start, end))


def tokenize(text: str) -> list[str]:
    """The terms FTS5's ``porter unicode61 remove_diacritics 2`` would index for ``text``."""
    return [token.term for token in tokens(text)]


def query_phrases(query_tokens: Sequence[str]) -> list[Phrase]:
    """Each query token as the phrase of its terms (empty when it has none), in order."""
    return [tuple(tokenize(token)) for token in query_tokens]


# Porter stemmer, following fts5_porter.c step by step. It works on UTF-8 bytes like the C
# code: the word is mapped byte for byte onto Latin-1 characters and back.


def _is_vowel(char: str, y_is_vowel: bool) -> bool:
    return char in "aeiou" or (y_is_vowel and char == "y")


def _gobble_vc(stem: str, prev_consonant: bool) -> int:
    """Length of the first [C]VC prefix of ``stem`` (0 when it has none)."""
    consonant = prev_consonant
    index = 0
    while index < len(stem):
        consonant = not _is_vowel(stem[index], consonant)
        if not consonant:
            break
        index += 1
    index += 1
    while index < len(stem):
        consonant = not _is_vowel(stem[index], consonant)
        if consonant:
            return index + 1
        index += 1
    return 0


def _m_gt0(stem: str) -> bool:
    return _gobble_vc(stem, False) > 0


def _m_gt1(stem: str) -> bool:
    n = _gobble_vc(stem, False)
    return n > 0 and _gobble_vc(stem[n:], True) > 0


def _m_eq1(stem: str) -> bool:
    n = _gobble_vc(stem, False)
    return n > 0 and _gobble_vc(stem[n:], True) == 0


def _has_vowel(stem: str) -> bool:
    return any(_is_vowel(char, index > 0) for index, char in enumerate(stem))


def _ostar(stem: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y."""
    if not stem or stem[-1] in "wxy":
        return False
    mask = 0
    consonant = False
    for char in stem:
        consonant = not _is_vowel(char, consonant)
        mask = (mask << 1) + int(consonant)
    return (mask & 0b111) == 0b101


def _m_gt1_s_or_t(stem: str) -> bool:
    return bool(stem) and stem[-1] in "st" and _m_gt1(stem)


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("logi", "log"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
)
_STEP3 = (
    ("ical", "ic"),
    ("ness", ""),
    ("icate", "ic"),
    ("iciti", "ic"),
    ("ful", ""),
    ("ative", ""),
    ("alize", "al"),
)
_STEP4 = tuple(
    (suffix, "")
    for suffix in (
        "al",
        "ance",
        "ence",
        "er",
        "ic",
        "able",
        "ible",
        "ant",
        "ement",
        "ment",
        "ent",
        "ion",
        "ou",
        "ism",
        "ate",
        "iti",
        "ous",
        "ive",
        "ize",
    )
)


def _replace_suffix(
    word: str, rules: Sequence[tuple[str, str]], cond: Callable[[str, str], bool]
) -> str:
    """The first rule whose suffix ends ``word`` (leaving a nonempty stem) decides alone."""
    for suffix, replacement in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if cond(stem, suffix) else word
    return word


def _step1a(word: str) -> str:
    if not word.endswith("s"):
        return word
    if word[-2] == "e":
        if (len(word) > 4 and word[-4:-2] == "ss") or (len(word) > 3 and word[-3] == "i"):
            return word[:-2]
        return word[:-1]
    return word if word[-2] == "s" else word[:-1]


def _step1b(word: str) -> str:
    if len(word) > 3 and word.endswith("eed"):
        return word[:-1] if _m_gt0(word[:-3]) else word
    if len(word) > 2 and word.endswith("ed"):
        if not _has_vowel(word[:-2]):
            return word
        word = word[:-2]
    elif len(word) > 3 and word.endswith("ing"):
        if not _has_vowel(word[:-3]):
            return word
        word = word[:-3]
    else:
        return word
    for suffix, replacement in (("at", "ate"), ("bl", "ble"), ("iz", "ize")):
        if len(word) > 2 and word.endswith(suffix):
            return word[:-2] + replacement
    last = word[-1]
    if len(word) > 1 and last == word[-2] and not _is_vowel(last, False) and last not in "lsz":
        return word[:-1]
    if _m_eq1(word) and _ostar(word):
        return word + "e"
    return word


def _step4_cond(stem: str, suffix: str) -> bool:
    return _m_gt1_s_or_t(stem) if suffix == "ion" else _m_gt1(stem)


@functools.lru_cache(maxsize=16384)
def porter_stem(word: str) -> str:
    """Stem one lowercased token as SQLite's FTS5 ``porter`` tokenizer does.

    Tokens shorter than 3 or longer than 64 bytes pass through unchanged, as in FTS5.
    """
    raw = word.encode("utf-8")
    if not _PORTER_MIN_BYTES <= len(raw) <= _PORTER_MAX_BYTES:
        return word
    text = _step1b(_step1a(raw.decode("latin-1")))
    if text[-1] == "y" and _has_vowel(text[:-1]):
        text = text[:-1] + "i"
    text = _replace_suffix(text, _STEP2, lambda stem, _: _m_gt0(stem))
    text = _replace_suffix(text, _STEP3, lambda stem, _: _m_gt0(stem))
    text = _replace_suffix(text, _STEP4, _step4_cond)
    if text[-1] == "e" and (_m_gt1(text[:-1]) or (_m_eq1(text[:-1]) and not _ostar(text[:-1]))):
        text = text[:-1]
    if len(text) > 1 and text.endswith("ll") and _m_gt1(text[:-1]):
        text = text[:-1]
    return text.encode("latin-1").decode("utf-8", "replace")


# --------------------------------------------------------------------------------------------
# Documents, BM25 and snippets.


def phrase_starts(positions: Sequence[Collection[int]]) -> list[int]:
    """Where a phrase starts in one column, ascending, from its terms' positions there (one
    collection per term, in phrase order): every start ``s`` with term ``i`` at ``s + i``, as
    FTS5 matches a phrase. The one phrase rule of every store that counts in Python (the
    SQLite store's bulk read, fts_index.py, applies it to arrays of the whole index)."""
    if not positions:
        return []
    first = positions[0]
    later = [frozenset(terms) for terms in positions[1:]]
    return sorted(
        start
        for start in first
        if all(start + offset + 1 in terms for offset, terms in enumerate(later))
    )


def _term_positions(terms: Sequence[str]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for position, term in enumerate(terms):
        found.setdefault(term, []).append(position)
    return found


_NOWHERE: tuple[int, ...] = ()


@attrs.frozen
class Document:
    """A row as FTS5 indexes it: the terms of title, content and tags (space-separated, as
    the store keeps them), the content's tokens with offsets (for :func:`snippet`), and its
    length in tokens over all three columns; ``positions`` is each column's terms with the
    places they stand, ascending (what a store's postings hold)."""

    columns: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    content_tokens: tuple[Token, ...]
    length: int
    positions: tuple[Mapping[str, Sequence[int]], ...] = attrs.field(
        eq=False, repr=False, init=False
    )

    @positions.default
    def _index(self) -> tuple[Mapping[str, Sequence[int]], ...]:
        return tuple(_term_positions(column) for column in self.columns)

    @classmethod
    def of(cls, title: str | None, content: str, tags: Sequence[str]) -> Document:
        content_tokens = tuple(tokens(content))
        columns = (
            tuple(tokenize(title or "")),
            tuple(token.term for token in content_tokens),
            tuple(tokenize(" ".join(tags))),
        )
        return cls(
            columns=columns,
            content_tokens=content_tokens,
            length=sum(len(column) for column in columns),
        )

    def starts(self, column: int, phrase: Phrase) -> list[int]:
        """Where ``phrase`` starts in the column (0 title, 1 content, 2 tags)."""
        at = self.positions[column]
        return phrase_starts([at.get(term, _NOWHERE) for term in phrase])

    def frequency(self, phrase: Phrase, weights: Weights = WEIGHTS) -> float:
        """The phrase's hits in each column times the column's weight, summed."""
        return weighted_hits(
            [len(self.starts(column, phrase)) for column in range(len(self.columns))], weights
        )

    def matches(self, phrases: Sequence[Phrase]) -> bool:
        """Whether any nonempty phrase occurs in any column."""
        return any(
            self.starts(column, phrase)
            for phrase in phrases
            if phrase
            for column in range(len(self.columns))
        )


def weighted_hits(counts: Sequence[int], weights: Weights = WEIGHTS) -> float:
    """A phrase's frequency ``f`` from its hits per column, as fts5_aux.c adds it up: each
    column's weight times its count, column by column."""
    freq = 0.0
    for weight, hits in zip(weights, counts, strict=True):
        freq += weight * hits
    return freq


@attrs.frozen
class CorpusStats:
    """What BM25 needs to know about the corpus: rows, their total tokens, and for each
    phrase how many rows contain it."""

    rows: int
    tokens: int
    hits: tuple[int, ...]

    @property
    def avgdl(self) -> float:
        return self.tokens / self.rows

    def idf(self) -> tuple[float, ...]:
        """Each phrase's IDF, floored at :data:`IDF_FLOOR` as in fts5_aux.c."""
        values = []
        for hit in self.hits:
            idf = math.log((self.rows - hit + 0.5) / (hit + 0.5))
            values.append(IDF_FLOOR if idf <= 0.0 else idf)
        return tuple(values)


class Scores(Protocol):
    """What :func:`bm25_term` does to a frequency and a length: a float, or a numpy array of
    them (one element per row), whose elementwise operations round as a float's do."""

    def __add__(self, other: Self | float, /) -> Self: ...
    def __radd__(self, other: float, /) -> Self: ...
    def __mul__(self, other: float, /) -> Self: ...
    def __rmul__(self, other: float, /) -> Self: ...
    def __truediv__(self, other: Self | float, /) -> Self: ...


ScoresT = TypeVar("ScoresT", bound=Scores)


def bm25_term(idf: float, freq: ScoresT, length: ScoresT, avgdl: float) -> ScoresT:
    """One phrase's part of a row's BM25, in fts5_aux.c's order of operations; ``freq`` and
    ``length`` may be arrays (every row's at once, bm25.py)."""
    return idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / avgdl)))


def bm25_term_sql(*, rows: str, hits: str, freq: str, length: str, avgdl: str, cast: str) -> str:
    """:func:`bm25_term` with its IDF (:meth:`CorpusStats.idf`) as one SQL expression over
    the given column expressions, the same operations in the same order; ``cast`` (such as
    ``::float8``) makes each constant a double, so that the database rounds as Python does.
    ``ln`` is PostgreSQL's (and SQLite's, with its math functions) natural logarithm."""
    k1, b, floor = (f"{value!r}{cast}" for value in (K1, B, IDF_FLOOR))
    idf = f"ln(({rows} - {hits} + 0.5) / ({hits} + 0.5))"
    return (
        f"CASE WHEN {idf} <= 0 THEN {floor} ELSE {idf} END"
        f" * (({freq} * ({k1} + 1.0{cast})) / ({freq} + {k1} * (1 - {b} + {b} * {length}"
        f" / {avgdl})))"
    )


def bm25(idfs: Sequence[float], freqs: Sequence[float], length: float, avgdl: float) -> float:
    """A row's BM25 (positive, higher is better) from each phrase's IDF and frequency."""
    score = 0.0
    for idf, freq in zip(idfs, freqs, strict=True):
        score += bm25_term(idf, freq, length, avgdl)
    return score


def bm25_scores(
    corpus: Mapping[int, Document], phrases: Sequence[Phrase], weights: Weights = WEIGHTS
) -> dict[int, float]:
    """The score of every row of ``corpus`` (the caller's readable live rows, by ID) that
    matches at least one phrase, with the statistics measured over ``corpus``."""
    if not corpus:
        return {}
    found: list[dict[int, float]] = []
    for phrase in phrases:
        freqs: dict[int, float] = {}
        if phrase:
            for id_, doc in corpus.items():
                freq = doc.frequency(phrase, weights)
                if freq:
                    freqs[id_] = freq
        found.append(freqs)
    stats = CorpusStats(
        rows=len(corpus),
        tokens=sum(doc.length for doc in corpus.values()),
        hits=tuple(len(freqs) for freqs in found),
    )
    avgdl = stats.avgdl
    scores: dict[int, float] = {}
    for idf, freqs in zip(stats.idf(), found, strict=True):
        for id_, freq in freqs.items():
            part = bm25_term(idf, freq, corpus[id_].length, avgdl)
            scores[id_] = scores.get(id_, 0.0) + part
    return scores


def snippet(content: str, doc: Document, phrases: Sequence[Phrase]) -> str:
    """FTS5's ``snippet(memory_fts, 1, '', '', '…', 64)``, approximately: a window of at most
    :data:`SNIPPET_TOKENS` content tokens placed around the first hit (FTS5 scores every
    hit's window and may pick another when there are several), ``…`` where it cuts the text.
    ``doc`` is ``content``'s :class:`Document`."""
    content_tokens = doc.content_tokens
    count = len(content_tokens)
    if count == 0:
        return cut_utf8(content, SNIPPET_BYTES)
    hits = [(pos, len(p)) for p in phrases if p for pos in doc.starts(1, p)[:1]]
    start = 0
    if hits:
        first, size = min(hits)
        start = max(0, min(first - (SNIPPET_TOKENS - size) // 2, count - SNIPPET_TOKENS))
    end = min(count, start + SNIPPET_TOKENS)
    head = "" if start == 0 else "…"
    tail = "" if end == count else "…"
    begin_char = 0 if start == 0 else content_tokens[start].start
    end_char = len(content) if end == count else content_tokens[end - 1].end
    return head + content[begin_char:end_char] + tail
