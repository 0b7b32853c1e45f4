"""What FTS5's index holds about the rows a caller may read, read in bulk by SQLite's own C.

A restricted caller's bm25 (bm25.py, docs/adr/0003) needs, for each readable row that
matches, its length in tokens and each phrase's weighted frequency, and for the readable
corpus its row count and total tokens. Asking FTS5's extension API for them costs a call
into Python per matching row, which made such a search about twice the owner's. This module
reads the same numbers without one:

- Term instances come from an ``fts5vocab`` table of type ``instance`` over ``memory_fts``
  (one row per occurrence: term, row, column, offset), created in each connection's
  ``temp`` schema, so the store file's schema is unchanged. ``group_concat`` hands a term's
  rows over as one string, which numpy parses; a phrase of several terms is matched from the
  offsets as FTS5 matches it (every term at the next position of the same column).
- Row lengths come from FTS5's ``memory_fts_docsize`` table, one blob of varints per row
  (the token count of each column), concatenated in SQL and decoded in numpy, and are kept
  per readable set until the next commit (:func:`readable_corpus`).

The query's phrases are tokenized with the table's own tokenizer through SQLite's FTS5 API,
as FTS5 tokenizes a quoted string of a MATCH. What this module can't read exactly (a
tokenizer answer with colocated tokens, a token longer than FTS5 keeps) goes back to the
extension API for that phrase alone (:func:`phrase_by_api`). The tests compare the numbers
with FTS5's own (``column_size`` and the built-in ``bm25``), deletions and updates included.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import apsw
import attrs

from .filters import Predicate

if TYPE_CHECKING:  # numpy is imported when a restricted search runs, not with the store
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]

__all__ = [
    "COLUMNS",
    "INSTANCES",
    "TOKENIZER",
    "PhrasePostings",
    "ReadableCorpus",
    "attach",
    "decode_sizes",
    "parse_ints",
    "phrase_postings",
    "readable_corpus",
]

COLUMNS = ("title", "content", "tags")  # memory_fts's columns, in order (schema.py)
# memory_fts's "tokenize = 'porter unicode61 remove_diacritics 2'" (schema.py), as the name
# and arguments of SQLite's fts5_api tokenizer lookup.
TOKENIZER = ("porter", ("unicode61", "remove_diacritics", "2"))
INSTANCES = "temp.venom_fts_instance"
# fts5Int.h FTS5_MAX_TOKEN_SIZE: FTS5 cuts longer tokens to this many bytes, when it indexes
# and when it parses a query; the cut can fall inside a UTF-8 character, which a text
# binding can't name, so such a phrase is read through the extension API instead.
_MAX_TOKEN_BYTES = 32768
_COLUMN_INDEX = "CASE col {} END".format(
    " ".join(f"WHEN '{name}' THEN {n}" for n, name in enumerate(COLUMNS))
)
# Readable corpora kept per connection: at most this many, and about this many rows in all
# (16 bytes a row), the one in use always kept.
_CORPORA_PER_CONNECTION = 8
_CACHED_ROWS_PER_CONNECTION = 1_000_000
_PLACE = [("r", "<i8"), ("c", "<i8"), ("o", "<i8")]  # rowid, column, offset of a phrase start
_PACK = 4  # rowid * _PACK + column index: one integer for both (more than len(COLUMNS))
_PACKED_ROWIDS = 1 << 60
_KEY_ROWIDS, _KEY_STARTS = 1 << 36, 1 << 24  # (rowid * 4 + column) << 24 | start fits 63 bits


def attach(connection: apsw.Connection) -> None:
    """Create the ``fts5vocab`` table in the connection's ``temp`` schema (not in the file)."""
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {INSTANCES}"
        " USING fts5vocab(main, memory_fts, instance)"
    )


def parse_ints(text: object) -> Ints:
    """The integers of a ``group_concat(..., ' ')`` (``NULL`` when it saw no row)."""
    import numpy as np

    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(str(text), dtype=np.int64, sep=" ")


# -- row lengths -------------------------------------------------------------------------------


def decode_sizes(blob: bytes, rows: int) -> Ints:
    """Each row's length (tokens over all columns) from its docsize blobs laid end to end.

    FTS5 writes one SQLite varint per column (big-endian groups of 7 bits, the high bit set
    on every byte but the last); a column's token count fits five bytes.
    """
    import numpy as np

    data = np.frombuffer(blob, dtype=np.uint8)
    last = np.flatnonzero(data < 0x80)
    if len(last) != rows * len(COLUMNS) or (len(data) and data[-1] >= 0x80):
        raise apsw.CorruptError("memory_fts_docsize does not hold one size per column per row")
    if len(data) == rows * len(COLUMNS):  # every size under 128: one byte each
        short: Ints = data.reshape(rows, len(COLUMNS)).sum(axis=1, dtype=np.int64)
        return short
    first = np.concatenate((np.zeros(1, dtype=np.int64), last[:-1] + 1))
    widths = last - first + 1
    if widths.max() > 5:
        raise apsw.CorruptError("memory_fts_docsize holds a size beyond 32 bits")
    byte_of = np.repeat(np.arange(len(last)), widths)  # which varint each byte belongs to
    shifts = 7 * (last[byte_of] - np.arange(len(data)))
    sizes: Ints = np.add.reduceat((data & 0x7F).astype(np.int64) << shifts, first)
    lengths: Ints = sizes.reshape(rows, len(COLUMNS)).sum(axis=1)
    return lengths


