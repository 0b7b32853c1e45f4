"""The packages whose names are re-exported lazily (docs/adr/0037): each one's table, its
``__all__`` and what mypy reads agree, and each name resolves to what its module defines.

In the manner of httpx's tests/test_exported_members.py. A package ``__init__`` writes each
public name's module once (``_EXPORTS``); ``__all__`` and ``__getattr__`` derive from it
(venom_mem_core.exports). The ``TYPE_CHECKING`` imports beside it are the one thing that
cannot derive from it (mypy reads only imports), so this holds them to it: a name typed but
never exported would pass mypy and fail at run time, and the reverse would be typed ``Any``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

LAZY_PACKAGES = (
    "venom_mem_core",
    "venom_mem_adapters.client",
    "venom_mem_adapters.config",
    "venom_mem_adapters.sql",
    "venom_mem_adapters.sqlite",
)


def typed_exports(package: ModuleType) -> dict[str, str]:
    """``name: module`` for each ``from .module import name as name`` under the
    ``if TYPE_CHECKING:`` of the package's ``__init__``."""
    assert package.__file__ is not None
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.level == 1:
                    for alias in statement.names:
                        assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
                        assert statement.module is not None
                        found[alias.name] = statement.module
    return found


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_all_the_table_and_the_typed_imports_agree(name: str) -> None:
    package = importlib.import_module(name)
    table = package._EXPORTS
    assert list(table) == sorted(table)  # written sorted, so a reader finds a name
    assert package.__all__ == sorted(table)
    assert dir(package) == package.__all__
    assert typed_exports(package) == table


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_exported_name_is_what_its_module_defines(name: str) -> None:
    package = importlib.import_module(name)
    for export, module in package._EXPORTS.items():
        source = importlib.import_module(f"{name}.{module}")
        assert getattr(package, export) is getattr(source, export), export
        assert export in source.__all__, f"{name}.{module} does not list {export} in __all__"
        value = getattr(source, export)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == source.__name__, export


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_an_unknown_name_is_an_attribute_error(name: str) -> None:
    package = importlib.import_module(name)
    with pytest.raises(AttributeError, match="NoSuchName"):
        _ = package.NoSuchName
