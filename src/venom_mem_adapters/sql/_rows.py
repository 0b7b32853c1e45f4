"""Rows to records and back, for both SQL stores: the column lists and the conversions.

Both schemas (RFC-0020 section 6, in SQLite's and PostgreSQL's types) store provenance as
two columns (``principal``/``label``), tags and branches space-separated, grants and an
imported memory's origin as JSON;
the core sees :class:`Provenance`, tuples and :class:`Grant` records. Every query selects
the columns in the order written here, so the converters can index by position. A driver's
bytes (``memoryview`` from psycopg) become ``bytes`` here, whichever store read them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

import attrs

from venom_mem_core.records import (
    Action,
    Client,
    Grant,
    InactiveSpace,
    Link,
    Memory,
    Origin,
    Provenance,
    Session,
    SpaceDescription,
    Version,
)

__all__ = [
    "CLIENT_COLUMNS",
    "INACTIVE_COLUMNS",
    "LINK_COLUMNS",
    "MEMORY_COLUMNS",
    "SESSION_COLUMNS",
    "SPACE_COLUMNS",
    "VERSION_COLUMNS",
    "client_from_row",
    "client_values",
    "columns",
    "inactive_from_row",
    "inactive_values",
    "link_from_row",
    "link_values",
    "memory_from_row",
    "memory_values",
    "session_from_row",
    "session_values",
    "space_from_row",
    "space_values",
    "version_from_row",
    "version_values",
]

Row = Sequence[Any]

MEMORY_COLUMNS = (
    "id",
    "space",
    "kind",
    "title",
    "content",
    "content_sha256",
    "tags",
    "revision",
    "principal",
    "label",
    "updated_by",
    "updated_label",
    "session",
    "created",
    "updated",
    "deleted",
    "importance",
    "branches",
    "origin",
)
VERSION_COLUMNS = (
    "memory",
    "revision",
    "action",
    "kind",
    "title",
    "content",
    "tags",
    "principal",
    "label",
    "ts",
    "importance",
    "branches",
)
SESSION_COLUMNS = (
    "id",
    "harness",
    "harness_session",
    "parent",
    "relation",
    "cwd",
    "principal",
    "label",
    "started",
    "ended",
)
CLIENT_COLUMNS = ("name", "principal", "grants", "token_hash", "created", "expires")
SPACE_COLUMNS = ("space", "description", "principal", "label", "updated")
LINK_COLUMNS = (
    "id",
    "source",
    "target",
    "relation",
    "principal",
    "label",
    "created",
    "removed",
    "removed_by",
    "removed_label",
)
INACTIVE_COLUMNS = ("space", "principal", "label", "since")


def columns(names: Sequence[str], alias: str | None = None) -> str:
    """``a, b, c`` or ``t.a, t.b, t.c``, for a SELECT list or an INSERT column list."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + name for name in names)


def _tags(text: str) -> tuple[str, ...]:
    return tuple(text.split(" ")) if text else ()


def _tags_text(tags: Sequence[str]) -> str:
    return " ".join(tags)


def _origin(text: str | None) -> Origin | None:
    return None if text is None else Origin(**json.loads(text))


def _origin_text(origin: Origin | None) -> str | None:
    if origin is None:
        return None
    members = {k: v for k, v in attrs.asdict(origin).items() if v is not None}
    return json.dumps(members, ensure_ascii=False, separators=(",", ":"))


def memory_from_row(row: Row) -> Memory:
    return Memory(
        id=row[0],
        space=row[1],
        kind=row[2],
        title=row[3],
        content=row[4],
        content_sha256=bytes(row[5]),
        tags=_tags(row[6]),
        revision=row[7],
        author=Provenance(principal=row[8], label=row[9]),
        updated_by=Provenance(principal=row[10], label=row[11]),
        session=row[12],
        created=row[13],
        updated=row[14],
        deleted=row[15],
        importance=row[16],
        branches=_tags(row[17]),
        origin=_origin(row[18]),
    )


