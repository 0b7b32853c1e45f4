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
fields' Python types only, checked against the manifest's when this module is imported (a
mismatch, a missing or an extra field is a ``TypeError`` naming the verb). The attrs class
itself is made from the manifest when a command is first used (:data:`COMMANDS`, or the
class's name on this module): making all 34 at import was about a tenth of a daemon's start
(docs/adr/0038), and a daemon uses a few. tests/unit/test_commands.py makes every one.

The daemon's own verbs (ping, events, config.*, ...) have no command: they read their
checked params where the daemon keeps its state.
"""

# No ``from __future__ import annotations``: :func:`derived` compares the annotations, as
# the objects they are, with the types derived from the manifest.

import inspect
import keyword
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
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


def _core_verb(name: str) -> Verb:
    verb = MANIFEST.verb(name)
    if verb is None or verb.use_case is None:
        raise TypeError(f"{name} is no core verb of the manifest: it has no command")
    return verb


def _checked(verb_name: str, declared: type[Command]) -> Verb:
    """Core verb ``verb_name``, once the Python types ``declared`` states for mypy are the
    ones its params give (names and types: the manifest's order and defaults are taken,
    not restated)."""
    verb = _core_verb(verb_name)
    wanted = {field_name(p.name): field_type(verb, p) for p in _params(verb)}
    stated = _annotations(declared)
    if stated != wanted:
        raise TypeError(
            f"{declared.__name__} ({verb_name}) declares fields unlike the manifest's "
            f"params: {'; '.join(_differences(stated, wanted))}"
        )
    return verb


def derived(verb_name: str) -> Callable[[type[C]], type[C]]:
    """Make core verb ``verb_name``'s command from the manifest, checking the Python types
    the decorated class declares for mypy (:func:`_checked`)."""

    def make(declared: type[C]) -> type[C]:
        verb = _checked(verb_name, declared)
        return _make(  # type: ignore[return-value]  # the declared class, made from the manifest
            verb, declared.__name__, declared.__doc__, declared.__bases__
        )

    return make


# The classes below as declared, by verb: checked at import, made on first use.
_DECLARED: dict[str, type[Command]] = {}


def _declared(verb_name: str) -> Callable[[type[C]], type[C]]:
    """:func:`derived`, but only the check now: the class is made when first used."""

    def declare(declared: type[C]) -> type[C]:
        _checked(verb_name, declared)
        _DECLARED[verb_name] = declared
        return declared

    return declare


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


@_declared("memory.add")
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


@_declared("memory.get")
class GetMemory(Command):
    id: MemoryId
    revision: int | None
    include_deleted: bool


@_declared("memory.update")
class UpdateMemory(Command):
    id: MemoryId
    revision: int
    content: str | None
    title: str | None
    kind: str | None
    tags: Strings | None
    importance: str | None
    branches: Strings | None


@_declared("memory.delete")
class DeleteMemory(Command):
    id: MemoryId
    revision: int


@_declared("memory.restore")
class RestoreMemory(Command):
    id: MemoryId


@_declared("memory.history")
class MemoryHistory(Command):
    id: MemoryId


@_declared("memory.replace")
class ReplaceMemory(Command):
    space: str
    old_text: str
    content: str


@_declared("memory.forget")
class ForgetMemory(Command):
    space: str
    old_text: str


@_declared("memory.link")
class LinkMemories(Command):
    from_: MemoryId
    to: MemoryId
    relation: str


@_declared("memory.unlink")
class UnlinkMemories(Command):
    from_: MemoryId
    to: MemoryId
    relation: str


@_declared("memory.related")
class RelatedMemories(Command):
    id: MemoryId
    include_unlinked: bool


@_declared("memory.purge")
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


@_declared("memory.search")
class SearchMemories(Filters):
    query: str
    mode: str
    query_mode: str | None  # the store's search.query_mode when absent
    fusion: str | None  # the store's search.fusion when absent
    limit: int


@_declared("memory.list")
class ListMemories(Filters):
    include_deleted: bool
    after: MemoryId | None
    limit: int


@_declared("memory.context")
class MemoryContext(Command):
    spaces: tuple[str, ...]
    branch: str | None
    kinds: Strings | None
    include_superseded: bool | None  # false, said by the use case
    budget: int


# -- spaces and the store -----------------------------------------------------------------


@_declared("space.list")
class ListSpaces(Command):
    """No params."""


@_declared("space.describe")
class DescribeSpace(Command):
    space: str
    description: str


@_declared("space.deactivate")
class DeactivateSpace(Command):
    space: str


@_declared("space.activate")
class ActivateSpace(Command):
    space: str


@_declared("store.status")
class StoreStatus(Command):
    """No params."""


# -- sessions -----------------------------------------------------------------------------


@_declared("session.start")
class StartSession(Command):
    harness: str
    harness_session: str | None
    parent: SessionId | None
    relation: str | None
    cwd: str | None


@_declared("session.end")
class EndSession(Command):
    session: SessionId


@_declared("session.get")
class GetSession(Command):
    session: SessionId


@_declared("session.list")
class ListSessions(Command):
    harness: str | None
    harness_session: str | None
    parent: SessionId | None
    after: SessionId | None
    limit: int


@_declared("session.chain")
class SessionChain(Command):
    session: SessionId


@_declared("session.purge")
class PurgeSession(Command):
    session: SessionId


# -- principals ---------------------------------------------------------------------------


@_declared("client.add")
class AddClient(Command):
    name: str
    grants: tuple[Grant, ...]
    ttl: int | None


@_declared("client.list")
class ListClients(Command):
    """No params."""


@_declared("client.remove")
class RemoveClient(Command):
    name: str


@_declared("whoami")
class Whoami(Command):
    """No params."""


@_declared("grant.issue")
class IssueGrant(Command):
    grants: tuple[Grant, ...]
    ttl: int
    label: str | None


@_declared("grant.list")
class ListGrants(Command):
    """No params."""


@_declared("grant.revoke")
class RevokeGrant(Command):
    principal: PrincipalId


class _Commands(Mapping[str, type[Command]]):
    """Each core verb's command by verb name, in the manifest's order, each made on first
    lookup (once: a lock keeps two threads from making two classes for one verb)."""

    def __init__(self) -> None:
        self._verbs = {verb.name: verb for verb in MANIFEST.verbs if verb.use_case is not None}
        self._made: dict[str, type[Command]] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> type[Command]:
        made = self._made.get(name)
        if made is None:
            made = self._make(name)
        return made

    def _make(self, name: str) -> type[Command]:
        verb = self._verbs[name]  # a KeyError, as a dict's, for no core verb
        with self._lock:
            made = self._made.get(name)
            if made is None:
                declared = _DECLARED.get(name)
                if declared is None:
                    made = _make(verb, _class_name(name), None)
                else:
                    made = _make(verb, declared.__name__, declared.__doc__, declared.__bases__)
                    globals()[declared.__name__] = made  # the module's name, from now on
                self._made[name] = made
        return made

    def __contains__(self, name: object) -> bool:  # without making the command
        return name in self._verbs

    def __iter__(self) -> Iterator[str]:
        return iter(self._verbs)

    def __len__(self) -> int:
        return len(self._verbs)


COMMANDS: Mapping[str, type[Command]] = _Commands()

# A declared class's name on this module is its command, made on first lookup: the names
# go from the module here, and the module's ``__getattr__`` makes each when it is asked for.
# mypy reads the declared classes, which stand for the made ones, and no ``__getattr__``
# (which would make every name of the module look defined to it).
_BY_CLASS = {declared.__name__: verb for verb, declared in _DECLARED.items()}
if not TYPE_CHECKING:
    for _name in _BY_CLASS:
        del globals()[_name]
    del _name

    def __getattr__(name: str) -> type[Command]:
        verb = _BY_CLASS.get(name)
        if verb is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return COMMANDS[verb]

    def __dir__() -> list[str]:
        return sorted({*globals(), *_BY_CLASS})
