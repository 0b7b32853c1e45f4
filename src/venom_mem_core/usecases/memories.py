"""Memory use cases: add, get, update, delete, restore, history, purge and the tombstone sweep.

Every function takes the wired :class:`App`, the caller's resolved :class:`Principal`, and
the verb's typed, checked command (:mod:`..commands`); it returns the verb's ok object and
raises :class:`VenomError` otherwise.
Provenance is always the caller's principal: no param can set it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import attrs

from .. import validation as v
from ..clock import format_ts, parse_ts
from ..errors import VenomError
from ..grants import Resource, check
from ..ports import ERASE_PENDING, ReadTx, StoredVectors, WriteTx
from ..records import Memory, Principal, Version
from ..shapes import memory_id, memory_json, version_entry_json
from .app import App
from .link_rows import SUPERSEDES, add_link, link_history, superseded_by
from .sessions import check_session_readable
from .similar import similar_after_commit, similar_field
from .space_states import activate_on_write

if TYPE_CHECKING:
    from ..commands import (
        AddMemory,
        DeleteMemory,
        GetMemory,
        MemoryHistory,
        PurgeMemory,
        RestoreMemory,
        UpdateMemory,
    )

__all__ = [
    "add_memory",
    "delete_in",
    "delete_memory",
    "get_memory",
    "load_checked",
    "memory_history",
    "purge_memory",
    "restore_memory",
    "sweep_tombstones",
    "update_in",
    "update_memory",
]


def content_hash(content: str) -> bytes:
    return hashlib.sha256(content.encode("utf-8")).digest()


def memory_resource(id: int, memory: Memory | None) -> Resource:
    """The resource a right on memory ``id`` is checked on; an absent one has no space."""
    if memory is None:
        return Resource(kind="memory", id=id)
    return Resource.of_memory(id, memory.space, memory.author.principal)


def load_checked(
    tx: ReadTx, who: Principal, right: str, id: int, *, include_deleted: bool = False
) -> Memory:
    """The memory, after the right is checked; absent (or deleted) is not_found after that."""
    memory = tx.get_memory(id)
    check(who, right, memory_resource(id, memory))
    if memory is None:
        raise VenomError.not_found("memory", f"{memory_id(id)} does not exist")
    if memory.deleted is not None and not include_deleted:
        # The caller holds the right on it (checked above), so saying so leaks nothing.
        raise VenomError.not_found("memory", f"{memory_id(id)} is deleted")
    return memory


def _emit(app: App, type_: str, memory: Memory, *, revision: bool = True) -> None:
    data: dict[str, Any] = {"memory": memory_id(memory.id), "space": memory.space}
    if revision:
        data["revision"] = memory.revision
    app.events.emit(type_, f"space:{memory.space}", data)


def _version(memory: Memory, action: str, who: Principal, ts: str) -> Version:
    return Version(
        memory=memory.id,
        revision=memory.revision,
        action=action,  # type: ignore[arg-type]  # one of the four, by construction
        kind=memory.kind,
        title=memory.title,
        content=memory.content,
        tags=memory.tags,
        importance=memory.importance,
        branches=memory.branches,
        by=who.provenance,
        ts=ts,
    )


def _kept(app: App, memory: Memory, revision: int) -> bool:
    """Whether ``revision`` is among the newest memory.max_versions. Versions are pruned when
    a memory changes; a max_versions lowered since then takes effect here at once."""
    return memory.revision - app.settings.max_versions < revision <= memory.revision


def _check_revision(memory: Memory, revision: int) -> None:
    if memory.revision != revision:
        raise VenomError(
            "conflict.memory_revision",
            f"{memory_id(memory.id)} is at revision {memory.revision}",
            {"current": memory.revision},
        )


def _check_no_duplicate(tx: ReadTx, memory: Memory, digest: bytes) -> None:
    other = tx.find_live_by_content(memory.space, digest)
    if other is not None and other.id != memory.id:
        raise VenomError.duplicate_memory(memory.space, other.id)


def _commit_revision(
    app: App,
    tx: WriteTx,
    who: Principal,
    memory: Memory,
    action: str,
    *,
    now: str | None = None,
    **changes: Any,
) -> Memory:
    """The next revision of ``memory`` with ``changes``, written with its version; the
    oldest versions beyond ``max_versions`` go."""
    now = now or app.clock.now()
    memory = attrs.evolve(
        memory, **changes, revision=memory.revision + 1, updated_by=who.provenance, updated=now
    )
    tx.replace_memory(memory)
    tx.insert_version(_version(memory, action, who, now))
    tx.prune_versions(memory.id, app.settings.max_versions)
    return memory


def add_memory(app: App, who: Principal, cmd: AddMemory) -> dict[str, Any]:
    v.check_content_size(cmd.content, app.settings.max_content_bytes)
    check(who, "write", Resource.of_space(cmd.space))
    digest = content_hash(cmd.content)
    with app.store.write() as tx:
        if cmd.session is not None:
            check_session_readable(tx, who, cmd.session)
        activate_on_write(tx, cmd.space)  # a write to an inactive space (docs/adr/0042)
        older = cmd.supersedes or ()
        for id in older:  # a link needs read on its target (docs/adr/0042)
            load_checked(tx, who, "read", id)
        existing = tx.find_live_by_content(cmd.space, digest)
        if existing is not None:
            if _supersede(tx, who, app.clock.now(), existing.id, older):
                _emit(app, "memory.linked", existing, revision=False)
            return {"id": memory_id(existing.id), "revision": existing.revision, "changed": False}
        now = app.clock.now()
        draft = Memory(
            id=0,
            space=cmd.space,
            kind=cmd.kind,
            title=cmd.title or "",
            content=cmd.content,
            content_sha256=digest,
            tags=cmd.tags or (),
            importance=cmd.importance or "normal",
            branches=cmd.branches or (),
            author=who.provenance,
            updated_by=who.provenance,
            session=cmd.session,
            created=now,
            updated=now,
            origin=cmd.origin,
        )
        memory = attrs.evolve(draft, id=tx.insert_memory(draft))
        tx.insert_version(_version(memory, "add", who, now))
        _supersede(tx, who, now, memory.id, older)
    similar = similar_after_commit(app, who, memory, superseded=older)
    _emit(app, "memory.added", memory)
    return {"id": memory_id(memory.id), "revision": 1, "changed": True, **similar}


def _supersede(tx: WriteTx, who: Principal, now: str, newer: int, older: Sequence[int]) -> bool:
    """memory.add's ``supersedes``: ``newer`` supersedes each of ``older``, in the add's
    write; whether a link was new."""
    if newer in older:
        raise VenomError.param(
            "link_self", "supersedes", f"{memory_id(newer)} can't supersede itself"
        )
    written = False
    for id in older:
        written |= add_link(tx, who, now, source=newer, target=id, relation=SUPERSEDES)
    return written


def get_memory(app: App, who: Principal, cmd: GetMemory) -> dict[str, Any]:
    number, revision = cmd.id, cmd.revision
    with app.store.read() as tx:
        memory = load_checked(tx, who, "read", number, include_deleted=cmd.include_deleted)
        if revision is not None and revision != memory.revision:
            # Revisions only grow, so one above the current is not kept; asking the store for
            # it could also overflow SQLite's 64-bit integers.
            version = tx.get_version(number, revision) if _kept(app, memory, revision) else None
            if version is None:
                raise VenomError(
                    "not_found.memory_revision",
                    f"{memory_id(number)} revision {revision} is not kept",
                )
            memory = attrs.evolve(
                memory,
                revision=version.revision,
                kind=version.kind,
                title=version.title,
                content=version.content,
                tags=version.tags,
                importance=version.importance,
                branches=version.branches,
                updated_by=version.by,
                updated=version.ts,
            )
        embedding = embedding_state(app, tx, memory)
        newer = superseded_by(tx, who, memory.id)
    out = memory_json(memory, embedding=embedding)
    if newer:
        out["superseded_by"] = newer
    return out


def embedding_state(app: App, tx: ReadTx, memory: Memory) -> str:
    """``off`` with no provider; otherwise ``ready`` or ``pending``: from the vector index
    when the app has one, else from the store's vectors."""
    if app.embedder is None:
        return "off"
    if app.vectors is not None:
        return "ready" if memory.id in app.vectors else "pending"
    stored = isinstance(tx, StoredVectors) and tx.has_vector(memory.id)
    return "ready" if stored else "pending"


