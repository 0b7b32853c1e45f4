"""A complete :class:`~venom_mem_core.ports.Store` in pure Python: no files, no SQLite, no I/O.

``InMemoryStore`` is the reference fake for the store port. Other tools may use it as a fake
in their own tests (``App(store=InMemoryStore(), clock=FixedClock())``), and it passes the same
contract suite as the SQLite store (:mod:`venom_mem_core.testing`). Nothing survives
:meth:`InMemoryStore.close` or the process.

Transactions. The published state is never mutated. ``write()`` takes the writer lock (so
writes are serialized), works on a copy of the published state, and publishes the copy only
when the block exits cleanly; an exception discards the copy, which is the rollback.
``read()`` takes a reference to the published state, so it sees one consistent snapshot for
as long as it runs, whatever commits meanwhile. A transaction object is dead once its block
exits. IDs come from counters that only go up, so an ID is never reused after a purge. As a
backstop to the use cases' own dedup, a second live memory with the same
``(space, content_sha256)`` raises ``conflict.memory_duplicate``; rows that break what SQLite's
keys and foreign keys enforce raise ``failed.store``.

Full-text search approximates SQLite FTS5 with ``tokenize = 'porter unicode61
remove_diacritics 2'`` and ``bm25(memory_fts, 5.0, 1.0, 3.0)``:

* Tokens are runs of letters, numbers, private-use and unassigned characters (Unicode
  categories ``L*``, ``N*``, ``Co``, ``Cn``) and of the combining diacritics unicode61 folds
  away; everything else separates them. Each character is case-folded when that gives one
  character (so ``ß`` and ``ﬁ`` stay, as in unicode61), and a Latin letter with only those
  diacritics loses them (``é`` -> ``e``; ``й`` and Greek accents stay). Tokens of 3 to 64 bytes
  are then stemmed with the Porter algorithm exactly as ``fts5_porter.c`` does it (Porter's
  revised rules, ``bli`` and ``logi`` included, and FTS5's quirks such as ``ies`` -> ``ie`` and
  ``ating`` -> ``at``). Checked against apsw's FTS5 on 100,000 words and on mixed-script
  text: SQLite's Unicode 6.1 tables differ only for characters assigned since then and a few
  letters with two stacked marks.
* Each query token is tokenized the same way; one that yields several terms is a phrase whose
  terms must be consecutive, and one that yields none matches nothing.
* The score is FTS5's BM25 (``fts5_aux.c``): for each phrase, ``idf = ln((N - n + 0.5) /
  (n + 0.5))`` (``1e-6`` when not positive), ``f`` is the phrase's hits weighted by column
  (title 5, content 1, tags 3) and summed over the columns, and ``score += idf * f * (k1 + 1)
  / (f + k1 * (1 - b + b * D / avgdl))`` with ``k1 = 1.2``, ``b = 0.75``, ``D`` the row's length
  in tokens over all three columns and ``avgdl`` the mean of ``D``. ``N``, ``n`` and ``avgdl``
  are measured over the live rows the caller may read (``where.access``), as the SQLite store
  does (docs/adr/0003): a caller who reads everything gets FTS5's own numbers, a hidden row
  never moves a visible one (MEM-06), and the other filters (spaces, kinds, tags, sessions)
  narrow the hits without reordering them, as a ``WHERE`` around ``bm25()`` would. Best
  first, ties by highest ID.
* The snippet approximates ``snippet(memory_fts, 1, '', '', '…', 64)``: at most 64 content
  tokens around the first hit in the content (the first 64 when the hit was in the title or
  tags), with ``…`` where the text was cut; FTS5 may centre on another hit when there are
  several. Content with no tokens at all gives its first 240 bytes.
"""

from __future__ import annotations

import math
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import attrs

from .errors import VenomError
from .grants import Access
from .ports import ERASE_PENDING, MemoryFilter, SessionFilter, SpaceSummary, StoreCounts
from .ranking import SNIPPET_BYTES, cut_utf8
from .records import (
    IMPORTANCES,
    Client,
    ContextEntry,
    Memory,
    Session,
    SpaceDescription,
    Version,
)
from .search_options import RFC_WEIGHTS, Weights

if TYPE_CHECKING:
    from .ports import ReadTx, Store, WriteTx

__all__ = ["InMemoryStore", "porter_stem", "tokenize"]

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
class _Token:
    term: str
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
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


def _close(out: list[_Token], parts: list[str], start: int, end: int) -> None:
    word = "".join(parts)
    if word:
        out.append(_Token(porter_stem(word), start, end))


