"""FTS5's bm25, computed over the rows a caller may read instead of over the whole index.

FTS5's built-in ``bm25()`` takes its statistics (row count, average row length, and for each
phrase the number of rows containing it) from the whole index. A caller who may read only
some rows would then be ranked by text they cannot see: a hidden row changes the IDF of a
query word and so the order of visible hits, which MEM-06 forbids ("search doesn't reveal
unreadable memories in results or ranks"). See docs/adr/0003.

So for a restricted caller the store measures those statistics over the live rows readable
through its :class:`Access` and scores with them (:func:`rank_readable`): FTS5's own bm25
(``ext/fts5/fts5_aux.c``) operation for operation, in numpy, over the lengths and phrase
frequencies fts_index.py reads from the index in bulk (docs/adr/0016). For a caller who
can read everything the statistics are the index's own, so the store uses the built-in
``bm25()`` and this module is not involved. Tests check the two agree, score for score.

The candidate filter (spaces, kinds, tags, sessions, importances, branch) does not change
the statistics: it narrows the hits, exactly as ``WHERE`` does around the built-in
``bm25()`` in the spec.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import apsw

from venom_mem_core.fts import K1, WEIGHTS, B, CorpusStats, bm25_term
from venom_mem_core.search_options import Weights

from . import fts_index
from .filters import Predicate
from .match import fts_match_expression

if TYPE_CHECKING:
    from .fts_index import Ints

__all__ = [
    "IN_ROWS",
    "K1",
    "WEIGHTS",
    "B",
    "phrase_by_api",
    "rank_readable",
    "register",
]

_PHRASE_FREQ = "venom_phrase_freq"
# A filter on memories (alias m) as a rowid set for a MATCH scan. The unary + keeps SQLite
# from handing the IN to FTS5 as rowid lookups: the scan walks the postings once and checks
# each match against the set, which costs less than joining memories for every match.
IN_ROWS = "+memory_fts.rowid IN (SELECT m.id FROM memories AS m WHERE {})"


def _phrase_freq(api: apsw.FTS5ExtensionApi, *args: apsw.SQLiteValue) -> float:
    """The weighted frequency of the query's first phrase in the current row, as fts5_aux.c's
    bm25 adds it up: each column's weight (the three arguments) times the phrase's
    occurrences there."""
    weights = [float(str(weight)) for weight in args] if args else WEIGHTS
    freq = 0.0
    for weight, offsets in zip(weights, api.phrase_locations(0), strict=True):
        freq += weight * len(offsets)
    return freq


def register(connection: apsw.Connection) -> None:
    """Make :func:`rank_readable` work on a connection: its fallback function and the
    ``fts5vocab`` table it reads (in ``temp``)."""
    connection.register_fts5_function(_PHRASE_FREQ, _phrase_freq)
    fts_index.attach(connection)


def phrase_by_api(
    connection: apsw.Connection, phrase: str, weights: Weights = WEIGHTS
) -> fts_index.PhrasePostings:
    """:func:`fts_index.phrase_postings` through FTS5's extension API: one Python call per
    row the phrase matches. For the phrases fts_index can't read (and for the tests)."""
    import numpy as np

    found = connection.execute(
        f"SELECT rowid, {_PHRASE_FREQ}(memory_fts, ?, ?, ?) FROM memory_fts"
        " WHERE memory_fts MATCH ? ORDER BY rowid",
        (*map(float, weights), fts_match_expression([phrase])),
    ).fetchall()
    rowids = np.fromiter((int(str(r)) for r, _ in found), dtype=np.int64, count=len(found))
    freqs = np.fromiter((float(str(f)) for _, f in found), dtype=np.float64, count=len(found))
    return fts_index.PhrasePostings(rowids=rowids, freqs=freqs)


def _narrow(connection: apsw.Connection, rowids: Ints, narrowed: Predicate) -> Ints:
    """Those of ``rowids`` (ascending) that pass ``narrowed`` (alias ``m`` for memories)."""
    import numpy as np

    passing = connection.execute(
        "SELECT group_concat(m.id, ' ') FROM json_each(?) AS j"
        f" JOIN memories AS m ON m.id = j.value WHERE {narrowed.sql}",
        (json.dumps(rowids.tolist()), *narrowed.params),
    ).get
    return rowids[np.isin(rowids, fts_index.parse_ints(passing))]


def rank_readable(
    connection: apsw.Connection,
    phrases: Sequence[str],
    readable: Predicate,
    limit: int,
    *,
    narrowed: Predicate | None = None,
    weights: Weights = WEIGHTS,
) -> list[tuple[int, float]]:
    """The best ``limit`` readable live rows matching any of ``phrases`` (the quoted strings
    of the MATCH, in order), with bm25 over the readable corpus, best first.

    ``readable`` is the caller's readable set; ``narrowed``, when given, the search's filter
    (the readable set included), which picks the hits without changing the statistics. A
    row matches when one of its phrases occurs in it, and each phrase's row count is the
    number of readable rows it occurs in. Scores are fts5_aux.c's, with the same operations on
    the same values (numpy's elementwise arithmetic is correctly rounded); ties go to the
    highest rowid. ``weights`` are bm25's column weights (the query mode's, docs/adr/0023).
    """
    import numpy as np  # only here: the store package stays free of numpy for the CLI

    corpus = fts_index.readable_corpus(connection, readable)
    if corpus.rows == 0:
        return []
    postings: dict[str, fts_index.PhrasePostings] = {}
    for phrase in phrases:
        if phrase not in postings:
            read = fts_index.phrase_postings(connection, phrase, weights)
            found = read if read is not None else phrase_by_api(connection, phrase, weights)
            _, inside = corpus.positions(found.rowids)
            postings[phrase] = fts_index.PhrasePostings(
                rowids=found.rowids[inside], freqs=found.freqs[inside]
            )
    hits = tuple(len(postings[phrase].rowids) for phrase in phrases)
    rowids = np.unique(np.concatenate([p.rowids for p in postings.values()]))
    if narrowed is not None and len(rowids):
        rowids = _narrow(connection, rowids, narrowed)
    if not len(rowids):
        return []
    freqs = np.zeros((len(rowids), len(phrases)))
    for column, phrase in enumerate(phrases):
        found = postings[phrase]
        at = np.searchsorted(rowids, found.rowids)
        kept = at < len(rowids)
        kept[kept] = rowids[at[kept]] == found.rowids[kept]
        freqs[at[kept], column] = found.freqs[kept]
    at, _ = corpus.positions(rowids)
    lengths = corpus.lengths[at].astype(np.float64)
    stats = CorpusStats(rows=corpus.rows, tokens=corpus.tokens, hits=hits)
    # The core's bm25 over every row at once: numpy's elementwise operations round alike.
    avgdl = stats.avgdl
    score = np.zeros(len(rowids))
    for column, idf in enumerate(stats.idf()):
        score += bm25_term(idf, freqs[:, column], lengths, avgdl)
    score = -1.0 * score
    order = np.lexsort((-rowids, score))[:limit]
    return list(zip(rowids[order].tolist(), (-score[order]).tolist(), strict=True))
