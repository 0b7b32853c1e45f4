"""MemoryFilter, SessionFilter and Access as SQL predicates with their bindings, once for
every SQL store; each store's ``filters`` module supplies only its :class:`Dialect`.

The filter runs inside the same statement as the ranking (RFC-0020 section 5, step 1), so an
unreadable row never reaches ORDER BY or LIMIT. A set travels as one binding (a JSON array in
SQLite, an array in PostgreSQL), so the SQL text does not depend on how many spaces or IDs a
grant names and the statement cache keeps working. Tags are stored space-separated: a tag is
present when ``' ' || tags || ' '`` contains ``' ' || tag || ' '``; branches are stored and
matched the same way, and a memory with none (``''``) passes every branch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, SessionFilter

__all__ = ["Dialect", "Predicate", "SqlFilters"]


@attrs.frozen
class Predicate:
    """A boolean SQL expression and the values bound to its placeholders in order."""

    sql: str
    params: tuple[Any, ...] = ()

    @classmethod
    def all_of(cls, parts: Iterable[Predicate], *, empty: str) -> Predicate:
        """``empty`` is the dialect's true, the conjunction of nothing."""
        return cls._join(parts, " AND ", empty=empty)

    @classmethod
    def any_of(cls, parts: Iterable[Predicate], *, empty: str) -> Predicate:
        """``empty`` is the dialect's false, the disjunction of nothing."""
        return cls._join(parts, " OR ", empty=empty)

    @classmethod
    def _join(cls, parts: Iterable[Predicate], operator: str, *, empty: str) -> Predicate:
        parts = list(parts)
        if not parts:
            return cls(empty)
        return cls(
            operator.join(f"({p.sql})" for p in parts),
            tuple(v for p in parts for v in p.params),
        )


@attrs.frozen(kw_only=True)
class Dialect:
    """How one engine spells what the predicates need.

    ``param`` is its placeholder; ``true`` and ``false`` its literals; ``word_in`` a template
    (``{column}``, ``{param}``) true when the bound word is one of ``column``'s
    space-separated words; ``in_set(column, values)`` the predicate for a set binding.
    """

    param: str
    true: str
    false: str
    word_in: str
    in_set: Callable[[str, Iterable[Any]], Predicate]


@attrs.frozen
class SqlFilters:
    """The predicates, written once, in one :class:`Dialect`."""

    dialect: Dialect

    def _equals(self, column: str, value: Any) -> Predicate:
        return Predicate(f"{column} = {self.dialect.param}", (value,))

    def _listed(self, column: str, value: str) -> Predicate:
        """``value`` is one of the space-separated words in ``column``."""
        sql = self.dialect.word_in.format(column=column, param=self.dialect.param)
        return Predicate(sql, (value,))

    def access_predicate(self, access: Access, *, alias: str, with_space: bool = True) -> Predicate:
        """Rows readable through ``access``: everything, a listed space or ID, or the
        caller's own."""
        if access.everything:
            return Predicate(self.dialect.true)
        in_set = self.dialect.in_set
        parts: list[Predicate] = []
        if with_space and access.spaces:
            parts.append(in_set(f"{alias}.space", access.spaces))
        if access.ids:
            parts.append(in_set(f"{alias}.id", access.ids))
        if access.owner is not None:
            parts.append(self._equals(f"{alias}.principal", access.owner))
        return Predicate.any_of(parts, empty=self.dialect.false)

    def memory_predicate(self, where: MemoryFilter, *, alias: str = "m") -> Predicate:
        in_set = self.dialect.in_set
        parts: list[Predicate] = []
        if not where.include_deleted:
            parts.append(Predicate(f"{alias}.deleted IS NULL"))
        parts.append(self.access_predicate(where.access, alias=alias))
        if where.spaces is not None:
            parts.append(in_set(f"{alias}.space", where.spaces))
        if where.kinds is not None:
            parts.append(in_set(f"{alias}.kind", where.kinds))
        for tag in sorted(where.tags):
            parts.append(self._listed(f"{alias}.tags", tag))
        if where.sessions is not None:
            parts.append(in_set(f"{alias}.session", where.sessions))
        if where.importances is not None:
            parts.append(in_set(f"{alias}.importance", where.importances))
        if where.branch is not None:
            on_branch = self._listed(f"{alias}.branches", where.branch)
            no_branches = Predicate(f"{alias}.branches = ''")
            parts.append(Predicate.any_of([no_branches, on_branch], empty=self.dialect.false))
        for column, excluded in (("id", where.exclude_ids), ("space", where.exclude_spaces)):
            if excluded:
                listed = in_set(f"{alias}.{column}", excluded)
                parts.append(Predicate(f"NOT ({listed.sql})", listed.params))
        return Predicate.all_of(parts, empty=self.dialect.true)

    def session_predicate(self, where: SessionFilter, *, alias: str = "s") -> Predicate:
        parts = [self.access_predicate(where.access, alias=alias, with_space=False)]
        if where.harness is not None:
            parts.append(self._equals(f"{alias}.harness", where.harness))
        if where.harness_session is not None:
            parts.append(self._equals(f"{alias}.harness_session", where.harness_session))
        if where.parent is not None:
            parts.append(self._equals(f"{alias}.parent", where.parent))
        return Predicate.all_of(parts, empty=self.dialect.true)