def tokenize(text: str) -> list[str]:
    """The terms FTS5's ``porter unicode61 remove_diacritics 2`` would index for ``text``."""
    return [token.term for token in _tokens(text)]


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
# BM25 over the caller's corpus (live, readable rows), as fts5_aux.c computes it.

_K1 = 1.2
_B = 0.75
_SNIPPET_TOKENS = 64


@attrs.frozen
class _Doc:
    """A memory's indexed columns: title, content and tags (space-separated, as stored)."""

    columns: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    content_tokens: tuple[_Token, ...]

    @property
    def length(self) -> int:
        return sum(len(column) for column in self.columns)


def _index(memory: Memory) -> _Doc:
    content = tuple(_tokens(memory.content))
    return _Doc(
        columns=(
            tuple(tokenize(memory.title)),
            tuple(token.term for token in content),
            tuple(tokenize(" ".join(memory.tags))),
        ),
        content_tokens=content,
    )


def _phrase_positions(terms: Sequence[str], phrase: Sequence[str]) -> list[int]:
    size = len(phrase)
    return [i for i in range(len(terms) - size + 1) if tuple(terms[i : i + size]) == phrase]


def _snippet(memory: Memory, doc: _Doc, phrases: Sequence[tuple[str, ...]]) -> str:
    """FTS5's ``snippet(memory_fts, 1, '', '', '…', 64)``, approximately: a window of at most
    64 content tokens placed around the first hit (FTS5 scores every hit's window and may pick
    another when there are several), ``…`` where it cuts the text."""
    tokens = doc.content_tokens
    count = len(tokens)
    if count == 0:
        return cut_utf8(memory.content, SNIPPET_BYTES)
    terms = doc.columns[1]
    hits = [(pos, len(p)) for p in phrases if p for pos in _phrase_positions(terms, p)[:1]]
    start = 0
    if hits:
        first, size = min(hits)
        start = max(0, min(first - (_SNIPPET_TOKENS - size) // 2, count - _SNIPPET_TOKENS))
    end = min(count, start + _SNIPPET_TOKENS)
    head = "" if start == 0 else "…"
    tail = "" if end == count else "…"
    begin_char = 0 if start == 0 else tokens[start].start
    end_char = len(memory.content) if end == count else tokens[end - 1].end
    return head + memory.content[begin_char:end_char] + tail


def _bm25(
    rows: Sequence[Memory],
    docs: dict[int, _Doc],
    phrases: Sequence[tuple[str, ...]],
    weights: Weights = RFC_WEIGHTS,
) -> dict[int, float]:
    """Score of every row matching at least one phrase; ``rows`` are the caller's corpus."""
    total = len(rows)
    avgdl = sum(docs[m.id].length for m in rows) / total
    freqs: list[dict[int, float]] = []
    for phrase in phrases:
        found: dict[int, float] = {}
        if phrase:
            for memory in rows:
                columns = docs[memory.id].columns
                weighted = sum(
                    weight * len(_phrase_positions(column, phrase))
                    for weight, column in zip(weights, columns, strict=True)
                )
                if weighted:
                    found[memory.id] = weighted
        freqs.append(found)
    scores: dict[int, float] = {}
    for found in freqs:
        idf = math.log((total - len(found) + 0.5) / (len(found) + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        for id_, freq in found.items():
            size = docs[id_].length
            # The operations in fts5_aux.c's order, so equal inputs round alike.
            part = idf * ((freq * (_K1 + 1.0)) / (freq + _K1 * (1 - _B + _B * size / avgdl)))
            scores[id_] = scores.get(id_, 0.0) + part
    return scores


# --------------------------------------------------------------------------------------------
# State and transactions.


@attrs.define
class _State:
    """Every row. Published states are never mutated: a write works on :meth:`copy`."""

    memories: dict[int, Memory] = attrs.field(factory=dict)
    live_content: dict[tuple[str, bytes], int] = attrs.field(factory=dict)
    versions: dict[int, dict[int, Version]] = attrs.field(factory=dict)
    sessions: dict[int, Session] = attrs.field(factory=dict)
    clients: dict[str, Client] = attrs.field(factory=dict)
    spaces: dict[str, SpaceDescription] = attrs.field(factory=dict)
    meta: dict[str, str] = attrs.field(factory=lambda: {"next_principal": "1"})
    last_memory: int = 0
    last_session: int = 0

    def copy(self) -> _State:
        return _State(
            memories=dict(self.memories),
            live_content=dict(self.live_content),
            versions={memory: dict(kept) for memory, kept in self.versions.items()},
            sessions=dict(self.sessions),
            clients=dict(self.clients),
            spaces=dict(self.spaces),
            meta=dict(self.meta),
            last_memory=self.last_memory,
            last_session=self.last_session,
        )


def _store_error(message: str) -> VenomError:
    """What SQLite's keys and foreign keys would refuse, as the adapter reports it."""
    return VenomError("failed.store", message)


class _ReadTx:
    """Queries over one state. Dead once its ``with`` block has exited."""

    def __init__(self, state: _State, docs: dict[int, tuple[Memory, _Doc]]) -> None:
        self._state: _State | None = state
        self._docs = docs

    def close(self) -> None:
        self._state = None

    @property
    def _s(self) -> _State:
        if self._state is None:
            raise VenomError("failed.internal", "this transaction has ended")
        return self._state

    def _doc(self, memory: Memory) -> _Doc:
        cached = self._docs.get(memory.id)
        if cached is not None and cached[0] is memory:
            return cached[1]
        doc = _index(memory)
        self._docs[memory.id] = (memory, doc)
        return doc

    def get_memory(self, id: int) -> Memory | None:
        return self._s.memories.get(id)

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        id_ = self._s.live_content.get((space, content_sha256))
        return None if id_ is None else self._s.memories[id_]

    def get_version(self, memory: int, revision: int) -> Version | None:
        return self._s.versions.get(memory, {}).get(revision)

    def list_versions(self, memory: int) -> list[Version]:
        kept = self._s.versions.get(memory, {})
        return [kept[revision] for revision in sorted(kept, reverse=True)]

    def rank_text(self, tokens: Sequence[str], where: MemoryFilter, limit: int) -> list[int]:
        return [id_ for id_, _ in self.rank_text_scored(tokens, where, limit)]

    def rank_text_scored(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights = RFC_WEIGHTS,
    ) -> list[tuple[int, float]]:
        phrases = [tuple(tokenize(token)) for token in tokens]
        memories = self._s.memories
        corpus = [
            m
            for m in memories.values()
            if m.deleted is None
            and where.access.allows(id=m.id, owner=m.author.principal, space=m.space)
        ]
        if not corpus or not any(phrases) or limit <= 0:
            return []
        docs = {memory.id: self._doc(memory) for memory in corpus}
        scores = _bm25(corpus, docs, phrases, weights)
        ranked = [id_ for id_ in scores if where.matches(memories[id_])]
        ranked.sort(key=lambda id_: (-scores[id_], -id_))
        return [(id_, scores[id_]) for id_ in ranked[:limit]]

    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]:
        phrases = [tuple(tokenize(token)) for token in tokens]
        snippets: dict[int, str] = {}
        for id_ in ids:
            memory = self._s.memories.get(id_)
            if memory is None or memory.deleted is not None:
                continue
            doc = self._doc(memory)
            if any(_phrase_positions(terms, p) for p in phrases if p for terms in doc.columns):
                snippets[id_] = _snippet(memory, doc, phrases)
        return snippets

    def list_memories(self, where: MemoryFilter, after: int | None, limit: int) -> list[Memory]:
        ids = sorted(
            (
                id_
                for id_, memory in self._s.memories.items()
                if (after is None or id_ < after) and where.matches(memory)
            ),
            reverse=True,
        )
        return [self._s.memories[id_] for id_ in ids[:limit]]

    def space_summaries(self, access: Access) -> list[SpaceSummary]:
        counts: dict[str, int] = {}
        updated: dict[str, str] = {}
        for memory in self._s.memories.values():
            if memory.deleted is not None or not access.allows(
                id=memory.id, owner=memory.author.principal, space=memory.space
            ):
                continue
            counts[memory.space] = counts.get(memory.space, 0) + 1
            updated[memory.space] = max(updated.get(memory.space, ""), memory.updated)
        described = {
            space: d
            for space, d in self._s.spaces.items()
            if access.everything or space in access.spaces
        }
        for space, d in described.items():
            updated[space] = max(updated.get(space, ""), d.updated)
        return [
            SpaceSummary(
                space=space,
                memories=counts.get(space, 0),
                updated=updated[space],
                description=described[space].description if space in described else None,
            )
            for space in sorted(counts.keys() | described.keys())
        ]

    def space_descriptions(self, spaces: Sequence[str]) -> dict[str, SpaceDescription]:
        return {space: self._s.spaces[space] for space in spaces if space in self._s.spaces}

    def _live_matching(self, where: MemoryFilter) -> list[Memory]:
        live = attrs.evolve(where, include_deleted=False)
        return [m for m in self._s.memories.values() if live.matches(m)]

    def context_entries(self, where: MemoryFilter, offset: int, limit: int) -> list[ContextEntry]:
        # Stable sorts, last key first: highest ID, then latest update, then importance.
        rows = sorted(self._live_matching(where), key=lambda m: m.id, reverse=True)
        rows.sort(key=lambda m: m.updated, reverse=True)
        rows.sort(key=lambda m: IMPORTANCES.index(m.importance))
        return [ContextEntry.of(m) for m in rows[offset : offset + limit]]

    def count_memories(self, where: MemoryFilter) -> int:
        return len(self._live_matching(where))

    def get_session(self, id: int) -> Session | None:
        return self._s.sessions.get(id)

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        for session in self._s.sessions.values():
            if session.harness == harness and session.harness_session == harness_session:
                return session
        return None

    def list_sessions(self, where: SessionFilter, after: int | None, limit: int) -> list[Session]:
        def keep(session: Session) -> bool:
            return (
                (after is None or session.id < after)
                and where.access.allows(id=session.id, owner=session.reported_by.principal)
                and (where.harness is None or session.harness == where.harness)
                and (
                    where.harness_session is None
                    or session.harness_session == where.harness_session
                )
                and (where.parent is None or session.parent == where.parent)
            )

        rows = sorted(
            (s for s in self._s.sessions.values() if keep(s)), key=lambda s: s.id, reverse=True
        )
        return rows[:limit]

    def get_client(self, name: str) -> Client | None:
        return self._s.clients.get(name)

    def get_client_by_principal(self, principal: str) -> Client | None:
        for client in self._s.clients.values():
            if client.principal == principal:
                return client
        return None

    def list_clients(self) -> list[Client]:
        return [self._s.clients[name] for name in sorted(self._s.clients)]

    def get_meta(self, key: str) -> str | None:
        return self._s.meta.get(key)

    def counts(self) -> StoreCounts:
        live = sum(1 for m in self._s.memories.values() if m.deleted is None)
        return StoreCounts(
            memories=live,
            deleted=len(self._s.memories) - live,
            versions=sum(len(kept) for kept in self._s.versions.values()),
            sessions=len(self._s.sessions),
            vectors=0,
            pending=live,  # live with no vector: this store keeps none
        )


class _WriteTx(_ReadTx):
    """A private copy of the state; the store publishes it if the block exits cleanly."""

    def _claim_content(self, memory: Memory) -> None:
        if memory.deleted is not None:
            return
        key = (memory.space, memory.content_sha256)
        holder = self._s.live_content.get(key)
        if holder is not None and holder != memory.id:
            raise VenomError(
                "conflict.memory_duplicate",
                f"m{holder} already holds this content in {memory.space}",
                {"id": f"m{holder}"},
            )
        self._s.live_content[key] = memory.id

    def _release_content(self, memory: Memory) -> None:
        key = (memory.space, memory.content_sha256)
        if self._s.live_content.get(key) == memory.id:
            del self._s.live_content[key]

    def _check_session_ref(self, session: int | None) -> None:
        if session is not None and session not in self._s.sessions:
            raise _store_error(f"no session s{session} to refer to")

    def insert_memory(self, memory: Memory) -> int:
        self._check_session_ref(memory.session)
        id_ = self._s.last_memory + 1
        row = attrs.evolve(memory, id=id_)
        self._claim_content(row)
        self._s.last_memory = id_
        self._s.memories[id_] = row
        return id_

    def replace_memory(self, memory: Memory) -> None:
        old = self._s.memories.get(memory.id)
        if old is None:
            raise _store_error(f"no memory m{memory.id} to replace")
        self._check_session_ref(memory.session)
        self._release_content(old)
        try:
            self._claim_content(memory)
        except VenomError:
            self._claim_content(old)
            raise
        self._s.memories[memory.id] = memory

    def delete_memory(self, id: int) -> None:
        old = self._s.memories.pop(id, None)
        if old is not None:
            self._release_content(old)
        self._s.versions.pop(id, None)

    def insert_version(self, version: Version) -> None:
        if version.memory not in self._s.memories:
            raise _store_error(f"no memory m{version.memory} for a version")
        kept = self._s.versions.setdefault(version.memory, {})
        if version.revision in kept:
            raise _store_error(f"m{version.memory} already has revision {version.revision}")
        kept[version.revision] = version

    def prune_versions(self, memory: int, keep: int) -> None:
        kept = self._s.versions.get(memory)
        if not kept:
            return
        for revision in sorted(kept, reverse=True)[max(keep, 0) :]:
            del kept[revision]

    def expired_tombstones(self, deleted_before: str) -> list[Memory]:
        return sorted(
            (
                m
                for m in self._s.memories.values()
                if m.deleted is not None and m.deleted < deleted_before
            ),
            key=lambda m: m.id,
        )

    def insert_session(self, session: Session) -> int:
        if session.parent is not None and session.parent not in self._s.sessions:
            raise _store_error(f"no session s{session.parent} to be a parent")
        if session.harness_session is not None and (
            self.find_session(session.harness, session.harness_session) is not None
        ):
            raise _store_error("a session with this harness and harness_session exists")
        id_ = self._s.last_session + 1
        self._s.last_session = id_
        self._s.sessions[id_] = attrs.evolve(session, id=id_)
        return id_

    def replace_session(self, session: Session) -> None:
        if session.id not in self._s.sessions:
            raise _store_error(f"no session s{session.id} to replace")
        self._s.sessions[session.id] = session

    def delete_session(self, id: int) -> None:
        if self._s.sessions.pop(id, None) is None:
            return
        for child in [s for s in self._s.sessions.values() if s.parent == id]:
            self._s.sessions[child.id] = attrs.evolve(child, parent=None)
        for memory in [m for m in self._s.memories.values() if m.session == id]:
            self._s.memories[memory.id] = attrs.evolve(memory, session=None)

    def insert_client(self, client: Client) -> None:
        if client.name in self._s.clients:
            raise VenomError("conflict.client_exists", f"a client named {client.name} exists")
        if self.get_client_by_principal(client.principal) is not None:
            raise _store_error(f"principal {client.principal} already has a client")
        self._s.clients[client.name] = client

    def delete_client(self, name: str) -> None:
        self._s.clients.pop(name, None)

    def set_meta(self, key: str, value: str) -> None:
        self._s.meta[key] = value

    def forget_meta(self, key: str) -> None:
        self._s.meta.pop(key, None)

    def set_space_description(self, description: SpaceDescription) -> None:
        self._s.spaces[description.space] = description

    def delete_space_description(self, space: str) -> None:
        self._s.spaces.pop(space, None)


class InMemoryStore:
    """The store port over Python dicts: for tests, fakes and library use with no files."""

    def __init__(self) -> None:
        self._writer = threading.RLock()  # held for a whole write: writes run one at a time
        self._publish = threading.Lock()  # held only to swap or take the published state
        self._state = _State()
        self._writing = False
        self._closed = False
        # Index cache shared by every snapshot, keyed by memory ID and checked by identity:
        # a record is immutable, so the same object always has the same terms.
        self._docs: dict[int, tuple[Memory, _Doc]] = {}

    def _check_open(self) -> None:
        if self._closed:
            raise VenomError("failed.internal", "the in-memory store is closed")

    @contextmanager
    def read(self) -> Iterator[ReadTx]:
        with self._publish:
            self._check_open()
            state = self._state
        tx = _ReadTx(state, self._docs)
        try:
            yield tx
        finally:
            tx.close()

    @contextmanager
    def write(self) -> Iterator[WriteTx]:
        with self._writer:
            self._check_open()
            if self._writing:
                raise VenomError("failed.internal", "store.write() is not reentrant")
            self._writing = True
            try:
                tx = _WriteTx(self._state.copy(), self._docs)
                try:
                    yield tx
                    state = tx._s
                finally:
                    tx.close()
                with self._publish:
                    self._state = state
                self._forget_purged()
            finally:
                self._writing = False

    def _forget_purged(self) -> None:
        if len(self._docs) > len(self._state.memories):
            for id_ in list(self._docs):
                if id_ not in self._state.memories:
                    self._docs.pop(id_, None)

    def erase_traces(self) -> None:
        """A purged row is gone once no snapshot refers to it: only the marker goes."""
        with self.write() as tx:
            assert isinstance(tx, _WriteTx)
            tx.forget_meta(ERASE_PENDING)

    def erase_pending_traces(self) -> None:
        with self.read() as tx:
            pending = tx.get_meta(ERASE_PENDING) is not None
        if pending:
            self.erase_traces()

    def describe(self) -> dict[str, Any]:
        return {"path": ":memory:", "schema_version": 2, "sqlite_version": "none", "bytes": 0}

    def close(self) -> None:
        with self._writer, self._publish:
            self._closed = True
            self._state = _State()
            self._docs.clear()

    def __enter__(self) -> InMemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


if TYPE_CHECKING:
    _check: Store = InMemoryStore()
