"""The SQL predicates (:mod:`venom_mem_adapters.sql`) in SQLite's dialect: ``?``
placeholders, ``1``/``0``, sets as one JSON array binding read with ``json_each``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..sql import Dialect, Predicate, SqlFilters

__all__ = ["FILTERS", "Predicate"]


def _in(column: str, values: Iterable[Any]) -> Predicate:
    return Predicate(f"{column} IN (SELECT value FROM json_each(?))", (json.dumps(sorted(values)),))


FILTERS = SqlFilters(
    Dialect(
        param="?",
        true="1",
        false="0",
        word_in="instr(' ' || {column} || ' ', ' ' || {param} || ' ') > 0",
        in_set=_in,
    )
)
