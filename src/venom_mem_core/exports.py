"""A package's public names, each imported when first used (PEP 562).

A package ``__init__`` names each public name once, as mypy reads it: a line
``from .module import name as name`` under its ``if TYPE_CHECKING:``. At run time that block
is skipped, and :func:`lazy_exports` gives the package its ``__getattr__`` and ``__dir__``,
which read the same lines from the package's source on the first lookup (its ``__all__``
too): adding a line exports a name to both. Importing a package so stays as cheap as its
``__init__``: the CLI's ``--json`` path and ``venom-mem mcp`` load only the modules whose
names they use, and reading the lines costs no more than a small module's import (``ast``
would cost the ``--json`` path two milliseconds).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["lazy_exports", "typed_exports"]

_BLOCK = "if TYPE_CHECKING:"
_EXPORT = "    from ."  # a re-export: one name a line, as itself (ruff's isort writes them so)


def typed_exports(source: str) -> dict[str, str]:
    """``name: module`` (relative to the package) for each ``from .module import name as
    name`` of the ``if TYPE_CHECKING:`` blocks of the file ``source``. A relative import
    there that is anything else is an ImportError, so no name is typed and never exported."""
    found: dict[str, str] = {}
    inside = False
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith(" "):
                inside = line.startswith(_BLOCK) or (inside and not line.strip())
            elif inside and line.startswith(_EXPORT):
                words = line.split()
                if len(words) != 6 or words[2:5:2] != ["import", "as"] or words[3] != words[5]:
                    shape = "'from .module import name as name', a line per name"
                    raise ImportError(f"{source}: {line.strip()!r} is not {shape}")
                found[words[3]] = words[1][1:]
    return found


def lazy_exports(package: str, source: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose ``__init__`` is the file
    ``source`` and whose public names are its typed re-exports (:func:`typed_exports`). A
    name once looked up is kept on the package, so the next lookup is an ordinary
    attribute."""
    read: dict[str, str] = {}

    def exports() -> dict[str, str]:
        if not read:
            read.update(typed_exports(source))
        return read

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(exports())
        elif (module := exports().get(name)) is not None:
            value = getattr(importlib.import_module(f".{module}", package), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(exports())

    return __getattr__, __dir__
