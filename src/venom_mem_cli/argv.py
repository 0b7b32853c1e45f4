"""Command-line words to a verb and its params, from the manifest (CONTRACT section 6):
the CLI's one parser. The ``--json`` path calls it straight away and the rich-click commands
hand it their words (ADR 0027), so flag text becomes values here and nowhere else.

Strings are taken as given, integers parsed, booleans ``--x=true|false`` or bare ``--x``,
arrays and objects JSON text. Standard library only: the ``--json`` path uses this.

Habits beyond CONTRACT section 6 (ADR 0014): an array of strings also takes ``a,b`` and a
repeated singular flag (``--tag zig --tag build``), and a repeated array flag
accumulates as well (``--tags zig --tags build``); grants take ``--grant read:*`` repeated;
``--content -`` reads standard input and ``--content-file PATH`` a file, so the text isn't
bounded by the kernel's argv limit. Bare words are the items of a verb's first param when it
is an array of strings, required or of named choices (``setup claude-code codex``, ADR 0027).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Manifest, Param, Verb

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CLI_FLAGS",
    "HELP_FLAGS",
    "Extra",
    "add_extra",
    "convert",
    "extra_flags",
    "find_verb",
    "item",
    "missing_value",
    "parse_argv",
    "parse_words",
    "positional",
    "read_text_file",
    "split_command",
]

# Flags that belong to the CLI, not to a verb's params. ``--full-times`` only changes human
# output, so the --json path accepts and ignores it; ``--here``: here.py says for which verbs.
CLI_FLAGS = {"--json", "--full-times", "--here"}
HELP_FLAGS = {"-h", "--help"}  # with one, click's help is shown, on either path
FILE_PARAMS = ("content",)  # string params that also come from a file: --content-file PATH
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


class Extra:
    """A flag beyond a param's own: ``--tag`` (one item of ``tags``, repeatable) or
    ``--content-file`` (``content`` read from a file)."""

    __slots__ = ("flag", "param", "repeat")

    def __init__(self, flag: str, param: Param, repeat: bool) -> None:
        self.flag = flag
        self.param = param
        self.repeat = repeat

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")


def extra_flags(verb: Verb) -> list[Extra]:
    """The habit flags of a verb: a singular per array param (when no param has that name)
    and ``--<name>-file`` per file param."""
    names = {p.name for p in verb.params}
    extras: list[Extra] = []
    for param in verb.params:
        single = singular(param.name)
        if param.type.kind == "array" and single != param.name and single not in names:
            extras.append(Extra("--" + single.replace("_", "-"), param, repeat=True))
        if param.name in FILE_PARAMS:
            extras.append(Extra(param.flag + "-file", param, repeat=False))
    return extras


def singular(name: str) -> str:
    """``tags`` -> ``tag``, ``branches`` -> ``branch``, ``harnesses`` -> ``harness``."""
    if name.endswith(("ches", "shes", "sses", "xes")):
        return name[:-2]
    return name[:-1] if name.endswith("s") else name


def read_text_file(param: Param, path: str) -> str:
    """A file param's text: ``-`` is standard input. Bad bytes or a missing file name the
    flag, as every other usage error does."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except OSError as exc:
        raise VenomError.param(
            "type", param.name, f"{param.flag}-file can't read {path}: {exc.strerror}"
        ) from None
    except UnicodeDecodeError:
        raise VenomError.param("type", param.name, f"{param.flag}: {path} is not UTF-8") from None


def item(param: Param, text: str) -> Any:
    """One item of an array param from a repeated singular flag: ``--grant read:*`` is
    ``{"right":"read","scope":"*"}``, ``--tag zig`` is ``"zig"``."""
    items = param.type.items
    if items is not None and items.kind == "object":
        if text.startswith("{") or param.name != "grants":
            return convert(Param(param.name, "", items), text)  # one item as JSON text
        right, colon, scope = text.partition(":")
        if not colon or not right or not scope:
            raise VenomError.param(
                "type", param.name, f"--{param.name[:-1]} takes RIGHT:SCOPE, such as read:*"
            )
        return {"right": right, "scope": scope}
    return text


