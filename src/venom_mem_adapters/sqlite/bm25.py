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
    "register",
]

K1 = 1.2
B = 0.75
WEIGHTS = (5.0, 1.0, 3.0)  # title, content, tags (RFC-0020 section 5)
RANK_FUNCTION = "venom_bm25"
_ROW_TOKENS = "venom_row_tokens"
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
    """bm25 of the current row, with the statistics given as :meth:`CorpusStats.encode`.

    Lower is better, as with the built-in. Weighted frequency, row length over all columns,
    k1 and b, and the order of the floating-point operations all follow fts5_aux.c, so the
    scores agree with the built-in when the statistics do.
    """
    decoded = api.aux_data
    if decoded is None:
        (encoded,) = args
        if not isinstance(encoded, bytes):
            raise apsw.MisuseError("venom_bm25 takes the encoded statistics as a blob")
        values = array("d")
        values.frombytes(encoded)
        decoded = api.aux_data = (values[0], tuple(values[1:]))
    avgdl, idfs = decoded
    if len(idfs) != api.phrase_count:
        raise apsw.MisuseError("venom_bm25: statistics do not match the query's phrases")
    length = api.column_size(-1)
    score = 0.0
    for phrase, idf in enumerate(idfs):
        freq = 0.0
        for weight, offsets in zip(WEIGHTS, api.phrase_locations(phrase), strict=True):
            freq += weight * len(offsets)
        score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / avgdl)))
    return -1.0 * score


def _row_tokens(api: apsw.FTS5ExtensionApi, *_args: apsw.SQLiteValue) -> int:
    return api.column_size(-1)


def register(connection: apsw.Connection) -> None:
    """Make :func:`rank` and the row-length helper available on a connection."""
    connection.register_fts5_function(RANK_FUNCTION, rank)
    connection.register_fts5_function(_ROW_TOKENS, _row_tokens)


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
