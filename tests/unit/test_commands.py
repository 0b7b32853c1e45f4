"""Typed commands at the boundary: each core verb's command is made from its manifest params
(a class that declares other types is refused at import; each is made on first use, and
every one here), and the one converter turns its
structure errors into ``invalid_params.*`` with the param."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, cast

import attrs
import pytest
from attrs import AttrsInstance

from venom_mem_core.commands import (
    COMMANDS,
    ID_PREFIXES,
    AddMemory,
    Command,
    ListMemories,
    MemoryId,
    SessionId,
    derived,
    field_name,
)
from venom_mem_core.converter import structure_command
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.params import check_params
from venom_mem_core.records import Grant

CORE = {verb.name: verb for verb in MANIFEST.verbs if verb.use_case is not None}


def _run(probe: str) -> str:
    """What Python code ``probe`` prints, run in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def _fields(cls: type[Command]) -> tuple[attrs.Attribute[Any], ...]:
    found: tuple[attrs.Attribute[Any], ...] = attrs.fields(cast("type[AttrsInstance]", cls))
    return found


def test_every_verb_with_a_use_case_has_a_command_made_from_its_params() -> None:
    assert set(COMMANDS) == set(CORE)
    for name, cls in COMMANDS.items():
        assert (cls.VERB, attrs.has(cls)) == (name, True)
        params = [p for p in CORE[name].params if not p.cli_only]
        # A param named for a Python keyword (memory.link's from) is the field from_.
        assert [f.name for f in _fields(cls)] == [field_name(p.name) for p in params]
        for field, param in zip(_fields(cls), params, strict=True):
            assert field.kw_only, field.name
            assert field.default == (attrs.NOTHING if param.required else param.default)


def test_a_command_is_made_on_first_use_as_the_one_class_of_its_verb() -> None:
    """Importing the module makes no command (docs/adr/0038): each is made when first looked
    up, through COMMANDS or its name on the module, and is the same class both ways."""
    probe = (
        "import attrs, venom_mem_core.commands as c\n"
        "made = [n for n in ('AddMemory', 'SearchMemories') if n in vars(c)]\n"
        "search = c.SearchMemories\n"
        "print(made, attrs.has(search), search is c.COMMANDS['memory.search'],\n"
        "      issubclass(search, c.Filters), 'AddMemory' in vars(c), 'SearchMemories' in vars(c))"
    )
    assert _run(probe).split() == ["[]", "True", "True", "True", "False", "True"]
    assert "memory.add" in COMMANDS  # without making it, as a dict's membership
    assert COMMANDS["memory.add"] is AddMemory
    with pytest.raises(KeyError):
        COMMANDS["ping"]  # a daemon's own verb has no command


def test_defaults_come_from_the_manifest() -> None:
    limit = next(p for p in CORE["memory.list"].params if p.name == "limit")
    assert ListMemories().limit == limit.default == 50  # written once, in the manifest
    assert AddMemory(space="user", content="x").kind == "note"
    assert AddMemory(space="user", content="x").importance is None  # the use case says normal


def test_ids_lists_and_grants_become_their_python_types() -> None:
    types_ = {f.name: f.type for f in _fields(ListMemories)}
    assert types_["session"] == SessionId | None
    assert types_["after"] == MemoryId | None
    assert types_["spaces"] == tuple[str, ...] | None
    assert types_["limit"] is int
    assert {f.name: f.type for f in _fields(COMMANDS["grant.issue"])}["grants"] == tuple[Grant, ...]
    assert ID_PREFIXES[SessionId] == "s"


def test_a_class_declaring_other_types_than_the_manifest_is_refused() -> None:
    class WrongLimit(Command):
        spaces: tuple[str, ...] | None
        limit: str  # the manifest's limit is an integer

    wrong = r"WrongLimit \(memory.list\).*limit: <class 'str'> where the manifest gives <cl"
    with pytest.raises(TypeError, match=wrong):
        derived("memory.list")(WrongLimit)

    class Extra(Command):
        space: str
        content: str
        colour: str

    with pytest.raises(TypeError, match=r"memory.add.*colour is no param"):
        derived("memory.add")(Extra)

    with pytest.raises(TypeError, match="ping is no core verb"):
        derived("ping")(Extra)


