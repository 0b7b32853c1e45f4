"""Grant selectors, containment, the right check, and readable sets.

Resources (RFC-0020 section 3, CONTRACT section 5)::

    *                 the whole store (unscoped verbs and admin verbs are checked here)
    space:<name>  ⊃  memory:m<N>
    session:s<N>      (and the not-yet-numbered new session, which only * and session:* cover)

``self`` covers a memory or session whose creator is the caller. A space has no owner.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from .errors import VenomError
from .grammar import GRANT_SCOPE_PATTERN, GRANTABLE
from .ids import id_number
from .records import Grant, Principal
from .validation import matches

__all__ = [
    "GRANTABLE",
    "RIGHTS",
    "Access",
    "Resource",
    "check",
    "check_held",
    "check_scopes",
    "holds",
    "holds_grant",
    "parse_grants",
    "readable_memories",
    "readable_sessions",
    "scope_covers",
    "valid_scope",
]

RIGHTS = ("read", "write", "admin", "spawn", "files")
# The shared vocabulary has spawn and files too, but this product grants neither.


@attrs.frozen(kw_only=True)
class Resource:
    """Something a right is checked on. ``owner`` is the creating principal, if it has one."""

    kind: str  # "store", "space", "memory", "session"
    space: str | None = None
    id: int | None = None
    owner: str | None = None

    @classmethod
    def store(cls) -> Resource:
        return cls(kind="store")

    @classmethod
    def of_space(cls, space: str) -> Resource:
        return cls(kind="space", space=space)

    @classmethod
    def of_memory(cls, id: int, space: str, owner: str) -> Resource:
        return cls(kind="memory", id=id, space=space, owner=owner)

    @classmethod
    def of_session(cls, id: int | None, owner: str | None = None) -> Resource:
        return cls(kind="session", id=id, owner=owner)

    def __str__(self) -> str:
        if self.kind == "store":
            return "*"
        if self.kind == "space":
            return f"space:{self.space}"
        if self.kind == "memory":
            return f"memory:m{self.id}"
        return f"session:s{self.id}" if self.id is not None else "session:*"


def scope_contains(scope: str, resource: Resource, principal_id: str) -> bool:
    if scope == "*":
        return True
    if scope == "self":
        return resource.owner is not None and resource.owner == principal_id
    kind, _, name = scope.partition(":")
    if kind == "space":
        if resource.kind not in ("space", "memory"):
            return False
        return name in ("*", resource.space)
    if kind == "memory":
        return resource.kind == "memory" and (name in ("*", f"m{resource.id}"))
    if kind == "session":
        if resource.kind != "session":
            return False
        return name == "*" or (resource.id is not None and name == f"s{resource.id}")
    return False


def holds(principal: Principal, right: str, resource: Resource) -> bool:
    if principal.is_owner:
        return True
    return any(
        g.right == right and scope_contains(g.scope, resource, principal.id)
        for g in principal.grants
    )


def scope_covers(outer: str, inner: str) -> bool:
    """Whether every resource ``inner`` contains is contained by ``outer`` (CONTRACT section
    5), judged from the selectors alone: ``space:user`` doesn't cover ``memory:m3`` even when
    m3 is in that space today, since memories move between spaces."""
    if outer in ("*", inner):
        return True
    kind, _, name = inner.partition(":")
    if outer == "space:*":
        return kind in ("space", "memory")
    if outer in ("memory:*", "session:*"):
        return kind == outer.partition(":")[0] and name != "*"
    return False


def holds_grant(principal: Principal, grant: Grant) -> bool:
    """Whether ``principal`` holds ``grant``, so may hand it on (grant.issue, client.add)."""
    return principal.is_owner or any(
        g.right == grant.right and scope_covers(g.scope, grant.scope) for g in principal.grants
    )


def check_held(principal: Principal, grants: Iterable[Grant]) -> None:
    """``denied.<right>`` for the first of ``grants`` the principal doesn't hold."""
    for grant in grants:
        if not holds_grant(principal, grant):
            raise VenomError.denied(grant.right, grant.scope, principal.id)


def check(principal: Principal, right: str, resource: Resource) -> None:
    """Raise ``denied.<right>`` unless the principal holds the right on the resource."""
    if not holds(principal, right, resource):
        raise VenomError.denied(right, str(resource), principal.id)


