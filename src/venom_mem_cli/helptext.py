"""What ``--help`` says beyond the summaries: the shape of a JSON flag, and each verb's
manifest examples as command lines a person can paste (RFC-0020 section 9's ``examples``)."""

from __future__ import annotations

import json
import shlex
from typing import Any

from venom_mem_core.manifest_types import Type, Verb

from .argv import positional

__all__ = ["command_line", "example_epilog", "json_example", "json_shape"]

_RESULT_SHOWN = 90  # a result longer than this is left out of the help: it would wrap


def json_shape(type_: Type) -> str:
    """``[{"right": "read|write|admin", "scope": "TEXT"}, ...]`` for a grants flag."""
    if type_.kind == "array":
        inner = json_shape(type_.items) if type_.items is not None else "ANY"
        return f"[{inner}, ...]"
    if type_.kind == "object" and type_.fields:
        members = ", ".join(f'"{f.name}": {json_shape(f.type)}' for f in type_.fields)
        return "{" + members + "}"
    if type_.choices:
        return '"' + "|".join(type_.choices) + '"'
    return {"string": '"TEXT"', "integer": "INT", "number": "NUMBER", "boolean": "BOOL"}.get(
        type_.kind, "JSON"
    )


def json_example(verb: Verb, name: str) -> str:
    """A JSON flag's value as the verb's examples give it, else its shape."""
    for example in verb.examples:
        value = (example.get("params") or {}).get(name)
        if value is not None:
            return json.dumps(value, separators=(",", ":"))
    param = verb.param(name)
    return json_shape(param.type) if param is not None else "JSON"


def _words(verb: Verb, params: dict[str, Any]) -> list[str]:
    bare = positional(verb)
    items = params.get(bare.name) if bare is not None else None
    words = ["venom-mem", *verb.name.split("."), *(items or [])]  # setup claude-code codex
    for name, value in params.items():
        param = verb.param(name)
        flag = param.flag if param is not None else "--" + name.replace("_", "-")
        if param is not None and param is bare and items:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            words += [flag, ",".join(value)]  # the habit: --tags zig,build
        elif isinstance(value, list) and all(_is_grant(v) for v in value) and name == "grants":
            for grant in value:  # the habit: --grant read:* --grant write:*
                words += ["--grant", f"{grant['right']}:{grant['scope']}"]
        elif isinstance(value, bool):
            words.append(flag if value else f"{flag}=false")
        elif isinstance(value, dict | list):
            words += [flag, json.dumps(value, separators=(",", ":"))]
        else:
            words += [flag, str(value)]
    return words


def _is_grant(value: object) -> bool:
    return isinstance(value, dict) and set(value) == {"right", "scope"}


def command_line(verb: Verb, params: dict[str, Any]) -> str:
    """The command line that calls ``verb`` with ``params``, quoted for a POSIX shell."""
    return shlex.join(_words(verb, params))


def example_epilog(verb: Verb) -> str:
    """The examples block under a verb's help: each call, and its result when short."""
    if verb.local:
        return ""
    lines: list[str] = []
    for example in verb.examples:
        lines.append("$ " + command_line(verb, example.get("params") or {}))
        result = json.dumps(example.get("result"), ensure_ascii=False, separators=(",", ":"))
        if len(result) <= _RESULT_SHOWN:
            lines.append(f"  with --json: {result}")
    return "\n".join(lines)
