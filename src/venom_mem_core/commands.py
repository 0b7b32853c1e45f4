"""One typed command per core verb: what a use case receives (``add_memory(app, who,
cmd)``), structured once at the trust boundary by :mod:`.converter` from params that
:func:`~venom_mem_core.params.check_params` has already checked against the manifest.

The commands are derived from the manifest (docs/adr/0033): each field's name, order,
whether it is required and its default are the verb's params, and its Python type is what a
checked value of the param's manifest type becomes (:func:`field_type`: a ``str``, an
``int``, a ``bool``, a ``tuple[str, ...]``, a ``tuple[Grant, ...]``; a record ID parsed to
the number behind ``m<N>``, ``s<N>`` or ``g<N>``, :data:`ID_PREFIXES`; ``X | None`` for an
optional param with no default). No grammar is written here: patterns, choices and limits
stay the manifest's.

Every verb with a ``use_case`` gets a command, in :data:`COMMANDS`, with nothing written
here. The classes below are the ones the use cases read, named for mypy: each lists its
fields' Python types only, and :func:`derived` checks them against the manifest's when this
module is imported (a mismatch, a missing or an extra field is a ``TypeError`` naming the
verb), then makes the class from the manifest.

The daemon's own verbs (ping, events, config.*, ...) have no command: they read their
checked params where the daemon keeps its state.
"""

# No ``from __future__ import annotations``: :func:`derived` compares the annotations, as
# the objects they are, with the types derived from the manifest.

import inspect
import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NewType, TypeVar

import attrs

from .manifest import MANIFEST
from .manifest_types import Param, Type, Verb
from .records import Grant, Origin

__all__ = [
    "COMMANDS",
    "ID_PREFIXES",
    "ActivateSpace",
    "AddClient",
    "AddMemory",
    "Command",
    "DeactivateSpace",
    "DeleteMemory",
    "DescribeSpace",
    "EndSession",
    "Filters",
    "ForgetMemory",
    "GetMemory",
    "GetSession",
    "IssueGrant",
    "LinkMemories",
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
    "RelatedMemories",
    "RemoveClient",
    "ReplaceMemory",
    "RestoreMemory",
    "RevokeGrant",
    "SearchMemories",
    "SessionChain",
    "SessionId",
    "StartSession",
    "StoreStatus",
    "Strings",
    "UnlinkMemories",
    "UpdateMemory",
    "Whoami",
    "derived",
    "field_name",
    "field_type",
]

MemoryId = NewType("MemoryId", int)  # m<N>
SessionId = NewType("SessionId", int)  # s<N>
PrincipalId = NewType("PrincipalId", int)  # g<N>

# The ID type a string with the manifest's ``Type.id_prefix`` becomes (the converter parses
# each from its prefix).
ID_PREFIXES: Mapping[object, str] = {MemoryId: "m", SessionId: "s", PrincipalId: "g"}
_ID_TYPES: Mapping[str, object] = {prefix: t for t, prefix in ID_PREFIXES.items()}
# The record an object param's items become, by their members' names.
_RECORDS: Mapping[tuple[str, ...], type] = {
    ("right", "scope"): Grant,
    ("format", "author", "created", "id"): Origin,
}
_SCALARS: Mapping[str, type] = {"string": str, "integer": int, "boolean": bool, "number": float}

Strings = tuple[str, ...]


class Command:
    """The base of every command; ``VERB`` names its manifest verb. A command is a frozen
    attrs class with keyword-only fields, made from the manifest by :func:`derived`."""

    VERB: ClassVar[str]

    if TYPE_CHECKING:  # the fields are the manifest's, which mypy doesn't read

        def __init__(self, **fields: Any) -> None: ...


C = TypeVar("C", bound=Command)


def _record(verb: Verb, name: str, type_: Type) -> type:
    record = _RECORDS.get(tuple(f.name for f in type_.fields))
    if record is None:
        raise TypeError(f"verb {verb.name}: no record for param {name}")
    return record


def _item_type(verb: Verb, name: str, type_: Type) -> Any:
    if type_.id_prefix is not None:
        return _ID_TYPES[type_.id_prefix]
    if type_.kind == "array" and type_.items is not None:
        items = type_.items
        if items.kind == "object":
            record = _record(verb, name, items)
            return tuple[record, ...]  # type: ignore[valid-type]  # a class, at run time
        return tuple[_item_type(verb, name, items), ...]  # type: ignore[misc]
    if type_.kind == "object" and type_.fields:
        return _record(verb, name, type_)
    scalar = _SCALARS.get(type_.kind)
    if scalar is None:
        raise TypeError(f"verb {verb.name}: param {name} has no command type ({type_.kind})")
    return scalar