def test_commands_are_frozen_and_hold_tuples() -> None:
    cmd = structure_command("memory.add", {"space": "user", "content": "x", "tags": ["a"]})
    assert cmd == AddMemory(space="user", content="x", tags=["a"])
    assert isinstance(cmd, AddMemory)
    assert cmd.tags == ("a",)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        cmd.space = "other"  # what the test proves impossible (mypy sees no attrs class)


@pytest.mark.parametrize("verb", sorted(CORE))
def test_each_manifest_example_structures_into_its_command(verb: str) -> None:
    for example in CORE[verb].examples:
        checked = check_params(CORE[verb], example["params"])
        cmd = structure_command(verb, checked)
        assert isinstance(cmd, COMMANDS[verb])


def test_ids_arrive_parsed() -> None:
    cmd = structure_command("memory.list", {"session": "s7", "after": "m12"})
    assert (cmd.session, cmd.after) == (SessionId(7), MemoryId(12))  # type: ignore[attr-defined]
    revoke = structure_command("grant.revoke", {"principal": "g3"})
    assert revoke.principal == 3  # type: ignore[attr-defined]
    issue = structure_command("grant.issue", {"grants": [{"right": "read", "scope": "*"}]})
    assert issue.grants == (Grant(right="read", scope="*"),)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("value", "number"), [("m1", 1), ("m42", 42), ("m" + "9" * 18, 10**18 - 1)]
)
def test_an_id_is_parsed_once_into_its_number(value: str, number: int) -> None:
    assert structure_command("memory.get", {"id": value}).id == number  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "value", ["", "m", "m0", "m01", "x1", "s1", "m-1", "m1a", "m\u0661", "m" + "1" * 20, 12]
)
def test_a_malformed_id_is_refused_by_the_converter_too(value: object) -> None:
    with pytest.raises(VenomError) as raised:
        structure_command("memory.get", {"id": value})
    assert (raised.value.code, raised.value.data["param"]) == ("invalid_params.type", "id")


# Params that reach the converter unchecked: it refuses them itself, never guessing.
UNCHECKED = [
    ("memory.add", {"space": "user"}, "missing", "content"),
    ("memory.add", {"space": "user", "content": "x", "colour": 1}, "unknown", "colour"),
    ("memory.add", {"space": "user", "content": 7}, "type", "content"),
    ("memory.add", {"space": "user", "content": "x", "tags": "a,b"}, "type", "tags"),
    ("memory.add", {"space": "user", "content": "x", "tags": [1]}, "type", "tags"),
    ("memory.add", {"space": "user", "content": "x", "session": "m3"}, "type", "session"),
    ("memory.get", {"id": "m0"}, "type", "id"),
    ("memory.get", {"id": "m12", "revision": True}, "type", "revision"),
    ("memory.get", {"id": "m12", "revision": "2"}, "type", "revision"),
    ("memory.get", {"id": "m12", "include_deleted": 1}, "type", "include_deleted"),
    ("memory.context", {"spaces": "user"}, "type", "spaces"),
    ("grant.issue", {"grants": 3}, "type", "grants"),
    ("grant.issue", {"grants": [{"right": "read"}]}, "missing", "grants"),
    ("grant.issue", {"grants": [{"right": "read", "scope": "*", "x": 1}]}, "unknown", "grants"),
    ("whoami", {"who": "me"}, "unknown", "who"),
    ("memory.get", ["m1"], "type", "params"),
]


@pytest.mark.parametrize(("verb", "params", "code", "param"), UNCHECKED)
def test_structure_errors_are_invalid_params_naming_the_param(
    verb: str, params: Any, code: str, param: str
) -> None:
    with pytest.raises(VenomError) as raised:
        structure_command(verb, params)
    assert raised.value.code == f"invalid_params.{code}"
    assert raised.value.data["param"] == param
    assert "Traceback" not in str(raised.value)


def test_only_the_boundary_imports_cattrs() -> None:
    """The CLI's path (the manifest, its checks) and the core's dispatch table never load
    cattrs; making a command does."""
    probe = (
        "import sys\n"
        "import venom_mem_core, venom_mem_core.params, venom_mem_core.dispatch\n"
        "from venom_mem_core.usecases.verbs import use_cases\n"
        "use_cases()\n"
        "before = 'cattrs' in sys.modules\n"
        "from venom_mem_core.usecases.verbs import command\n"
        "command('whoami', {})\n"
        "print(before, 'cattrs' in sys.modules)"
    )
    assert json.loads(_run(probe).strip().lower().replace(" ", ",").join("[]")) == [
        False,
        True,
    ]
