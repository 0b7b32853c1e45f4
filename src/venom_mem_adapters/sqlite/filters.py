"""MemoryFilter, SessionFilter and Access as SQL predicates with their bindings.

The filter runs inside the same statement as the ranking (RFC-0020 section 5, step 1), so an
unreadable row never reaches ORDER BY or LIMIT. Sets travel as one JSON array binding read
with ``json_each``, so the SQL text does not depend on how many spaces or IDs a grant names
and the statement cache keeps working. Tags are stored space-separated: a tag is present when
``' ' || tags || ' '`` contains ``' ' || tag || ' '``; branches are stored and matched the
same way, and a memory with none (``''``) passes every branch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import attrs

from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, SessionFilter

__all__ = ["Predicate", "access_predicate", "memory_predicate", "session_predicate"]


@attrs.frozen
class Predicate:
    """A boolean SQL expression and the values bound to its ``?`` in order."""

    sql: str
    params: tuple[Any, ...] = ()

    @classmethod
    def all_of(cls, parts: Iterable[Predicate]) -> Predicate:
        return cls._join(parts, " AND ", empty="1")

    @classmethod
    def any_of(cls, parts: Iterable[Predicate]) -> Predicate:
        return cls._join(parts, " OR ", empty="0")

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
    return Predicate(f"instr(' ' || {column} || ' ', ' ' || ? || ' ') > 0", (value,))


def _in(column: str, values: Iterable[Any]) -> Predicate:
    return Predicate(f"{column} IN (SELECT value FROM json_each(?))", (json.dumps(sorted(values)),))


def access_predicate(access: Access, *, alias: str, with_space: bool = True) -> Predicate:
    """Rows readable through ``access``: everything, a listed space or ID, or the caller's own."""
    if access.everything:
        return Predicate("1")
    parts: list[Predicate] = []
    if with_space and access.spaces:
        parts.append(_in(f"{alias}.space", access.spaces))
    if access.ids:
        parts.append(_in(f"{alias}.id", access.ids))
    if access.owner is not None:
        parts.append(Predicate(f"{alias}.principal = ?", (access.owner,)))
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
        parts.append(Predicate(f"{alias}.harness = ?", (where.harness,)))
    if where.harness_session is not None:
        parts.append(Predicate(f"{alias}.harness_session = ?", (where.harness_session,)))
    if where.parent is not None:
        parts.append(Predicate(f"{alias}.parent = ?", (where.parent,)))
    return Predicate.all_of(parts)