def convert(param: Param, text: str) -> Any:
    """One flag's text to the JSON value its param's type asks for."""
    kind = param.type.kind
    if kind == "string":
        if text == "-" and param.name in FILE_PARAMS:
            return read_text_file(param, "-")
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
    items = param.type.items
    if kind == "array" and items is not None and items.kind == "string" and text[:1] != "[":
        return [word.strip() for word in text.split(",") if word.strip()]  # --tags zig,build
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
    verb, words = split_command(argv, manifest)
    params, cli_flags = parse_words(verb, words)
    return verb, params, cli_flags


def split_command(argv: Sequence[str], manifest: Manifest = MANIFEST) -> tuple[Verb, list[str]]:
    """The verb the leading words name, and the words after them."""
    found = find_verb(argv, manifest)
    if found is None:
        raise VenomError(
            "invalid_params.verb",
            f"unknown command: {' '.join(argv[:2]) or '(none)'}",
            {"fix": "venom-mem --help"},
        )
    verb, used = found
    return verb, list(argv[used:])


def positional(verb: Verb) -> Param | None:
    """The param that bare words fill, item by item: the first, when it is an array of
    strings that is required (``memory context user``) or of named choices (``setup
    claude-code codex``, optional for ``setup --check``)."""
    first = verb.params[0] if verb.params else None
    items = first.type.items if first is not None and first.type.kind == "array" else None
    if first is None or items is None or items.kind != "string":
        return None
    return first if first.required or items.choices else None


def parse_words(verb: Verb, words: Sequence[str]) -> tuple[dict[str, Any], set[str]]:
    """The words after the verb's name: its params (cli_only ones too, the caller acts on
    them) and the CLI's own flags given (``--json``, ``--full-times``, ``--here``). The one
    place where flag text becomes values: the rich-click commands hand their words here."""
    by_flag = {p.flag: p for p in verb.params}
    extras = {e.flag: e for e in extra_flags(verb)}
    bare = positional(verb)
    params: dict[str, Any] = {}
    cli_flags: set[str] = set()
    rest = list(words)
    i = 0
    while i < len(rest):
        word = rest[i]
        flag, eq, inline = word.partition("=")
        if flag in CLI_FLAGS and not eq:
            cli_flags.add(flag)
            i += 1
            continue
        if bare is not None and not word.startswith("-"):
            add_extra(params, Extra(bare.flag, bare, repeat=True), word)
            i += 1
            continue
        extra = extras.get(flag)
        if extra is not None:
            value = inline if eq else (rest[i + 1] if i + 1 < len(rest) else None)
            if value is None or value in CLI_FLAGS:
                raise VenomError.param("missing", extra.param.name, f"{flag} needs a value")
            add_extra(params, extra, value)
            i += 1 if eq else 2
            continue
        param = by_flag.get(flag)
        if param is None or not flag.startswith("--"):
            name = flag.lstrip("-").replace("-", "_") or word
            raise VenomError.param("unknown", name, f"{verb.name} has no option {flag}")
        following = rest[i + 1] if i + 1 < len(rest) else None
        if eq:
            value = inline
        elif param.type.kind == "boolean":
            # Bare ``--x`` is true; ``--x true`` reads as ``--x=true``.
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
        converted = convert(param, value)
        earlier = params.get(param.name)
        if isinstance(earlier, list) and isinstance(converted, list):
            # ``--tags a --tags b`` means both, as ``--tag a --tag b`` does.
            earlier.extend(converted)
        else:
            params[param.name] = converted
        i += 1
    return params, cli_flags


def add_extra(params: dict[str, Any], extra: Extra, value: str) -> None:
    """Fold one habit flag's value into ``params``: items append to their array."""
    param = extra.param
    if not extra.repeat:
        params[param.name] = read_text_file(param, value)
        return
    current = params.setdefault(param.name, [])
    if not isinstance(current, list):
        raise VenomError.param("type", param.name, f"{param.flag} and {extra.flag} don't mix")
    current.append(item(param, value))
