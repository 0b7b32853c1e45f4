"""A table's content hash, computed the same way on SQLite and PostgreSQL.

Each row is encoded value by value in the table's columns sorted by name, each value tagged by
its kind so no two different rows share an encoding: ``N`` null, ``I`` an integer (a bool as
0/1, a whole Decimal), ``F`` a float (``repr``, which round-trips a float64), ``T`` text
(UTF-8, with its length), ``B`` bytes (with its length). What the two drivers return for one
stored value differs only in type (apsw's ``bytes``, psycopg's ``bytes`` or ``memoryview``;
a JSON column as text or as parsed JSON; a timestamp as text or as a ``datetime``), and each
is brought to one form here: JSON as its canonical text (sorted keys, no spaces, not
ASCII-escaped), a ``datetime`` as RFC 3339 text. Rows go in key order, which both stores
compare bytewise (SQLite's BINARY collation, PostgreSQL's ``COLLATE "C"``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence

__all__ = ["TableDigest", "as_text", "encode_value"]


def _sized(tag: bytes, data: bytes) -> bytes:
    return tag + str(len(data)).encode("ascii") + b":" + data


def as_text(value: object) -> object:
    """A value a text column can hold: parsed JSON (a jsonb column's) as its canonical text, a
    ``datetime`` as RFC 3339 UTC; anything else as it is. What a SQLite target writes, so the
    row reads back as it hashed."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def encode_value(value: object) -> bytes:
    """One value's canonical bytes; ``TypeError`` for a kind no store column holds."""
    if value is None:
        return b"N"
    if isinstance(value, bool):
        return b"I%d;" % int(value)
    if isinstance(value, int):
        return b"I%d;" % value
    if isinstance(value, decimal.Decimal) and value == value.to_integral_value():
        return b"I%d;" % int(value)
    if isinstance(value, float):
        return b"F" + repr(value).encode("ascii") + b";"
    if isinstance(value, str):
        return _sized(b"T", value.encode("utf-8"))
    if isinstance(value, bytes | bytearray | memoryview):
        return _sized(b"B", bytes(value))
    if isinstance(value, dt.datetime | dict | list):
        return _sized(b"T", str(as_text(value)).encode("utf-8"))
    raise TypeError(f"no canonical encoding for a {type(value).__name__}")


class TableDigest:
    """Row count and SHA-256 of a table's rows, fed one row at a time (never held)."""

    def __init__(self) -> None:
        self.rows = 0
        self._hash = hashlib.sha256()

    def add(self, row: Sequence[object]) -> None:
        self.rows += 1
        self._hash.update(b"R%d;" % len(row))
        for value in row:
            self._hash.update(encode_value(value))

    def passing(self, rows: Iterable[Sequence[object]]) -> Iterator[Sequence[object]]:
        """``rows`` unchanged, each added on its way through."""
        for row in rows:
            self.add(row)
            yield row

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()