@attrs.frozen(kw_only=True)
class Access:
    """The rows a principal may read, as a predicate a store can turn into a WHERE clause.

    A row is readable when ``everything`` is set, its space is in ``spaces``, its ID is in
    ``ids``, or its creator is ``owner``.
    """

    everything: bool = False
    spaces: frozenset[str] = frozenset()
    ids: frozenset[int] = frozenset()
    owner: str | None = None

    def allows(self, *, id: int, owner: str, space: str | None = None) -> bool:
        return (
            self.everything
            or (space is not None and space in self.spaces)
            or id in self.ids
            or (self.owner is not None and owner == self.owner)
        )

    @property
    def nothing(self) -> bool:
        return not (self.everything or self.spaces or self.ids or self.owner)


def _scopes(principal: Principal, right: str) -> Iterable[str]:
    return (g.scope for g in principal.grants if g.right == right)


def readable_memories(principal: Principal, right: str = "read") -> Access:
    if principal.is_owner:
        return Access(everything=True)
    spaces: set[str] = set()
    ids: set[int] = set()
    owner = None
    for scope in _scopes(principal, right):
        if scope in ("*", "space:*", "memory:*"):
            return Access(everything=True)
        if scope == "self":
            owner = principal.id
        elif scope.startswith("space:"):
            spaces.add(scope[len("space:") :])
        elif scope.startswith("memory:m"):
            ids.add(int(scope[len("memory:m") :]))
    return Access(spaces=frozenset(spaces), ids=frozenset(ids), owner=owner)


def readable_sessions(principal: Principal, right: str = "read") -> Access:
    if principal.is_owner:
        return Access(everything=True)
    ids: set[int] = set()
    owner = None
    for scope in _scopes(principal, right):
        if scope in ("*", "session:*"):
            return Access(everything=True)
        if scope == "self":
            owner = principal.id
        elif scope.startswith("session:s"):
            ids.add(int(scope[len("session:s") :]))
    return Access(ids=frozenset(ids), owner=owner)


def parse_grants(
    value: Any, *, param: str = "grants", allowed_rights: Sequence[str] = GRANTABLE
) -> tuple[Grant, ...]:
    """Structure and validate a JSON list of ``{"right", "scope"}`` objects.

    A right outside ``allowed_rights`` is ``invalid_params.client_right`` (the code section 4
    gives client.add); a bad selector is ``invalid_params.grant_scope``.
    """
    if not isinstance(value, list):
        raise VenomError.param("type", param, f"{param} must be an array of grant objects")
    grants: list[Grant] = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"right", "scope"}:
            raise VenomError.param(
                "type", param, 'each grant is an object {"right": ..., "scope": ...}'
            )
        right, scope = item["right"], item["scope"]
        if not isinstance(right, str) or not isinstance(scope, str):
            raise VenomError.param("type", param, "a grant's right and scope are strings")
        if right not in allowed_rights:
            raise VenomError.param(
                "client_right",
                param,
                f"right {right!r} is not allowed here; allowed: {', '.join(allowed_rights)}",
            )
        _check_scope(scope, param)
        grants.append(Grant(right=right, scope=scope))
    return tuple(grants)


def check_scopes(grants: Iterable[Grant], param: str = "grants") -> None:
    """``invalid_params.grant_scope`` for a selector that can name nothing: the manifest's
    pattern has its shape, and this its one rule no pattern states (an ID's N at most
    MAX_ID, docs/adr/0024)."""
    for grant in grants:
        _check_scope(grant.scope, param)


def _check_scope(scope: str, param: str) -> None:
    if not valid_scope(scope):
        raise VenomError.param("grant_scope", param, f"bad grant scope {scope!r}")


def valid_scope(scope: str) -> bool:
    """A selector of CONTRACT section 5 that can name something: a space name as a space
    may be spelled, an ID as an ID may be (the grammar's pattern, and N at most MAX_ID)."""
    if not matches(GRANT_SCOPE_PATTERN, scope):
        return False
    kind, _, name = scope.partition(":")
    return kind not in ("memory", "session") or name == "*" or id_number(name, name[0]) is not None
    return False
