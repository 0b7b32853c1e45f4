"""Typed commands at the boundary: each core verb's command is held to its manifest params,
and the one converter turns its structure errors into ``invalid_params.*`` with the param."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import typing
from typing import Any

import attrs
import pytest

from venom_mem_core.commands import (
    COMMANDS,
    ID_PREFIXES,
    AddMemory,
    Command,
    MemoryId,
    SessionId,
)
from venom_mem_core.converter import structure_command
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest_types import Param, Type
from venom_mem_core.params import check_params
from venom_mem_core.records import Grant
from venom_mem_core.usecases.verbs import VERBS

CORE = {name: b for name, b in VERBS.items() if b.runs != "daemon"}


def _fields(cls: type[Command]) -> tuple[attrs.Attribute[Any], ...]:
    attrs.resolve_types(cls)
    found: tuple[attrs.Attribute[Any], ...] = attrs.fields(cls)
    return found


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _members(annotation: Any) -> set[Any]:
    """The types an annotation allows besides ``None``."""
    if not _is_union(annotation):
        return {annotation}
    return {a for a in typing.get_args(annotation) if a is not type(None)}


def _expected_type(type_: Type) -> set[Any]:
    """What a checked value of ``type_`` becomes in a command (IDs parsed, arrays tuples)."""
    if type_.id_prefix is not None:
        return {t for t, prefix in ID_PREFIXES.items() if prefix == type_.id_prefix}
    if type_.kind == "array":
        assert type_.items is not None
        item = Grant if type_.items.kind == "object" else str
        return {tuple[item, ...]}  # type: ignore[valid-type]  # item is a class here
    return {{"string": str, "integer": int, "boolean": bool}[type_.kind]}


def test_every_core_verb_has_one_command_and_no_daemon_verb_has_one() -> None:
    assert set(COMMANDS) == set(CORE)
    for name, cls in COMMANDS.items():
        assert name == cls.VERB
        assert attrs.has(cls)


@pytest.mark.parametrize("verb", sorted(CORE))
def test_a_commands_fields_are_its_verbs_params(verb: str) -> None:
    """Names in manifest order, required or optional, defaults and the types the checked
    values become: the manifest's, so the command states no rule of its own."""
    params: tuple[Param, ...] = CORE[verb].verb.params
    fields = _fields(COMMANDS[verb])
    assert [f.name for f in fields] == [p.name for p in params if not p.cli_only]
    for field, param in zip(fields, params, strict=False):
        assert field.kw_only, field.name
        if param.required:
            assert field.default is attrs.NOTHING, field.name
        else:
            assert field.default == param.default, field.name
        assert _members(field.type) == _expected_type(param.type), field.name
        optional = _is_union(field.type)
        assert optional == (not param.required and param.default is None), field.name


def test_commands_are_frozen_and_hold_tuples() -> None:
    cmd = structure_command("memory.add", {"space": "user", "content": "x", "tags": ["a"]})
    assert cmd == AddMemory(space="user", content="x", tags=["a"])
    assert isinstance(cmd, AddMemory)
    assert cmd.tags == ("a",)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        cmd.space = "other"  # type: ignore[misc]  # what the test proves impossible


@pytest.mark.parametrize("verb", sorted(CORE))
def test_each_manifest_example_structures_into_its_command(verb: str) -> None:
    for example in CORE[verb].verb.examples:
        checked = check_params(CORE[verb].verb, example["params"])
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
    """The CLI's path (the manifest, its checks, the registry the MCP catalog reads) never
    loads cattrs; making a command does."""
    probe = (
        "import sys\n"
        "import venom_mem_core, venom_mem_core.params, venom_mem_core.dispatch\n"
        "import venom_mem_core.usecases.verbs\n"
        "before = 'cattrs' in sys.modules\n"
        "from venom_mem_core.usecases.verbs import command\n"
        "command('whoami', {})\n"
        "print(before, 'cattrs' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(result.stdout.strip().lower().replace(" ", ",").join("[]")) == [
        False,
        True,
    ]