def _optional(param: Param) -> bool:
    return not param.required and param.default is None


def field_type(verb: Verb, param: Param) -> Any:
    """What a checked value of ``param`` becomes in ``verb``'s command."""
    found = _item_type(verb, param.name, param.type)
    return found | None if _optional(param) else found


def _tuple(items: Iterable[Any] | None) -> tuple[Any, ...] | None:
    return None if items is None else tuple(items)


def _items(items: Iterable[Any]) -> tuple[Any, ...]:
    # Not the builtin ``tuple`` itself: attrs reads a converter's signature, and a builtin's
    # is parsed from its text with ``tokenize`` (about 10 ms of a daemon's start, ADR 0038).
    return tuple(items)


def _field(verb: Verb, param: Param) -> Any:
    kind = field_type(verb, param)
    arrays = param.type.kind == "array"
    return attrs.field(
        type=kind,
        kw_only=True,
        default=attrs.NOTHING if param.required else param.default,
        converter=(_tuple if _optional(param) else _items) if arrays else None,
    )


def _params(verb: Verb) -> tuple[Param, ...]:
    return tuple(p for p in verb.params if not p.cli_only)


def field_name(param: str) -> str:
    """The command field of a param: its name, or ``from_`` for a Python keyword such as
    memory.link's ``from`` (:func:`venom_mem_core.converter.structure_command` renames)."""
    return f"{param}_" if keyword.iskeyword(param) else param


def _make(
    verb: Verb, name: str, doc: str | None, bases: tuple[type, ...] = (Command,)
) -> type[Command]:
    fields = {field_name(p.name): _field(verb, p) for p in _params(verb)}
    made: type[Command] = attrs.make_class(name, fields, bases=bases, frozen=True, kw_only=True)
    made.VERB = verb.name
    made.__module__ = __name__
    made.__doc__ = doc or f"The checked params of {verb.name}."
    return made


_DECLARED: dict[str, type[Command]] = {}


def _core_verb(name: str) -> Verb:
    verb = MANIFEST.verb(name)
    if verb is None or verb.use_case is None:
        raise TypeError(f"{name} is no core verb of the manifest: it has no command")
    return verb


def derived(verb_name: str) -> Callable[[type[C]], type[C]]:
    """Make core verb ``verb_name``'s command from the manifest, checking the Python types
    the decorated class declares for mypy (names and types: the manifest's order and
    defaults are taken, not restated)."""

    def make(declared: type[C]) -> type[C]:
        verb = _core_verb(verb_name)
        wanted = {field_name(p.name): field_type(verb, p) for p in _params(verb)}
        stated = _annotations(declared)
        if stated != wanted:
            raise TypeError(
                f"{declared.__name__} ({verb_name}) declares fields unlike the manifest's "
                f"params: {'; '.join(_differences(stated, wanted))}"
            )
        made = _make(verb, declared.__name__, declared.__doc__, declared.__bases__)
        _DECLARED[verb_name] = made
        return made  # type: ignore[return-value]  # the declared class, made from the manifest

    return make


def _annotations(declared: type[Command]) -> dict[str, Any]:
    """The field types ``declared`` and its bases below :class:`Command` state."""
    found: dict[str, Any] = {}
    for klass in reversed(declared.__mro__):
        if issubclass(klass, Command) and klass is not Command:
            found.update(inspect.get_annotations(klass, eval_str=True))
    return found


