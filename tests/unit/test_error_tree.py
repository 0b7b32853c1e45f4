"""Every error code raised anywhere in src/ is in the tree drawn in errors.py's docstring, with
its class's exit code (httpx's way: the tree of failures is the module's documentation)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import venom_mem_core.errors
from venom_mem_core.errors import EXIT_CODES
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Type

SRC = Path(__file__).resolve().parents[2] / "src"
CODE_RE = re.compile(rf"^(?:{'|'.join(EXIT_CODES)})\.[a-z_]+$")
_CLASS_LINE = re.compile(r"^\s*[├└]── (\w+)\.\*\s+exit (\d+)\s+(.*)$")
_MORE_LINE = re.compile(r"^\s*│?\s+([a-z_, ]+)$")
# VenomError's constructors that take the part after the class.
_CONSTRUCTORS = {"param": "invalid_params", "not_found": "not_found"}


def tree() -> dict[str, tuple[int, set[str]]]:
    """Class -> (exit code, codes) as the docstring draws them."""
    drawn: dict[str, tuple[int, set[str]]] = {}
    cls: str | None = None
    for line in (venom_mem_core.errors.__doc__ or "").splitlines():
        if match := _CLASS_LINE.match(line):
            cls, names = match[1], match[3]
            drawn[cls] = (int(match[2]), set())
        elif cls is not None and (more := _MORE_LINE.match(line)):
            names = more[1]
        else:
            cls = None
            continue
        drawn[cls][1].update(f"{cls}.{name.strip()}" for name in names.split(",") if name.strip())
    return drawn


def _literal_codes(source: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if CODE_RE.match(node.value):
                yield node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _CONSTRUCTORS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "VenomError"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            yield _CONSTRUCTORS[node.func.attr] + "." + str(node.args[0].value)


def _types(type_: Type) -> Iterator[Type]:
    yield type_
    if type_.items is not None:
        yield from _types(type_.items)
    for field in type_.fields:
        yield from _types(field.type)


def raised_codes() -> dict[str, str]:
    """Every code src/ can raise -> where it is written: string literals shaped like a code,
    VenomError.param/.not_found's first argument, the grammar codes of the manifest's types
    (raised as ``invalid_params.<code>``) and ``denied.<right>`` for every verb's right."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for code in _literal_codes(path.read_text(encoding="utf-8")):
            found.setdefault(code, str(path.relative_to(SRC)))
    for verb in MANIFEST.verbs:
        if verb.right is not None:
            found.setdefault(f"denied.{verb.right}", f"manifest: {verb.name}'s right")
        for param in verb.params:
            for type_ in _types(param.type):
                if type_.code is not None:
                    found.setdefault(f"invalid_params.{type_.code}", f"manifest: {verb.name}")
    return found


def test_the_tree_has_every_class_with_its_exit_code() -> None:
    drawn = tree()
    assert {name: exit_code for name, (exit_code, _) in drawn.items()} == dict(EXIT_CODES)


def test_every_raised_code_is_in_the_tree() -> None:
    drawn = set().union(*(codes for _, codes in tree().values()))
    missing = {code: where for code, where in raised_codes().items() if code not in drawn}
    assert not missing, f"add these to the tree in errors.py: {missing}"


def test_the_tree_lists_no_code_nothing_raises() -> None:
    raised = set(raised_codes())
    drawn = set().union(*(codes for _, codes in tree().values()))
    # Raised through variables the scan can't follow: a usage error's kind (cli/app.py).
    through_variables = {"invalid_params.missing", "invalid_params.unknown"}
    assert drawn - raised - through_variables == set()


def test_the_scan_finds_codes_written_every_way() -> None:
    source = (
        'VenomError("failed.protocol", "m")\n'
        'VenomError.param("verb", "p", "m")\n'
        'VenomError.not_found("principal", "m")\n'
        'TIMEOUT = "unavailable.daemon_timeout"\n'
        'NOT_A_CODE = "failed to open"\n'
    )
    assert sorted(_literal_codes(source)) == [
        "failed.protocol",
        "invalid_params.verb",
        "not_found.principal",
        "unavailable.daemon_timeout",
    ]