@attrs.frozen(eq=False)
class ReadableCorpus:
    """The live rows a caller may read: their rowids (ascending), lengths in tokens, and the
    sum of those lengths."""

    ids: Ints
    lengths: Ints
    tokens: int = attrs.field(init=False)

    @tokens.default
    def _total(self) -> int:
        return int(self.lengths.sum())

    @property
    def rows(self) -> int:
        return len(self.ids)

    def positions(self, rowids: Ints) -> tuple[Ints, npt.NDArray[np.bool_]]:
        """Where each of ``rowids`` is in :attr:`ids`, and which of them are there at all."""
        import numpy as np

        at = np.searchsorted(self.ids, rowids)
        inside = at < len(self.ids)
        inside[inside] = self.ids[at[inside]] == rowids[inside]
        return at, inside


def _measure(connection: apsw.Connection, readable: Predicate) -> ReadableCorpus:
    import numpy as np

    # The FTS index holds exactly the live rows (the schema's triggers keep it so); a live
    # row without a size record would be a damaged index, which count(d.id) shows.
    rows, sized, ids, sizes = connection.execute(
        "SELECT count(*), count(d.id), group_concat(m.id, ' '), group_concat(hex(d.sz), '')"
        " FROM memories AS m LEFT JOIN memory_fts_docsize AS d ON d.id = m.id"
        f" WHERE m.deleted IS NULL AND ({readable.sql})",
        readable.params,
    ).fetchall()[0]
    if rows != sized:
        raise apsw.CorruptError("a live memory has no size record in memory_fts_docsize")
    found = parse_ints(ids)
    lengths = decode_sizes(bytes.fromhex(str(sizes or "")), len(found))
    order = np.argsort(found, kind="stable")
    return ReadableCorpus(ids=found[order], lengths=lengths[order])


# Per connection: the corpora measured since the last commit that connection can see, by
# readable set. PRAGMA data_version moves when another connection commits; the connection's
# own commits (the writer's, in single-connection mode) show in total_changes.
_CORPORA: weakref.WeakKeyDictionary[
    apsw.Connection, tuple[tuple[int, int], OrderedDict[tuple[object, ...], ReadableCorpus]]
] = weakref.WeakKeyDictionary()


def readable_corpus(connection: apsw.Connection, readable: Predicate) -> ReadableCorpus:
    """The live rows ``readable`` admits (alias ``m`` for memories), measured once per commit.

    Inside a write transaction nothing is cached: what it sees may still be rolled back.
    """
    if connection.txn_state("main") == apsw.SQLITE_TXN_WRITE:
        return _measure(connection, readable)
    version = (int(connection.execute("PRAGMA data_version").get), connection.total_changes())
    cached_version, corpora = _CORPORA.get(connection, (None, OrderedDict()))
    if cached_version != version:
        corpora = OrderedDict()
        _CORPORA[connection] = (version, corpora)
    key = (readable.sql, *readable.params)
    corpus = corpora.get(key)
    if corpus is None:
        corpus = corpora[key] = _measure(connection, readable)
        while len(corpora) > 1 and (
            len(corpora) > _CORPORA_PER_CONNECTION
            or sum(c.rows for c in corpora.values()) > _CACHED_ROWS_PER_CONNECTION
        ):
            corpora.popitem(last=False)
    else:
        corpora.move_to_end(key)
    return corpus


# -- phrases -----------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class PhrasePostings:
    """The rows a phrase occurs in (ascending) and its weighted frequency in each."""

    rowids: Ints
    freqs: Floats


def query_terms(connection: apsw.Connection, phrase: str) -> list[str] | None:
    """The terms FTS5 makes of ``phrase`` as a quoted string in a MATCH, or ``None`` when they
    are not plain terms this module can look up (see the module docstring)."""
    tokenizer = connection.fts5_tokenizer(TOKENIZER[0], list(TOKENIZER[1]))
    tokens = tokenizer(phrase.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False)
    terms = []
    for token in tokens:
        if len(token) != 1 or len(token[0].encode()) >= _MAX_TOKEN_BYTES:
            return None
        terms.append(token[0])
    return terms


