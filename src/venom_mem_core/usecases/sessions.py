"""Session lineage use cases (RFC-0020 section 7).

Everything but ``reported_by`` is a claim. A chain stops early, with ``truncated``, at the
limit, at a purged parent or at an unreadable one, and the three look the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from ..errors import VenomError
from ..grants import Access, Resource, check, holds, readable_sessions
from ..ports import ReadTx, SessionFilter
from ..records import Principal, Session
from ..shapes import session_id, session_json
from .app import App

if TYPE_CHECKING:
    from ..commands import (
        EndSession,
        GetSession,
        ListSessions,
        PurgeSession,
        SessionChain,
        StartSession,
    )

__all__ = [
    "CHAIN_LIMIT",
    "check_session_readable",
    "end_session",
    "get_session",
    "lineage",
    "list_sessions",
    "purge_session",
    "session_chain",
    "start_session",
]

CHAIN_LIMIT = 256


def session_resource(id: int, session: Session | None) -> Resource:
    return Resource.of_session(id, session.reported_by.principal if session else None)


def _load_checked(tx: ReadTx, who: Principal, right: str, id: int) -> Session:
    session = tx.get_session(id)
    check(who, right, session_resource(id, session))
    if session is None:
        raise VenomError.not_found("session", f"{session_id(id)} does not exist")
    return session


def check_session_readable(tx: ReadTx, who: Principal, id: int) -> Session:
    """Read on ``session:s<N>``, then existence: what memory.add and search need."""
    return _load_checked(tx, who, "read", id)


def _readable(who: Principal, session: Session) -> bool:
    return holds(who, "read", session_resource(session.id, session))


def visible(tx: ReadTx, who: Principal, session: Session) -> Session:
    """The session as the caller may see it: a parent it can't read is left out, so a
    hidden parent looks like a purged one (relation kept, parent gone)."""
    if session.parent is None:
        return session
    parent = tx.get_session(session.parent)
    if parent is not None and _readable(who, parent):
        return session
    return attrs.evolve(session, parent=None)


def lineage(tx: ReadTx, who: Principal, session: Session) -> tuple[list[Session], bool]:
    """The session and its readable ancestors, oldest first, and whether it stopped early."""
    chain = [session]
    current = session
    while True:
        if current.parent is None:
            return list(reversed(chain)), current.relation is not None
        if len(chain) >= CHAIN_LIMIT:
            return list(reversed(chain)), True
        parent = tx.get_session(current.parent)
        if parent is None or not _readable(who, parent):
            return list(reversed(chain)), True
        chain.append(parent)
        current = parent


def start_session(app: App, who: Principal, cmd: StartSession) -> dict[str, Any]:
    parent_no = cmd.parent
    check(who, "write", Resource.of_session(None))
    with app.store.write() as tx:
        if cmd.harness_session is not None:
            existing = tx.find_session(cmd.harness, cmd.harness_session)
            if existing is not None:
                return {"session": session_id(existing.id), "changed": False}
        if parent_no is not None:
            _load_checked(tx, who, "read", parent_no)
        draft = Session(
            id=0,
            harness=cmd.harness,
            harness_session=cmd.harness_session,
            parent=parent_no,
            relation=cmd.relation,
            cwd=cmd.cwd,
            reported_by=who.provenance,
            started=app.clock.now(),
        )
        session = attrs.evolve(draft, id=tx.insert_session(draft))
    data: dict[str, Any] = {"session": session_id(session.id), "harness": cmd.harness}
    if parent_no is not None:
        data["parent"] = session_id(parent_no)
    app.events.emit("session.started", f"session:{session_id(session.id)}", data)
    return {"session": session_id(session.id), "changed": True}


def end_session(app: App, who: Principal, cmd: EndSession) -> dict[str, Any]:
    session = session_id(cmd.session)
    with app.store.write() as tx:
        row = _load_checked(tx, who, "write", cmd.session)
        if row.ended is not None:
            return {"session": session, "ended": row.ended, "changed": False}
        row = attrs.evolve(row, ended=app.clock.now())
        tx.replace_session(row)
    app.events.emit("session.ended", f"session:{session}", {"session": session})
    return {"session": session, "ended": row.ended, "changed": True}


def get_session(app: App, who: Principal, cmd: GetSession) -> dict[str, Any]:
    with app.store.read() as tx:
        return session_json(visible(tx, who, _load_checked(tx, who, "read", cmd.session)))


def list_sessions(app: App, who: Principal, cmd: ListSessions) -> dict[str, Any]:
    access: Access = readable_sessions(who)
    where = SessionFilter(
        access=access,
        harness=cmd.harness,
        harness_session=cmd.harness_session,
        parent=cmd.parent,
    )
    limit = cmd.limit
    with app.store.read() as tx:
        rows = tx.list_sessions(where, cmd.after, limit + 1)
        page = [visible(tx, who, s) for s in rows[:limit]]
    more = len(rows) > limit
    return {
        "sessions": [session_json(s) for s in page],
        "next": session_id(page[-1].id) if more else None,
    }


def session_chain(app: App, who: Principal, cmd: SessionChain) -> dict[str, Any]:
    with app.store.read() as tx:
        row = _load_checked(tx, who, "read", cmd.session)
        chain, truncated = lineage(tx, who, row)
    if truncated:
        # Whatever stopped the chain (the limit, a purge, a hidden parent) looks the same.
        chain[0] = attrs.evolve(chain[0], parent=None)
    return {"chain": [session_json(s) for s in chain], "truncated": truncated}


def purge_session(app: App, who: Principal, cmd: PurgeSession) -> dict[str, Any]:
    number, session = cmd.session, session_id(cmd.session)
    check(who, "admin", Resource.store())
    with app.store.write() as tx:
        if tx.get_session(number) is None:
            raise VenomError.not_found("session", f"{session} does not exist")
        tx.delete_session(number)
    app.events.emit("session.purged", f"session:{session}", {"session": session})
    return {"session": session}