def _differences(stated: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    found = []
    for name in [*wanted, *(n for n in stated if n not in wanted)]:
        if name not in stated:
            found.append(f"{name} is missing")
        elif name not in wanted:
            found.append(f"{name} is no param")
        elif stated[name] != wanted[name]:
            found.append(f"{name}: {stated[name]} where the manifest gives {wanted[name]}")
    return found


def _class_name(verb: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[._]", verb))


# -- memories -----------------------------------------------------------------------------


@derived("memory.add")
class AddMemory(Command):
    space: str
    content: str
    kind: str
    title: str | None
    tags: Strings | None
    session: SessionId | None
    importance: str | None  # normal, said by the use case (the manifest names none)
    branches: Strings | None
    supersedes: tuple[MemoryId, ...] | None
    origin: Origin | None


@derived("memory.get")
class GetMemory(Command):
    id: MemoryId
    revision: int | None
    include_deleted: bool


@derived("memory.update")
class UpdateMemory(Command):
    id: MemoryId
    revision: int
    content: str | None
    title: str | None
    kind: str | None
    tags: Strings | None
    importance: str | None
    branches: Strings | None


@derived("memory.delete")
class DeleteMemory(Command):
    id: MemoryId
    revision: int


@derived("memory.restore")
class RestoreMemory(Command):
    id: MemoryId


@derived("memory.history")
class MemoryHistory(Command):
    id: MemoryId


@derived("memory.replace")
class ReplaceMemory(Command):
    space: str
    old_text: str
    content: str


@derived("memory.forget")
class ForgetMemory(Command):
    space: str
    old_text: str


@derived("memory.link")
class LinkMemories(Command):
    from_: MemoryId
    to: MemoryId
    relation: str


@derived("memory.unlink")
class UnlinkMemories(Command):
    from_: MemoryId
    to: MemoryId
    relation: str


@derived("memory.related")
class RelatedMemories(Command):
    id: MemoryId
    include_unlinked: bool


@derived("memory.purge")
class PurgeMemory(Command):
    id: MemoryId


# -- search, list, context ----------------------------------------------------------------


class Filters(Command):
    """The filters memory.search and memory.list share (the manifest's FILTER_PARAMS)."""

    spaces: Strings | None
    kinds: Strings | None
    tags: Strings | None
    session: SessionId | None
    lineage: bool
    importances: Strings | None
    branch: str | None
    include_superseded: bool | None  # false, said by the use case


@derived("memory.search")
class SearchMemories(Filters):
    query: str
    mode: str
    query_mode: str | None  # the store's search.query_mode when absent
    fusion: str | None  # the store's search.fusion when absent
    limit: int


@derived("memory.list")
class ListMemories(Filters):
    include_deleted: bool
    after: MemoryId | None
    limit: int


@derived("memory.context")
class MemoryContext(Command):
    spaces: tuple[str, ...]
    branch: str | None
    kinds: Strings | None
    include_superseded: bool | None  # false, said by the use case
    budget: int


# -- spaces and the store -----------------------------------------------------------------


@derived("space.list")
class ListSpaces(Command):
    """No params."""


@derived("space.describe")
class DescribeSpace(Command):
    space: str
    description: str


@derived("space.deactivate")
class DeactivateSpace(Command):
    space: str


@derived("space.activate")
class ActivateSpace(Command):
    space: str


@derived("store.status")
class StoreStatus(Command):
    """No params."""


# -- sessions -----------------------------------------------------------------------------


@derived("session.start")
class StartSession(Command):
    harness: str
    harness_session: str | None
    parent: SessionId | None
    relation: str | None
    cwd: str | None


@derived("session.end")
class EndSession(Command):
    session: SessionId


@derived("session.get")
class GetSession(Command):
    session: SessionId


@derived("session.list")
class ListSessions(Command):
    harness: str | None
    harness_session: str | None
    parent: SessionId | None
    after: SessionId | None
    limit: int


@derived("session.chain")
class SessionChain(Command):
    session: SessionId


@derived("session.purge")
class PurgeSession(Command):
    session: SessionId


# -- principals ---------------------------------------------------------------------------


@derived("client.add")
class AddClient(Command):
    name: str
    grants: tuple[Grant, ...]
    ttl: int | None


@derived("client.list")
class ListClients(Command):
    """No params."""


@derived("client.remove")
class RemoveClient(Command):
    name: str


@derived("whoami")
class Whoami(Command):
    """No params."""


@derived("grant.issue")
class IssueGrant(Command):
    grants: tuple[Grant, ...]
    ttl: int
    label: str | None


@derived("grant.list")
class ListGrants(Command):
    """No params."""


@derived("grant.revoke")
class RevokeGrant(Command):
    principal: PrincipalId


COMMANDS: Mapping[str, type[Command]] = {
    verb.name: _DECLARED.get(verb.name) or _make(verb, _class_name(verb.name), None)
    for verb in MANIFEST.verbs
    if verb.use_case is not None
}
