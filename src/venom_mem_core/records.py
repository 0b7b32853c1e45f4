"""The domain's records: frozen attrs classes, with integer row IDs inside the core.

IDs are shown as ``m<N>``, ``s<N>`` and ``g<N>`` only at the boundary (:mod:`.shapes`);
inside, a memory or session is its integer rowid, which is also the tie-breaker in ranking.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import attrs

from .grammar import IMPORTANCES, KINDS, LINK_RELATIONS, RELATIONS

__all__ = [
    "IMPORTANCES",
    "KINDS",
    "LINK_RELATIONS",
    "RELATIONS",
    "Action",
    "Client",
    "ContextEntry",
    "Grant",
    "Hit",
    "InactiveSpace",
    "Link",
    "Memory",
    "Origin",
    "Principal",
    "Provenance",
    "Session",
    "SpaceDescription",
    "Version",
]

Action = Literal["add", "update", "delete", "restore"]


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _grants(values: Iterable[Grant]) -> tuple[Grant, ...]:
    return tuple(values)


@attrs.frozen(kw_only=True)
class Provenance:
    """Who did something: a principal ID and its label as it was at that moment."""

    principal: str
    label: str | None = None


@attrs.frozen(kw_only=True)
class Grant:
    """A right on a scope selector (CONTRACT section 5)."""

    right: str
    scope: str


@attrs.frozen(kw_only=True)
class Principal:
    """A resolved caller. ``owner`` holds every right; others hold exactly their grants."""

    id: str
    label: str | None = None
    grants: tuple[Grant, ...] = attrs.field(default=(), converter=_grants)

    @property
    def is_owner(self) -> bool:
        return self.id == "owner"

    @property
    def provenance(self) -> Provenance:
        return Provenance(principal=self.id, label=self.label)


@attrs.frozen(kw_only=True)
class Origin:
    """What an imported memory's source said of it: claims, never provenance (ADR 0040)."""

    format: str
    author: str | None = None
    created: str | None = None
    id: str | None = None


@attrs.frozen(kw_only=True)
class Memory:
    id: int
    space: str
    kind: str
    content: str
    content_sha256: bytes
    title: str = ""
    tags: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    importance: str = "normal"
    # Git branch names; none means the memory is shown on every branch.
    branches: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    revision: int = 1
    author: Provenance
    updated_by: Provenance
    session: int | None = None
    created: str
    updated: str
    deleted: str | None = None
    origin: Origin | None = None


@attrs.frozen(kw_only=True)
class Version:
    """One kept revision of a memory, with who made it and what it did."""

    memory: int
    revision: int
    action: Action
    kind: str
    title: str
    content: str
    tags: tuple[str, ...] = attrs.field(converter=_strings)
    importance: str = "normal"
    branches: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    by: Provenance
    ts: str


@attrs.frozen(kw_only=True)
class Hit:
    """A search or list result: a memory without its full content, plus ranking facts."""

    memory: Memory
    snippet: str
    score: float | None = None
    fts_rank: int | None = None
    vector_rank: int | None = None
    similarity: float | None = None


@attrs.frozen(kw_only=True)
class ContextEntry:
    """What memory.context shows of a memory: few fields, as it reads every row of a space."""

    id: int
    importance: str
    created: str
    updated: str
    by: str  # the author's label, else its principal ID
    content: str

    @classmethod
    def of(cls, memory: Memory) -> ContextEntry:
        return cls(
            id=memory.id,
            importance=memory.importance,
            created=memory.created,
            updated=memory.updated,
            by=memory.author.label or memory.author.principal,
            content=memory.content,
        )


@attrs.frozen(kw_only=True)
class SpaceDescription:
    """What belongs in a space and when to recall it, and who said so (docs/adr/0018)."""

    space: str
    description: str
    by: Provenance
    updated: str


@attrs.frozen(kw_only=True)
class Link:
    """``source`` <relation> ``target``, and who said so when (docs/adr/0042). An unlink
    keeps the row, stamped ``removed`` and ``removed_by``, so a memory's links have a
    history as its text does."""

    id: int
    source: int
    target: int
    relation: str
    by: Provenance
    created: str
    removed: str | None = None
    removed_by: Provenance | None = None


@attrs.frozen(kw_only=True)
class InactiveSpace:
    """A space left out of reads that name no space, and who made it so (docs/adr/0042)."""

    space: str
    by: Provenance
    since: str


@attrs.frozen(kw_only=True)
class Session:
    id: int
    harness: str
    harness_session: str | None = None
    parent: int | None = None
    relation: str | None = None
    cwd: str | None = None
    reported_by: Provenance
    started: str
    ended: str | None = None


@attrs.frozen(kw_only=True)
class Client:
    """A durable token principal the store remembers (RFC-0020 section 4)."""

    name: str
    principal: str
    grants: tuple[Grant, ...] = attrs.field(converter=_grants)
    token_hash: bytes
    created: str
    expires: str | None = None
