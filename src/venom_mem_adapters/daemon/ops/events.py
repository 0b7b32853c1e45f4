"""The ``events`` verb (CONTRACT section 8, RFC-0020 section 10, docs/adr/0008-events.md).

A reply is ``{"cursor": "<source>:<seq>", "events": [...]}``, with ``"more": true`` when
``limit`` cut the page short. With no cursor, a cursor of another daemon (a restart), or one
whose events the log no longer holds, the reply first carries ``"snapshot"``: the space and
session entities the caller can read, each ``{"entity", "resource", "data"}``, and
``"truncated": true`` if they didn't all fit one frame. Events then follow from the moment
just before the snapshot was read, so nothing between the two is lost.

Every event is checked against the caller's rights on its resource: ``space:<name>`` needs
read on the space (read on one memory in it isn't enough), ``session:s<N>`` read on that
session, and ``*`` admin (``principal.*``) or read on the store (``config.*``). An event the
caller can't see moves the cursor on without being shown. ``wait_ms`` turns a call that has
nothing to show into a long poll, which is how ``events --follow`` streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import attrs

from venom_mem_core.commands import ListSessions, ListSpaces, SessionId
from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Resource, holds
from venom_mem_core.records import Principal
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.sessions import list_sessions
from venom_mem_core.usecases.spaces import list_spaces

from ..context import Request, SessionReporters
from ..event_log import EventLog
from .reporters import session_number

__all__ = ["Cursor", "events_verb", "parse_cursor", "visible"]

# The snapshot stops growing here, so that a reply stays well inside one 1 MiB frame with a
# full page of events after it.
SNAPSHOT_BUDGET = 640 * 1024
SESSION_PAGE = 200
_CURSOR_RE = re.compile(r"^([A-Za-z0-9_-]{1,64}):(0|[1-9][0-9]{0,18})$")


@attrs.frozen(kw_only=True)
class Cursor:
    source: str
    seq: int

    def __str__(self) -> str:
        return f"{self.source}:{self.seq}"


def parse_cursor(text: str) -> Cursor:
    match = _CURSOR_RE.match(text)
    if match is None:
        raise VenomError.param(
            "type", "after", "after is a cursor <source>:<seq>, as an events reply gives it"
        )
    return Cursor(source=match.group(1), seq=int(match.group(2)))


# -- who sees what -------------------------------------------------------------------------------


def _can_read_session(who: Principal, number: int, owners: Mapping[int, str]) -> bool:
    return holds(who, "read", Resource.of_session(number, owners.get(number)))


def visible(
    who: Principal, event: Mapping[str, Any], owners: Mapping[int, str]
) -> dict[str, Any] | None:
    """The event as ``who`` may see it, or ``None``. ``owners`` maps session numbers to the
    principal that reported them, for ``self`` grants.

    A ``session.started`` whose parent the caller can't read is shown without ``parent``,
    as session.get shows that session."""
    resource = str(event["resource"])
    kind, _, name = resource.partition(":")
    if resource == "*":
        right = "read" if str(event["type"]).startswith("config.") else "admin"
        return dict(event) if holds(who, right, Resource.store()) else None
    if kind == "space" and name:
        return dict(event) if holds(who, "read", Resource.of_space(name)) else None
    number = session_number(resource)
    if number is None:
        return dict(event) if who.is_owner else None
    if not _can_read_session(who, number, owners):
        return None
    data = event.get("data")
    parent = data.get("parent") if isinstance(data, dict) else None
    parent_no = session_number(f"session:{parent}") if isinstance(parent, str) else None
    if parent_no is not None and not _can_read_session(who, parent_no, owners):
        assert isinstance(data, dict)
        return {**event, "data": {k: v for k, v in data.items() if k != "parent"}}
    return dict(event)


def _needs_owners(who: Principal) -> bool:
    """Only a ``self`` grant makes a session's reporter matter."""
    return not who.is_owner and any(g.right == "read" and g.scope == "self" for g in who.grants)


def _session_numbers(events: Iterable[Mapping[str, Any]]) -> set[int]:
    numbers: set[int] = set()
    for event in events:
        number = session_number(str(event["resource"]))
        if number is None:
            continue
        numbers.add(number)
        data = event.get("data")
        parent = data.get("parent") if isinstance(data, dict) else None
        if isinstance(parent, str) and (p := session_number(f"session:{parent}")) is not None:
            numbers.add(p)
    return numbers


# -- one page ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Page:
    events: list[dict[str, Any]]
    seq: int  # the last event examined, shown or not
    more: bool


def _wanted(event: Mapping[str, Any], types: frozenset[str] | None) -> bool:
    return types is None or event["type"] in types


def read_page(
    log: EventLog,
    reporters: SessionReporters,
    who: Principal,
    *,
    after: int,
    types: frozenset[str] | None,
    limit: int,
) -> Page:
    """Up to ``limit`` events after ``after`` that the caller may see. Blocking (it may read
    the store for ``self`` grants), so the handler runs it on a worker thread."""
    pending = log.after(after)
    owners: dict[int, str] = {}
    if _needs_owners(who):
        owners = reporters.of(_session_numbers(e for e in pending if _wanted(e, types)))
    shown: list[dict[str, Any]] = []
    seq = after
    for index, event in enumerate(pending):
        seq = int(event["seq"])
        if not _wanted(event, types):
            continue
        seen = visible(who, event, owners)
        if seen is None:
            continue
        shown.append(seen)
        if len(shown) == limit:
            return Page(events=shown, seq=seq, more=index + 1 < len(pending))
    return Page(events=shown, seq=seq, more=False)


