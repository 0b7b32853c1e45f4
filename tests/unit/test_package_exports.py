"""The packages whose names are re-exported lazily (docs/adr/0037): each public name is
written once, as the ``from .module import name as name`` that mypy reads under the package's
``if TYPE_CHECKING:``, and the run time reads those same lines (venom_mem_core.exports), so
an export added there is both typed and importable.

In the manner of httpx's tests/test_exported_members.py.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from venom_mem_core.exports import typed_exports

LAZY_PACKAGES = (
    "venom_mem_core",
    "venom_mem_adapters.client",
    "venom_mem_adapters.config",
    "venom_mem_adapters.sql",
    "venom_mem_adapters.sqlite",
)
SRC = Path(__file__).resolve().parents[2] / "src"


def imports_mypy_reads(package: ModuleType) -> dict[str, str]:
    """``name: module`` for each relative import under the ``if TYPE_CHECKING:`` of the
    package's ``__init__``, by ``ast``: what the run time's line reading must agree with."""
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


def package_exports(package: ModuleType) -> dict[str, str]:
    assert package.__file__ is not None
    return typed_exports(package.__file__)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_the_run_time_reads_every_import_mypy_reads(name: str) -> None:
    package = importlib.import_module(name)
    exports = package_exports(package)
    assert exports == imports_mypy_reads(package)
    assert package.__all__ == sorted(exports)
    assert dir(package) == package.__all__


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_exported_name_is_what_its_module_defines(name: str) -> None:
    package = importlib.import_module(name)
    for export, module in package_exports(package).items():
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


def write_package(root: Path, typed_imports: str) -> None:
    """A lazy package ``shelf`` whose ``__init__`` types ``typed_imports``; its module
    ``_items`` defines ``Item`` and ``count``."""
    (root / "shelf").mkdir()
    (root / "shelf" / "__init__.py").write_text(
        "from venom_mem_core.exports import lazy_exports\n\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n"
        f"{textwrap.indent(typed_imports, '    ')}\n"
        "__getattr__, __dir__ = lazy_exports(__name__, __file__)\n",
        encoding="utf-8",
    )
    (root / "shelf" / "_items.py").write_text(
        '__all__ = ["Item", "count"]\n\n\nclass Item:\n    pass\n\n\n'
        "def count() -> int:\n    return 3\n",
        encoding="utf-8",
    )


def run_python(root: Path, code: str) -> subprocess.CompletedProcess[str]:
    environ = {"PYTHONPATH": f"{root}:{SRC}", "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-c", code]
    return subprocess.run(
        command, env=environ, capture_output=True, text=True, timeout=60, check=False
    )


def test_an_export_added_in_one_place_is_typed_and_importable(tmp_path: Path) -> None:
    """One line in the typed block: mypy (strict) sees ``count``'s own type, not ``Any``,
    and the run time finds it, without importing its module before it is asked for."""
    write_package(tmp_path, "from ._items import count as count\n")
    probe = (
        "import sys, shelf\n"
        "assert 'shelf._items' not in sys.modules\n"
        "print(shelf.__all__, shelf.count(), 'Item' in dir(shelf))"
    )
    ran = run_python(tmp_path, probe)
    assert (ran.returncode, ran.stdout) == (0, "['count'] 3 False\n"), ran.stderr
    assert "has no attribute 'Item'" in run_python(tmp_path, "import shelf; shelf.Item").stderr

    (tmp_path / "use.py").write_text("from shelf import count\n\nwrong: str = count()\n")
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "use.py"],
        cwd=tmp_path, env={"MYPYPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert 'expression has type "int", variable has type "str"' in checked.stdout, checked


def test_a_typed_import_the_run_time_cannot_read_is_an_import_error(tmp_path: Path) -> None:
    """Wrapped in parentheses, the line would be typed and never exported: it is refused."""
    write_package(tmp_path, "from ._items import (\n    count as count,\n)\n")
    ran = run_python(tmp_path, "import shelf; shelf.count")
    assert "ImportError" in ran.stderr, ran.stderr
    assert "'from ._items import (' is not 'from .module import name as name'" in ran.stderr
