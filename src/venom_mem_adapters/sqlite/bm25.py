"""FTS5's bm25, computed over the rows a caller may read instead of over the whole index.

FTS5's built-in ``bm25()`` takes its statistics (row count, average row length, and for each
phrase the number of rows containing it) from the whole index. A caller who may read only
some rows would then be ranked by text they cannot see: a hidden row changes the IDF of a
query word and so the order of visible hits, which MEM-06 forbids ("search doesn't reveal
unreadable memories in results or ranks"). See docs/adr/0003.

So for a restricted caller the store measures those statistics over the live rows readable
through its :class:`Access`, and ranks with :func:`rank`, an FTS5 auxiliary function that is
FTS5's own bm25 (``ext/fts5/fts5_aux.c``) operation for operation, fed those statistics. For
a caller who can read everything the statistics are the index's own, so the store uses the
built-in ``bm25()`` and this module is not involved. A test checks the two agree.

The candidate filter (spaces, kinds, tags, sessions) does not change the statistics: it
narrows the hits, exactly as ``WHERE`` does around the built-in ``bm25()`` in the spec.
"""

from __future__ import annotations

import math
import weakref
from array import array
from collections.abc import Sequence

import apsw
import attrs

from venom_mem_core.ranking import fts_match_expression
from venom_mem_core.search_options import RFC_WEIGHTS, Weights

from .filters import Predicate

__all__ = [
    "IN_ROWS",
    "K1",
    "RANK_FUNCTION",
    "WEIGHTS",
    "B",
    "CorpusStats",
    "corpus_stats",
    "rank",
    "rank_readable",
    "register",
]

K1 = 1.2
B = 0.75
WEIGHTS = RFC_WEIGHTS  # title, content, tags (RFC-0020 section 5)
RANK_FUNCTION = "venom_bm25"
_ROW_TOKENS = "venom_row_tokens"
_ROW_FREQS = "venom_row_freqs"
_IDF_FLOOR = 1e-6  # fts5_aux.c: "if( idf<=0.0 ) idf = 1e-6;"
# A filter on memories (alias m) as a rowid set for a MATCH scan. The unary + keeps SQLite
# from handing the IN to FTS5 as rowid lookups: the scan walks the postings once and checks
# each match against the set, which costs less than joining memories for every match.
IN_ROWS = "+memory_fts.rowid IN (SELECT m.id FROM memories AS m WHERE {})"


@attrs.frozen
class CorpusStats:
    """What bm25 needs to know about the corpus: rows, their total tokens, hits per phrase."""

    rows: int
    tokens: int
    hits: tuple[int, ...]

    @property
    def avgdl(self) -> float:
        return self.tokens / self.rows

    def idf(self) -> tuple[float, ...]:
        values = []
        for hit in self.hits:
            idf = math.log((self.rows - hit + 0.5) / (hit + 0.5))
            values.append(_IDF_FLOOR if idf <= 0.0 else idf)
        return tuple(values)

    def encode(self) -> bytes:
        """The statistics as one blob binding for :func:`rank`: avgdl, then each IDF."""
        return array("d", (self.avgdl, *self.idf())).tobytes()


def rank(api: apsw.FTS5ExtensionApi, *args: apsw.SQLiteValue) -> float:
    """bm25 of the current row, with the statistics given as :meth:`CorpusStats.encode`
    and, optionally, the three column weights after them (else WEIGHTS).

    Lower is better, as with the built-in. Weighted frequency, row length over all columns,
    k1 and b, and the order of the floating-point operations all follow fts5_aux.c, so the
    scores agree with the built-in when the statistics do.
    """
    decoded = api.aux_data
    if decoded is None:
        encoded, weights = args[0] if args else None, _weights(args[1:])
        if not isinstance(encoded, bytes):
            raise apsw.MisuseError("venom_bm25 takes the encoded statistics as a blob")
        values = array("d")
        values.frombytes(encoded)
        decoded = api.aux_data = (values[0], tuple(values[1:]), weights)
    avgdl, idfs, weights = decoded
    if len(idfs) != api.phrase_count:
        raise apsw.MisuseError("venom_bm25: statistics do not match the query's phrases")
    length = api.column_size(-1)
    freqs = [_weighted_freq(api, phrase, weights) for phrase in range(len(idfs))]
    return _score(idfs, freqs, length, avgdl)


def _weights(args: Sequence[apsw.SQLiteValue]) -> Weights:
    """Column weights passed to an auxiliary function after its other arguments, if any."""
    if not args:
        return WEIGHTS
    if len(args) != 3 or not all(isinstance(w, float | int) for w in args):
        raise apsw.MisuseError("bm25 column weights are three numbers")
    title, content, tags = (float(w) for w in args)  # type: ignore[arg-type]
    return (title, content, tags)


def _weighted_freq(api: apsw.FTS5ExtensionApi, phrase: int, weights: Weights) -> float:
    freq = 0.0
    for weight, offsets in zip(weights, api.phrase_locations(phrase), strict=True):
        freq += weight * len(offsets)
    return freq


def _score(idfs: Sequence[float], freqs: Sequence[float], length: float, avgdl: float) -> float:
    """fts5_aux.c's bm25 of one row, operation for operation (lower is better)."""
    score = 0.0
    for idf, freq in zip(idfs, freqs, strict=True):
        score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / avgdl)))
    return -1.0 * score


def _row_tokens(api: apsw.FTS5ExtensionApi, *_args: apsw.SQLiteValue) -> int:
    return api.column_size(-1)


