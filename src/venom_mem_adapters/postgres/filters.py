"""MemoryFilter, SessionFilter and Access as PostgreSQL predicates with their bindings.

The same predicates as the SQLite store's (``sqlite/filters.py``), written for PostgreSQL:
sets travel as one array binding (``= ANY(%s)``), so the SQL text does not depend on how many
spaces or IDs a grant names; tags and branches are stored space-separated and a word is
present when ``' ' || column || ' '`` contains ``' ' || word || ' '``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, SessionFilter

__all__ = ["Predicate", "access_predicate", "memory_predicate", "session_predicate"]


@attrs.frozen
class Predicate:
    """A boolean SQL expression and the values bound to its ``%s`` in order."""

    sql: str
    params: tuple[Any, ...] = ()

    @classmethod
    def all_of(cls, parts: Iterable[Predicate]) -> Predicate:
        return cls._join(parts, " AND ", empty="TRUE")

    @classmethod
    def any_of(cls, parts: Iterable[Predicate]) -> Predicate:
        return cls._join(parts, " OR ", empty="FALSE")

    @classmethod
    def _join(cls, parts: Iterable[Predicate], operator: str, *, empty: str) -> Predicate:
        parts = list(parts)
        if not parts:
            return cls(empty)
        return cls(
            operator.join(f"({p.sql})" for p in parts),
            tuple(v for p in parts for v in p.params),
        )


def _listed(column: str, value: str) -> Predicate:
    """``value`` is one of the space-separated words in ``column``."""
    return Predicate(f"strpos(' ' || {column} || ' ', ' ' || %s || ' ') > 0", (value,))


def _in(column: str, values: Iterable[Any]) -> Predicate:
    listed = sorted(values)
    if not listed:  # an empty array has no element type to bind as
        return Predicate("FALSE")
    return Predicate(f"{column} = ANY(%s)", (listed,))


def access_predicate(access: Access, *, alias: str, with_space: bool = True) -> Predicate:
    """Rows readable through ``access``: everything, a listed space or ID, or the caller's own."""
    if access.everything:
        return Predicate("TRUE")
    parts: list[Predicate] = []
    if with_space and access.spaces:
        parts.append(_in(f"{alias}.space", access.spaces))
    if access.ids:
        parts.append(_in(f"{alias}.id", access.ids))
    if access.owner is not None:
        parts.append(Predicate(f"{alias}.principal = %s", (access.owner,)))
    return Predicate.any_of(parts)


def memory_predicate(where: MemoryFilter, *, alias: str = "m") -> Predicate:
    parts: list[Predicate] = []
    if not where.include_deleted:
        parts.append(Predicate(f"{alias}.deleted IS NULL"))
    parts.append(access_predicate(where.access, alias=alias))
    if where.spaces is not None:
        parts.append(_in(f"{alias}.space", where.spaces))
    if where.kinds is not None:
        parts.append(_in(f"{alias}.kind", where.kinds))
    for tag in sorted(where.tags):
        parts.append(_listed(f"{alias}.tags", tag))
    if where.sessions is not None:
        parts.append(_in(f"{alias}.session", where.sessions))
    if where.importances is not None:
        parts.append(_in(f"{alias}.importance", where.importances))
    if where.branch is not None:
        on_branch = _listed(f"{alias}.branches", where.branch)
        parts.append(Predicate.any_of([Predicate(f"{alias}.branches = ''"), on_branch]))
    return Predicate.all_of(parts)


def session_predicate(where: SessionFilter, *, alias: str = "s") -> Predicate:
    parts = [access_predicate(where.access, alias=alias, with_space=False)]
    if where.harness is not None:
        parts.append(Predicate(f"{alias}.harness = %s", (where.harness,)))
    if where.harness_session is not None:
        parts.append(Predicate(f"{alias}.harness_session = %s", (where.harness_session,)))
    if where.parent is not None:
        parts.append(Predicate(f"{alias}.parent = %s", (where.parent,)))
    return Predicate.all_of(parts)
