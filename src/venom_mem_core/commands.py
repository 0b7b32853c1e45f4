"""One typed, checked command per core verb: what a use case receives (``add_memory(app,
who, cmd)``), structured once at the trust boundary by :mod:`.converter` from params that
:func:`~venom_mem_core.params.check_params` has already checked against the manifest.

The classes state only what the use cases need to read: names, Python types, which params
are required and their defaults, held to the manifest by tests/unit/test_commands.py. No
grammar is written here (patterns, choices, limits stay the manifest's): a field's type says
what the checked value becomes, not which values are allowed. Record IDs arrive parsed, as
the number behind ``m<N>``, ``s<N>`` or ``g<N>`` (:data:`ID_PREFIXES`); lists arrive as
tuples.

The daemon's own verbs (ping, events, config.*, ...) have no command: they read their
checked params where the daemon keeps its state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar, NewType

import attrs

from .records import Grant

__all__ = [
    "COMMANDS",
    "ID_PREFIXES",
    "AddClient",
    "AddMemory",
    "Command",
    "DeleteMemory",
    "DescribeSpace",
    "EndSession",
    "GetMemory",
    "GetSession",
    "IssueGrant",
    "ListClients",
    "ListGrants",
    "ListMemories",
    "ListSessions",
    "ListSpaces",
    "MemoryContext",
    "MemoryHistory",
    "MemoryId",
    "PrincipalId",
    "PurgeMemory",
    "PurgeSession",
    "RemoveClient",
    "RestoreMemory",
    "RevokeGrant",
    "SearchMemories",
    "SessionChain",
    "SessionId",
    "StartSession",
    "StoreStatus",
    "UpdateMemory",
    "Whoami",
]

MemoryId = NewType("MemoryId", int)  # m<N>
SessionId = NewType("SessionId", int)  # s<N>
PrincipalId = NewType("PrincipalId", int)  # g<N>

# The prefix each ID type is parsed from (the manifest's ``Type.id_prefix``; a test holds
# every ID param's field to its prefix).
ID_PREFIXES: Mapping[object, str] = {MemoryId: "m", SessionId: "s", PrincipalId: "g"}


def _tuple(items: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if items is None else tuple(items)


def _grants(items: Iterable[Grant]) -> tuple[Grant, ...]:
    return tuple(items)


_Optional = tuple[str, ...] | None


@attrs.frozen(kw_only=True)
class Command:
    """The base of every command; ``VERB`` names its manifest verb."""

    VERB: ClassVar[str]


# -- memories -----------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class AddMemory(Command):
    VERB = "memory.add"
    space: str
    content: str
    kind: str = "note"
    title: str | None = None
    tags: _Optional = attrs.field(default=None, converter=_tuple)
    session: SessionId | None = None
    importance: str | None = None  # normal, said by the use case (the manifest names none)
    branches: _Optional = attrs.field(default=None, converter=_tuple)


@attrs.frozen(kw_only=True)
class GetMemory(Command):
    VERB = "memory.get"
    id: MemoryId
    revision: int | None = None
    include_deleted: bool = False


@attrs.frozen(kw_only=True)
class UpdateMemory(Command):
    VERB = "memory.update"
    id: MemoryId
    revision: int
    content: str | None = None
    title: str | None = None
    kind: str | None = None
    tags: _Optional = attrs.field(default=None, converter=_tuple)
    importance: str | None = None
    branches: _Optional = attrs.field(default=None, converter=_tuple)


@attrs.frozen(kw_only=True)
class DeleteMemory(Command):
    VERB = "memory.delete"
    id: MemoryId
    revision: int


@attrs.frozen(kw_only=True)
class RestoreMemory(Command):
    VERB = "memory.restore"
    id: MemoryId


@attrs.frozen(kw_only=True)
class MemoryHistory(Command):
    VERB = "memory.history"
    id: MemoryId


@attrs.frozen(kw_only=True)
class PurgeMemory(Command):
    VERB = "memory.purge"
    id: MemoryId


# -- search, list, context ----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class SearchMemories(Command):
    VERB = "memory.search"
    query: str
    spaces: _Optional = attrs.field(default=None, converter=_tuple)
    kinds: _Optional = attrs.field(default=None, converter=_tuple)
    tags: _Optional = attrs.field(default=None, converter=_tuple)
    session: SessionId | None = None
    lineage: bool = False
    importances: _Optional = attrs.field(default=None, converter=_tuple)
    branch: str | None = None
    mode: str = "auto"
    query_mode: str | None = None  # the store's search.query_mode when absent
    fusion: str | None = None  # the store's search.fusion when absent
    limit: int = 10


@attrs.frozen(kw_only=True)
class ListMemories(Command):
    VERB = "memory.list"
    spaces: _Optional = attrs.field(default=None, converter=_tuple)
    kinds: _Optional = attrs.field(default=None, converter=_tuple)
    tags: _Optional = attrs.field(default=None, converter=_tuple)
    session: SessionId | None = None
    lineage: bool = False
    importances: _Optional = attrs.field(default=None, converter=_tuple)
    branch: str | None = None
    include_deleted: bool = False
    after: MemoryId | None = None
    limit: int = 50


@attrs.frozen(kw_only=True)
class MemoryContext(Command):
    VERB = "memory.context"
    spaces: tuple[str, ...] = attrs.field(converter=tuple)
    branch: str | None = None
    kinds: _Optional = attrs.field(default=None, converter=_tuple)
    budget: int = 8192


# -- spaces and the store -----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ListSpaces(Command):
    VERB = "space.list"


@attrs.frozen(kw_only=True)
class DescribeSpace(Command):
    VERB = "space.describe"
    space: str
    description: str


@attrs.frozen(kw_only=True)
class StoreStatus(Command):
    VERB = "store.status"


# -- sessions -----------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class StartSession(Command):
    VERB = "session.start"
    harness: str
    harness_session: str | None = None
    parent: SessionId | None = None
    relation: str | None = None
    cwd: str | None = None


@attrs.frozen(kw_only=True)
class EndSession(Command):
    VERB = "session.end"
    session: SessionId


@attrs.frozen(kw_only=True)
class GetSession(Command):
    VERB = "session.get"
    session: SessionId


@attrs.frozen(kw_only=True)
class ListSessions(Command):
    VERB = "session.list"
    harness: str | None = None
    harness_session: str | None = None
    parent: SessionId | None = None
    after: SessionId | None = None
    limit: int = 50


@attrs.frozen(kw_only=True)
class SessionChain(Command):
    VERB = "session.chain"
    session: SessionId


@attrs.frozen(kw_only=True)
class PurgeSession(Command):
    VERB = "session.purge"
    session: SessionId


# -- principals ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class AddClient(Command):
    VERB = "client.add"
    name: str
    grants: tuple[Grant, ...] = attrs.field(converter=_grants)
    ttl: int | None = None


@attrs.frozen(kw_only=True)
class ListClients(Command):
    VERB = "client.list"


@attrs.frozen(kw_only=True)
class RemoveClient(Command):
    VERB = "client.remove"
    name: str


@attrs.frozen(kw_only=True)
class Whoami(Command):
    VERB = "whoami"


@attrs.frozen(kw_only=True)
class IssueGrant(Command):
    VERB = "grant.issue"
    grants: tuple[Grant, ...] = attrs.field(converter=_grants)
    ttl: int = 3600
    label: str | None = None


@attrs.frozen(kw_only=True)
class ListGrants(Command):
    VERB = "grant.list"


@attrs.frozen(kw_only=True)
class RevokeGrant(Command):
    VERB = "grant.revoke"
    principal: PrincipalId


COMMANDS: Mapping[str, type[Command]] = {
    cls.VERB: cls
    for cls in (
        AddMemory,
        GetMemory,
        UpdateMemory,
        DeleteMemory,
        RestoreMemory,
        MemoryHistory,
        SearchMemories,
        ListMemories,
        PurgeMemory,
        MemoryContext,
        ListSpaces,
        DescribeSpace,
        StoreStatus,
        StartSession,
        EndSession,
        GetSession,
        ListSessions,
        SessionChain,
        PurgeSession,
        AddClient,
        ListClients,
        RemoveClient,
        Whoami,
        IssueGrant,
        ListGrants,
        RevokeGrant,
    )
}
