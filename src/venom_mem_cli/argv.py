"""Command-line words to a verb and its params, from the manifest (CONTRACT section 6).

Strings are taken as given, integers parsed, booleans ``--x=true|false`` or bare ``--x``,
arrays and objects JSON text. Standard library only: the ``--json`` path uses this.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Manifest, Param, Verb

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CLI_FLAGS", "convert", "find_verb", "missing_value", "parse_argv"]

# Flags that belong to the CLI, not to a verb's params (--here: here.py says for which verbs).
CLI_FLAGS = {"--json", "--here"}
TRUE_WORDS = {"true", "1", "yes"}
FALSE_WORDS = {"false", "0", "no"}


def find_verb(words: Sequence[str], manifest: Manifest = MANIFEST) -> tuple[Verb, int] | None:
    """The verb named by the leading words and how many words name it."""
    if len(words) >= 2 and not words[1].startswith("-"):
        verb = manifest.verb(f"{words[0]}.{words[1]}")
        if verb is not None:
            return verb, 2
    if words:
        verb = manifest.verb(words[0])
        if verb is not None:
            return verb, 1
    return None


def convert(param: Param, text: str) -> Any:
    """One flag's text to the JSON value its param's type asks for."""
    kind = param.type.kind
    if kind == "string":
        return text
    if kind == "integer":
        # Only ASCII digits: int() would also take "1_0", " 3" and other scripts' digits.
        digits = text[1:] if text[:1] in ("-", "+") else text
        if not (digits.isascii() and digits.isdigit()):
            raise VenomError.param(
                "type", param.name, f"{param.flag} takes an integer, got {text!r}"
            )
        return int(text)
    if kind == "number":
        number = _number(text)
        if number is None:
            raise VenomError.param("type", param.name, f"{param.flag} takes a number, got {text!r}")
        return number
    if kind == "boolean":
        word = text.lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise VenomError.param("type", param.name, f"{param.flag} takes true or false")
    try:
        return json.loads(text)
    except ValueError:
        raise VenomError.param(
            "type", param.name, f'{param.flag} takes JSON text, such as \'["a","b"]\''
        ) from None


def _number(text: str) -> float | None:
    """A finite decimal number in ASCII, or ``None``."""
    if not text.isascii() or "_" in text or text != text.strip():
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def missing_value(param: Param) -> VenomError:
    return VenomError.param("missing", param.name, f"{param.flag} needs a value")


def parse_argv(
    argv: Sequence[str], manifest: Manifest = MANIFEST
) -> tuple[Verb, dict[str, Any], set[str]]:
    """``memory add --space user --content hi --json`` -> (memory.add, params, {"--json"})."""
    found = find_verb(argv, manifest)
    if found is None:
        raise VenomError(
            "invalid_params.verb",
            f"unknown command: {' '.join(argv[:2]) or '(none)'}",
            {"fix": "venom-mem --help"},
        )
    verb, used = found
    by_flag = {p.flag: p for p in verb.params}
    params: dict[str, Any] = {}
    cli_flags: set[str] = set()
    rest = list(argv[used:])
    i = 0
    while i < len(rest):
        word = rest[i]
        flag, eq, inline = word.partition("=")
        if flag in CLI_FLAGS and not eq:
            cli_flags.add(flag)
            i += 1
            continue
        param = by_flag.get(flag)
        if param is None or not flag.startswith("--"):
            name = flag.lstrip("-").replace("-", "_") or word
            raise VenomError.param("unknown", name, f"{verb.name} has no option {flag}")
        following = rest[i + 1] if i + 1 < len(rest) else None
        if eq:
            value = inline
        elif param.type.kind == "boolean":
            # Bare ``--x`` is true; ``--x true`` reads as the human path's parser reads it.
            if following is not None and following.lower() in TRUE_WORDS | FALSE_WORDS:
                i += 1
                value = following
            else:
                value = "true"
        elif following is None or following in CLI_FLAGS:
            # "--query --json": the flag has no value; --json is not the text to search.
            raise missing_value(param)
        else:
            i += 1
            value = following
        params[param.name] = convert(param, value)
        i += 1
    return verb, params, cli_flags