def update_memory(app: App, who: Principal, cmd: UpdateMemory) -> dict[str, Any]:
    if cmd.content is not None:
        v.check_content_size(cmd.content, app.settings.max_content_bytes)
    with app.store.write() as tx:
        memory = load_checked(tx, who, "write", cmd.id)
        result, updated = update_in(app, tx, who, memory, cmd)
    if updated is not None:
        _emit(app, "memory.updated", updated)
    return result


def update_in(
    app: App, tx: WriteTx, who: Principal, memory: Memory, cmd: UpdateMemory
) -> tuple[dict[str, Any], Memory | None]:
    """memory.update of ``memory``, just loaded in ``tx`` with the write right checked: its
    result, and the new revision to announce once ``tx`` commits (``None``: no change)."""
    id = memory_id(memory.id)
    _check_revision(memory, cmd.revision)
    changes: dict[str, Any] = {}
    if cmd.content is not None and cmd.content != memory.content:
        digest = content_hash(cmd.content)
        _check_no_duplicate(tx, memory, digest)
        changes.update(content=cmd.content, content_sha256=digest)
    for name in ("title", "kind", "tags", "importance", "branches"):
        value = getattr(cmd, name)  # None: not changed
        if value is not None and value != getattr(memory, name):
            changes[name] = value
    if not changes:
        return {"id": id, "revision": memory.revision, "changed": False}, None
    activate_on_write(tx, memory.space)
    memory = _commit_revision(app, tx, who, memory, "update", **changes)
    threshold = app.settings.similar_threshold if "content" in changes else 0.0
    similar = similar_field(tx, who, memory, threshold)
    return {"id": id, "revision": memory.revision, "changed": True, **similar}, memory