def memory_values(memory: Memory) -> tuple[Any, ...]:
    """Values for every column but ``id``, in ``MEMORY_COLUMNS[1:]`` order."""
    return (
        memory.space,
        memory.kind,
        memory.title,
        memory.content,
        memory.content_sha256,
        _tags_text(memory.tags),
        memory.revision,
        memory.author.principal,
        memory.author.label,
        memory.updated_by.principal,
        memory.updated_by.label,
        memory.session,
        memory.created,
        memory.updated,
        memory.deleted,
        memory.importance,
        _tags_text(memory.branches),
        _origin_text(memory.origin),
    )


def version_from_row(row: Row) -> Version:
    return Version(
        memory=row[0],
        revision=row[1],
        action=cast(Action, row[2]),
        kind=row[3],
        title=row[4],
        content=row[5],
        tags=_tags(row[6]),
        by=Provenance(principal=row[7], label=row[8]),
        ts=row[9],
        importance=row[10],
        branches=_tags(row[11]),
    )


def version_values(version: Version) -> tuple[Any, ...]:
    return (
        version.memory,
        version.revision,
        version.action,
        version.kind,
        version.title,
        version.content,
        _tags_text(version.tags),
        version.by.principal,
        version.by.label,
        version.ts,
        version.importance,
        _tags_text(version.branches),
    )


def session_from_row(row: Row) -> Session:
    return Session(
        id=row[0],
        harness=row[1],
        harness_session=row[2],
        parent=row[3],
        relation=row[4],
        cwd=row[5],
        reported_by=Provenance(principal=row[6], label=row[7]),
        started=row[8],
        ended=row[9],
    )


def session_values(session: Session) -> tuple[Any, ...]:
    """Values for every column but ``id``, in ``SESSION_COLUMNS[1:]`` order."""
    return (
        session.harness,
        session.harness_session,
        session.parent,
        session.relation,
        session.cwd,
        session.reported_by.principal,
        session.reported_by.label,
        session.started,
        session.ended,
    )


def client_from_row(row: Row) -> Client:
    grants = tuple(Grant(right=g["right"], scope=g["scope"]) for g in json.loads(row[2]))
    return Client(
        name=row[0],
        principal=row[1],
        grants=grants,
        token_hash=bytes(row[3]),
        created=row[4],
        expires=row[5],
    )


def client_values(client: Client) -> tuple[Any, ...]:
    grants = [{"right": g.right, "scope": g.scope} for g in client.grants]
    return (
        client.name,
        client.principal,
        json.dumps(grants, separators=(",", ":")),
        client.token_hash,
        client.created,
        client.expires,
    )


def space_from_row(row: Row) -> SpaceDescription:
    return SpaceDescription(
        space=row[0],
        description=row[1],
        by=Provenance(principal=row[2], label=row[3]),
        updated=row[4],
    )


def space_values(space: SpaceDescription) -> tuple[Any, ...]:
    return (space.space, space.description, space.by.principal, space.by.label, space.updated)


def link_from_row(row: Row) -> Link:
    removed_by = None if row[8] is None else Provenance(principal=row[8], label=row[9])
    return Link(
        id=row[0],
        source=row[1],
        target=row[2],
        relation=row[3],
        by=Provenance(principal=row[4], label=row[5]),
        created=row[6],
        removed=row[7],
        removed_by=removed_by,
    )


def link_values(link: Link) -> tuple[Any, ...]:
    """Values for every column but ``id``, in ``LINK_COLUMNS[1:]`` order."""
    removed_by = link.removed_by
    return (
        link.source,
        link.target,
        link.relation,
        link.by.principal,
        link.by.label,
        link.created,
        link.removed,
        None if removed_by is None else removed_by.principal,
        None if removed_by is None else removed_by.label,
    )


def inactive_from_row(row: Row) -> InactiveSpace:
    return InactiveSpace(space=row[0], by=Provenance(principal=row[1], label=row[2]), since=row[3])


def inactive_values(inactive: InactiveSpace) -> tuple[Any, ...]:
    return (inactive.space, inactive.by.principal, inactive.by.label, inactive.since)