def resume_point(log: EventLog, cursor: Cursor | None) -> int | None:
    """The sequence number to continue after, or ``None`` when a snapshot must come first:
    no cursor, another source's cursor, one from the future, or a gap the log dropped."""
    if cursor is None or cursor.source != log.source:
        return None
    last = log.last_seq
    if cursor.seq > last:
        return None
    if cursor.seq < last:
        following = log.after(cursor.seq)
        if not following or int(following[0]["seq"]) > cursor.seq + 1:
            return None
    return cursor.seq


# -- the snapshot ------------------------------------------------------------------------------


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.truncated = False

    def take(self, entity: dict[str, Any]) -> bool:
        size = len(json.dumps(entity, ensure_ascii=False, separators=(",", ":"))) + 1
        if size > self.left:
            self.truncated = True
            return False
        self.left -= size
        return True


def snapshot(
    app: App, who: Principal, types: frozenset[str] | None, budget: int = SNAPSHOT_BUDGET
) -> tuple[list[dict[str, Any]], bool]:
    """The entities the caller can read: spaces by name, then sessions newest first.

    With ``types``, only the entities those events describe. Returns the entities and
    whether the budget cut them short."""
    entities: list[dict[str, Any]] = []
    left = _Budget(budget)
    want_spaces = types is None or any(t.startswith("memory.") for t in types)
    want_sessions = types is None or any(t.startswith("session.") for t in types)
    if want_spaces:
        for space in list_spaces(app, who, ListSpaces())["spaces"]:
            entity = {"entity": "space", "resource": f"space:{space['space']}", "data": space}
            if not left.take(entity):
                return entities, True
            entities.append(entity)
    after: SessionId | None = None
    while want_sessions:
        page = list_sessions(app, who, ListSessions(after=after, limit=SESSION_PAGE))
        for session in page["sessions"]:
            entity = {
                "entity": "session",
                "resource": f"session:{session['session']}",
                "data": session,
            }
            if not left.take(entity):
                return entities, True
            entities.append(entity)
        if page["next"] is None:
            break
        after = SessionId(int(page["next"][1:]))  # the s<N> the page itself wrote
    return entities, False


# -- waiting -----------------------------------------------------------------------------------


def _waker(event: anyio.Event) -> Callable[[], None]:
    """A listener for :meth:`EventLog.subscribe`, callable from any thread, that sets
    ``event`` in this event loop without blocking the thread that emitted."""
    loop_thread = threading.get_ident()
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    token = anyio.lowlevel.current_token()

    def wake() -> None:
        if threading.get_ident() == loop_thread:
            event.set()
            return
        with contextlib.suppress(RuntimeError):  # the loop has already closed
            if loop is not None:
                loop.call_soon_threadsafe(event.set)
            else:
                anyio.from_thread.run_sync(event.set, token=token)

    return wake


async def wait_for_append(log: EventLog, after: int, timeout_s: float) -> bool:
    """Wait until the log holds an event after ``after``, at most ``timeout_s``."""
    appended = anyio.Event()
    unsubscribe = log.subscribe(_waker(appended))
    try:
        if log.last_seq > after:
            return True
        with anyio.move_on_after(timeout_s):
            await appended.wait()
        return log.last_seq > after
    finally:
        unsubscribe()


# -- the verb ----------------------------------------------------------------------------------


async def events_verb(request: Request) -> dict[str, Any]:
    daemon, who, params = request.daemon, request.principal, request.params
    log = daemon.events
    raw_types = params.get("types")
    types = frozenset(raw_types) if raw_types is not None else None
    limit = int(params.get("limit") or 100)
    wait_s = int(params.get("wait_ms") or 0) / 1000
    after = params.get("after")
    cursor = parse_cursor(after) if isinstance(after, str) and after else None

    entities: list[dict[str, Any]] | None = None
    truncated = False
    start = resume_point(log, cursor)
    if start is None:
        start = log.last_seq  # taken before the snapshot is read: no change is lost between
        entities, truncated = await anyio.to_thread.run_sync(snapshot, daemon.app, who, types)
    deadline = anyio.current_time() + wait_s
    while True:
        page = await anyio.to_thread.run_sync(
            functools.partial(
                read_page, log, daemon.ops.reporters, who, after=start, types=types, limit=limit
            )
        )
        start = page.seq
        remaining = deadline - anyio.current_time()
        if page.events or entities is not None or remaining <= 0:
            break
        if not await wait_for_append(log, start, remaining):
            break
    reply: dict[str, Any] = {"cursor": str(Cursor(source=log.source, seq=start))}
    if entities is not None:
        reply["snapshot"] = entities
        if truncated:
            reply["truncated"] = True
    reply["events"] = page.events
    if page.more:
        reply["more"] = True
    return reply
