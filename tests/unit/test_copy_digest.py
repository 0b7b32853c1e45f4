"""store copy's canonical row encoding and table order (copy/digest.py, copy/ends.py)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from venom_mem_adapters.copy.digest import TableDigest, as_text, encode_value
from venom_mem_adapters.copy.ends import Table, in_reference_order


def _hash(*rows: tuple[object, ...]) -> str:
    digest = TableDigest()
    for row in rows:
        digest.add(row)
    return digest.sha256


def test_what_the_two_drivers_return_for_one_value_encodes_alike() -> None:
    assert encode_value(b"\x00\xff") == encode_value(memoryview(b"\x00\xff"))
    assert encode_value(7) == encode_value(decimal.Decimal(7))
    assert encode_value(True) == encode_value(1)
    assert encode_value({"b": 1, "a": "ü"}) == encode_value('{"a":"ü","b":1}')
    when = dt.datetime(2026, 12, 3, 15, 4, 5, 123000, tzinfo=dt.UTC)
    assert encode_value(when) == encode_value("2026-12-03T15:04:05.123000Z")
    assert as_text({"b": [1, 2]}) == '{"b":[1,2]}'


def test_values_of_different_kinds_or_bounds_never_collide() -> None:
    assert len({encode_value(v) for v in (None, "", b"", 0, 0.0, "0", b"0")}) == 7
    assert _hash(("ab", "c")) != _hash(("a", "bc"))
    assert _hash(("a",), ("b",)) != _hash(("a", "b"))
    assert _hash() != _hash(())
    with pytest.raises(TypeError):
        encode_value(object())


def test_each_table_comes_after_the_tables_it_references() -> None:
    def table(name: str, *refs: str) -> Table:
        return Table(name=name, columns=("id",), key=("id",), references=frozenset(refs))

    tables = {
        t.name: t
        for t in (
            table("memory_versions", "memories"),
            table("memories", "sessions"),
            table("sessions", "sessions"),
            table("links", "memories"),
            table("clients"),
        )
    }
    assert [t.name for t in in_reference_order(tables)] == [
        "clients",
        "sessions",
        "memories",
        "links",
        "memory_versions",
    ]
    cycle = {"a": table("a", "b"), "b": table("b", "a")}
    with pytest.raises(ValueError, match="cycle"):
        in_reference_order(cycle)