def _instances(connection: apsw.Connection, term: str, *, offsets: bool) -> tuple[Ints, ...]:
    """Every occurrence of ``term`` in the index, in the index's order (rowid, column,
    offset): rowids and column indexes (and offsets).

    A rowid and its column travel as one integer, ``rowid * 4 + column``, which is cheaper in
    SQL than two lists, when no rowid reaches 2**60 (past that it would overflow).
    """
    import numpy as np

    (largest,) = connection.execute("SELECT max(id) FROM memories").fetchall()[0]
    packed = int(str(largest or 0)) < _PACKED_ROWIDS
    wanted = (
        f"group_concat(doc * {_PACK} + {_COLUMN_INDEX}, ' ')"
        if packed
        else f"group_concat(doc, ' '), group_concat({_COLUMN_INDEX}, '')"
    )
    if offsets:
        wanted += ", group_concat(offset, ' ')"
    row = connection.execute(
        f"SELECT {wanted} FROM {INSTANCES} WHERE term = ?", (term,)
    ).fetchall()[0]
    if packed:
        both = parse_ints(row[0])
        rowids, columns = both // _PACK, both % _PACK
    else:
        rowids = parse_ints(row[0])
        columns = np.frombuffer(str(row[1] or "").encode(), dtype=np.uint8).astype(np.int64) - 48
    return (rowids, columns, parse_ints(row[-1])) if offsets else (rowids, columns)


def _weighted(rowids: Ints, columns: Ints, weights: Sequence[float]) -> PhrasePostings:
    """Sum each occurrence's column weight per row (exact: the weights are small integers)."""
    import numpy as np

    if not len(rowids):
        return PhrasePostings(rowids=rowids, freqs=np.zeros(0))
    if not bool(np.all(rowids[1:] >= rowids[:-1])):
        order = np.argsort(rowids, kind="stable")  # fts5vocab yields rowid order; in case
        rowids, columns = rowids[order], columns[order]
    new_row = rowids[1:] != rowids[:-1]
    starts = np.flatnonzero(np.concatenate(([True], new_row)))
    row_of = np.concatenate(([0], np.cumsum(new_row)))
    per_column = np.bincount(row_of * len(COLUMNS) + columns, minlength=len(starts) * len(COLUMNS))
    counts = per_column.reshape(len(starts), len(COLUMNS)).astype(np.float64)
    # As fts5_aux.c adds weights up for a row: weight times count, column by column.
    freqs = np.zeros(len(starts))
    for column, weight in enumerate(weights):
        freqs = freqs + weight * counts[:, column]
    return PhrasePostings(rowids=rowids[starts], freqs=freqs)


def _places(found: Sequence[tuple[Ints, Ints, Ints]]) -> list[npt.NDArray[Any]]:
    """Each (rowid, column, start) as one sortable key: integers when every one fits, else
    records."""
    import numpy as np

    if all(
        not len(rowids) or (int(rowids.max()) < _KEY_ROWIDS and int(starts.max()) < _KEY_STARTS)
        for rowids, _, starts in found
    ):
        shift = _KEY_STARTS.bit_length() - 1
        return [((r * _PACK + c) << shift) | o for r, c, o in found]
    places = []
    for rowids, columns, starts in found:
        record = np.empty(len(rowids), dtype=_PLACE)
        record["r"], record["c"], record["o"] = rowids, columns, starts
        places.append(record)
    return places


def _phrase_starts(connection: apsw.Connection, terms: Sequence[str]) -> tuple[Ints, Ints]:
    """Rowid and column of every place all of ``terms`` follow one another, as FTS5 matches
    a phrase: term i at offset start + i of the same column, every such start counted.
    :func:`venom_mem_core.fts.phrase_starts`' rule, on the whole index's arrays at once."""
    import numpy as np

    found = []
    for step, term in enumerate(terms):
        rowids, columns, offsets = _instances(connection, term, offsets=True)
        kept = offsets >= step  # a start before the column's first token matches nothing
        found.append((rowids[kept], columns[kept], offsets[kept] - step))
        if not kept.any():
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    places = _places(found)
    common = places[0]
    for other in places[1:]:  # each term's places are distinct: one occurrence each
        common = np.intersect1d(common, other, assume_unique=True)
    chosen = np.isin(places[0], common, assume_unique=True)
    rowids, columns, _ = found[0]
    return rowids[chosen], columns[chosen]


def phrase_postings(
    connection: apsw.Connection, phrase: str, weights: Sequence[float]
) -> PhrasePostings | None:
    """Where ``phrase`` (one quoted string of a MATCH) occurs in the whole index, or ``None``
    when it has to be read through the extension API."""
    import numpy as np

    terms = query_terms(connection, phrase)
    if terms is None:
        return None
    if not terms:  # nothing to match: FTS5 finds no row for it
        return _weighted(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), weights)
    if len(terms) == 1:
        rowids, columns = _instances(connection, terms[0], offsets=False)
    else:
        rowids, columns = _phrase_starts(connection, terms)
    return _weighted(rowids, columns, weights)
