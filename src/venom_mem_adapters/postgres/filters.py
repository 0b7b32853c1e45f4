"""The SQL predicates (:mod:`venom_mem_adapters.sql`) in PostgreSQL's dialect:
``%s`` placeholders, ``TRUE``/``FALSE``, sets as one array binding (``= ANY(%s)``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..sql import Dialect, Predicate, SqlFilters

__all__ = ["FILTERS", "Predicate"]


def _in(column: str, values: Iterable[Any]) -> Predicate:
    listed = sorted(values)
    if not listed:  # an empty array has no element type to bind as
        return Predicate("FALSE")
    return Predicate(f"{column} = ANY(%s)", (listed,))


FILTERS = SqlFilters(
    Dialect(
        param="%s",
        true="TRUE",
        false="FALSE",
        word_in="strpos(' ' || {column} || ' ', ' ' || {param} || ' ') > 0",
        in_set=_in,
    )
)