def _row_freqs(api: apsw.FTS5ExtensionApi, *args: apsw.SQLiteValue) -> bytes:
    """The row's length, then each phrase's frequency weighted by ``args`` (the column
    weights, else WEIGHTS), as doubles."""
    weights = _weights(args)
    values = array("d", (api.column_size(-1),))
    values.extend(_weighted_freq(api, phrase, weights) for phrase in range(api.phrase_count))
    return values.tobytes()


def _blob(value: apsw.SQLiteValue) -> bytes:
    if not isinstance(value, bytes):
        raise apsw.MisuseError(f"{_ROW_FREQS} returned {type(value).__name__}, not a blob")
    return value


def register(connection: apsw.Connection) -> None:
    """Make :func:`rank` and the row helpers available on a connection."""
    connection.register_fts5_function(RANK_FUNCTION, rank)
    connection.register_fts5_function(_ROW_TOKENS, _row_tokens)
    connection.register_fts5_function(_ROW_FREQS, _row_freqs)


# Per read connection: the readable corpus's (rows, tokens), valid while the connection's
# data_version stays the same, i.e. until some other connection commits. Measuring it walks
# every readable row, which dominated a restricted search on a large store.
_SIZES: weakref.WeakKeyDictionary[
    apsw.Connection, tuple[int, dict[tuple[object, ...], tuple[int, int]]]
] = weakref.WeakKeyDictionary()


def _corpus_size(connection: apsw.Connection, source: str, readable: Predicate) -> tuple[int, int]:
    version = int(connection.execute("PRAGMA data_version").get)
    cached_version, sizes = _SIZES.get(connection, (None, {}))
    if cached_version != version:
        sizes = {}
        _SIZES[connection] = (version, sizes)
    key = (readable.sql, *readable.params)
    size = sizes.get(key)
    if size is None:
        rows = total = 0
        for (length,) in connection.execute(
            f"SELECT {_ROW_TOKENS}(memory_fts) FROM {source}", readable.params
        ):
            rows += 1
            total += int(length)
        size = sizes[key] = (rows, total)
    return size


def corpus_stats(
    connection: apsw.Connection, tokens: Sequence[str], readable: Predicate
) -> CorpusStats:
    """bm25's statistics over the live rows ``readable`` admits (alias ``m`` for memories).

    The FTS index holds exactly the live rows (the schema's triggers keep it so), so live rows
    of ``memories`` that ``readable`` admits are the caller's corpus. Row lengths
    come from FTS5's own per-row token counts, so they match what the built-in uses.
    """
    # Only live rows: a scan of an external-content FTS5 table without MATCH walks the content
    # table, and asking FTS5 for the length of a row it does not index reports corruption.
    source = (
        "memory_fts JOIN memories AS m ON m.id = memory_fts.rowid"
        f" WHERE m.deleted IS NULL AND ({readable.sql})"
    )
    rows, total = _corpus_size(connection, source, readable)
    live = f"m.deleted IS NULL AND ({readable.sql})"
    hits: dict[str, int] = {}
    for token in tokens:
        if token not in hits:
            hits[token] = connection.execute(
                f"SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?"
                f" AND {IN_ROWS.format(live)}",
                (fts_match_expression([token]), *readable.params),
            ).get
    return CorpusStats(rows=rows, tokens=total, hits=tuple(hits[t] for t in tokens))


def rank_readable(
    connection: apsw.Connection,
    match: str,
    readable: Predicate,
    limit: int,
    weights: Weights = WEIGHTS,
) -> list[tuple[int, float]]:
    """The best ``limit`` readable live rows matching ``match``, with bm25 over the readable
    corpus, in one pass, for a search filtered by the readable set alone.

    The candidates are then exactly the caller's corpus, so each phrase's row count is the
    number of candidates it occurs in: one scan yields every candidate's length and phrase
    frequencies, and the counts follow from them, where :func:`corpus_stats` would scan each
    phrase's matches again. Scores and order are :func:`rank`'s, with the same operations
    on the same values; ties go to the highest rowid.
    """
    source = (
        "memory_fts JOIN memories AS m ON m.id = memory_fts.rowid"
        f" WHERE m.deleted IS NULL AND ({readable.sql})"
    )
    rows, total = _corpus_size(connection, source, readable)
    if rows == 0:
        return []
    live = f"m.deleted IS NULL AND ({readable.sql})"
    found = connection.execute(
        f"SELECT memory_fts.rowid, {_ROW_FREQS}(memory_fts, ?, ?, ?) FROM memory_fts"
        f" WHERE memory_fts MATCH ? AND {IN_ROWS.format(live)}",
        (*map(float, weights), match, *readable.params),
    ).fetchall()
    if not found:
        return []
    import numpy as np  # only here: the store package stays free of numpy for the CLI

    rowids = np.fromiter((row[0] for row in found), dtype=np.int64, count=len(found))
    values = np.frombuffer(b"".join(_blob(row[1]) for row in found), dtype=np.float64)
    values = values.reshape(len(found), -1)
    lengths, freqs = values[:, 0], values[:, 1:]
    hits = tuple(int(n) for n in np.count_nonzero(freqs > 0, axis=0))
    stats = CorpusStats(rows=rows, tokens=total, hits=hits)
    # :func:`_score` over every row at once: the same IEEE operations in the same order
    # (numpy's elementwise arithmetic is correctly rounded), so the same scores.
    avgdl = stats.avgdl
    score = np.zeros(len(found))
    for phrase, idf in enumerate(stats.idf()):
        freq = freqs[:, phrase]
        score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * lengths / avgdl)))
    score = -1.0 * score
    order = np.lexsort((-rowids, score))[:limit]
    return [(int(rowids[i]), -float(score[i])) for i in order]
