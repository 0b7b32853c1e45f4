"""Every verb has an example in RFC-0020 section 9's form, and each one is a call the verb
accepts with a result of the verb's shape: help shows them as commands to paste."""

from __future__ import annotations

from typing import Any

import pytest

from venom_mem_cli.argv import parse_argv
from venom_mem_cli.helptext import command_line
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Type, Verb
from venom_mem_core.params import check_params

VERBS = list(MANIFEST.verbs)


@pytest.mark.parametrize("verb", VERBS, ids=[v.name for v in VERBS])
def test_every_verb_has_an_example_of_the_rfc_form(verb: Verb) -> None:
    assert verb.examples, verb.name
    for example in verb.examples:
        assert set(example) == {"params", "result"}
        if verb.local:
            continue
        check_params(verb, example["params"])
        _fits(example["result"], verb.result, verb.name)


@pytest.mark.parametrize("verb", [v for v in VERBS if not v.local and v.name != "hello"])
def test_the_example_command_line_parses_back_to_its_params(verb: Verb) -> None:
    import shlex

    for example in verb.examples:
        words = shlex.split(command_line(verb, example["params"]))[1:]
        parsed, params, _ = parse_argv(words)
        assert parsed == verb
        assert params == example["params"]


def _fits(value: Any, type_: Type, where: str) -> None:
    """The example result has only members the result type names, with their kinds."""
    if type_.kind == "object" and type_.fields and isinstance(value, dict):
        known = {f.name: f for f in type_.fields}
        assert set(value) <= set(known), (where, set(value) - set(known))
        for f in type_.fields:
            if f.required:
                assert f.name in value, (where, f.name)
            if f.name in value:
                _fits(value[f.name], f.type, f"{where}.{f.name}")
    elif type_.kind == "array" and type_.items is not None:
        assert isinstance(value, list), where
        for item in value:
            _fits(item, type_.items, where)
