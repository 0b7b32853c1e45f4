"""Memory records for store-level tests, before a store gives them an ID."""

from __future__ import annotations

import hashlib

from venom_mem_core.records import Memory, Provenance

OWNER = Provenance(principal="owner", label="owner")
TS = "2026-11-09T10:00:00.000Z"


def draft_memory(
    content: str,
    *,
    space: str = "user",
    kind: str = "note",
    title: str = "",
    tags: tuple[str, ...] = (),
    author: Provenance = OWNER,
    session: int | None = None,
    updated: str = TS,
    deleted: str | None = None,
) -> Memory:
    """A live (or deleted) memory as a use case would insert it; ``id`` is the store's to set."""
    return Memory(
        id=0,
        space=space,
        kind=kind,
        title=title,
        content=content,
        content_sha256=hashlib.sha256(content.encode()).digest(),
        tags=tags,
        author=author,
        updated_by=author,
        session=session,
        created=TS,
        updated=updated,
        deleted=deleted,
    )
