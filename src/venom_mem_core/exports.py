"""A package's public names, each imported when first used (PEP 562).

A package ``__init__`` names each public name's module once, in its ``_EXPORTS`` table;
``__all__`` is ``sorted(_EXPORTS)``, and :func:`lazy_exports` gives the package its
``__getattr__`` and ``__dir__``. The ``TYPE_CHECKING`` imports beside the table are what mypy
reads; tests/unit/test_public_api.py holds them to it. Importing a package so stays as cheap
as its ``__init__``: the CLI's ``--json`` path and ``venom-mem mcp`` load only the modules
whose names they use.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public ``name`` is defined in
    its module ``exports[name]`` (relative to the package). A name once looked up is kept on
    the package, so the next lookup is an ordinary attribute."""
    names = sorted(exports)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__