def delete_memory(app: App, who: Principal, cmd: DeleteMemory) -> dict[str, Any]:
    with app.store.write() as tx:
        memory = load_checked(tx, who, "write", cmd.id)
        memory = delete_in(app, tx, who, memory, cmd.revision)
    _emit(app, "memory.deleted", memory)
    return {"id": memory_id(cmd.id), "revision": memory.revision, "deleted": memory.deleted}


def delete_in(app: App, tx: WriteTx, who: Principal, memory: Memory, revision: int) -> Memory:
    """memory.delete of ``memory`` at ``revision``, just loaded in ``tx`` with the write right
    checked: its deleted revision, to announce once ``tx`` commits."""
    _check_revision(memory, revision)
    now = app.clock.now()
    return _commit_revision(app, tx, who, memory, "delete", now=now, deleted=now)


def restore_memory(app: App, who: Principal, cmd: RestoreMemory) -> dict[str, Any]:
    """Bring a deleted memory back. Restoring a live one changes nothing (ADR 0004)."""
    with app.store.write() as tx:
        memory = load_checked(tx, who, "write", cmd.id, include_deleted=True)
        if memory.deleted is None:
            return {"id": memory_id(cmd.id), "revision": memory.revision}
        _check_no_duplicate(tx, memory, memory.content_sha256)
        memory = _commit_revision(app, tx, who, memory, "restore", deleted=None)
    _emit(app, "memory.restored", memory)
    return {"id": memory_id(cmd.id), "revision": memory.revision}


def memory_history(app: App, who: Principal, cmd: MemoryHistory) -> dict[str, Any]:
    """Kept versions, newest first. A deleted memory's history stays readable."""
    with app.store.read() as tx:
        memory = load_checked(tx, who, "read", cmd.id, include_deleted=True)
        versions = tx.list_versions(cmd.id)
        links = link_history(tx, who, cmd.id)
    kept = [ver for ver in versions if _kept(app, memory, ver.revision)]
    out: dict[str, Any] = {"versions": [version_entry_json(ver) for ver in kept]}
    if links:  # absent without links: RFC-0020's history, exactly
        out["links"] = links
    return out


def purge_memory(app: App, who: Principal, cmd: PurgeMemory) -> dict[str, Any]:
    """Erase a memory and its versions, then checkpoint so the text leaves the WAL too.

    The erase obligation commits with the delete: whatever cuts the checkpoint (a busy
    reader, a kill -9, a power cut), the next serve finds it and finishes the job."""
    check(who, "admin", Resource.store())
    with app.store.write() as tx:
        memory = tx.get_memory(cmd.id)
        if memory is None:
            raise VenomError.not_found("memory", f"{memory_id(cmd.id)} does not exist")
        tx.delete_memory(cmd.id)
        tx.set_meta(ERASE_PENDING, "1")
    _emit(app, "memory.purged", memory, revision=False)
    app.store.erase_traces()
    return {"id": memory_id(cmd.id)}


def sweep_tombstones(app: App) -> int:
    """Remove memories deleted more than ``tombstone_days`` ago; returns how many."""
    cutoff = format_ts(parse_ts(app.clock.now()) - timedelta(days=app.settings.tombstone_days))
    with app.store.write() as tx:
        expired = tx.expired_tombstones(cutoff)
        for memory in expired:
            tx.delete_memory(memory.id)
        if expired:
            tx.set_meta(ERASE_PENDING, "1")
    for memory in expired:
        _emit(app, "memory.purged", memory, revision=False)
    if expired:
        app.store.erase_traces()
    return len(expired)
