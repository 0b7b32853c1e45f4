"""The import graph of src/ (docs/adr/0034): no cycles, and the database drivers imported
only inside their own backend's package.

Every ``import`` counts, wherever it is written: at the top, under ``if TYPE_CHECKING:``, or
inside a function (a lazy import is still an arrow). An import names the module it imports
(``from pkg import name`` names ``pkg.name`` when that is a module, else ``pkg``); a parent
package's ``__init__`` that runs on the way is not an arrow of the importing module, as in
grimp and import-linter.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

# The drivers, and the one package each may be imported from.
DRIVERS = {
    "apsw": "venom_mem_adapters.sqlite",
    "psycopg": "venom_mem_adapters.postgres",
    "psycopg_pool": "venom_mem_adapters.postgres",
}


def modules(root: Path) -> dict[str, Path]:
    """Every module under ``root`` by its dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_names(name: str, path: Path, known: Collection[str]) -> Iterator[tuple[str, int]]:
    """Every module ``name``'s source imports, absolute, with its line: for ``from m import
    x``, ``m.x`` when that is a module under the root, else ``m``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                yield (submodule if submodule in known else module), node.lineno


def import_graph(root: Path) -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """Arrows between the modules under ``root``, and every import of a module outside it
    as ``(module, line, imported)``."""
    known = modules(root)
    tops = {name.split(".")[0] for name in known}
    arrows: dict[str, set[str]] = {name: set() for name in known}
    outside: list[tuple[str, int, str]] = []
    for name, path in known.items():
        for target, line in imported_names(name, path, known):
            if target in known:
                if target != name:
                    arrows[name].add(target)
            elif target.split(".")[0] not in tops:
                outside.append((name, line, target))
    return arrows, outside


def cycles(arrows: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(arrows):
        if start in index:
            continue
        work = [(start, iter(sorted(arrows[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(arrows[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.add(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(frozenset(members))
    return found


def a_cycle(arrows: Mapping[str, set[str]], members: frozenset[str]) -> list[str]:
    """One closed path through ``members``, for the failure message."""
    start = min(members)
    path, seen = [start], {start}
    while True:
        successors = sorted(t for t in arrows[path[-1]] if t in members)
        if start in successors and len(path) > 1:
            return [*path, start]
        fresh = [t for t in successors if t not in seen]
        if not fresh:
            return [*path, successors[0]]
        path.append(fresh[0])
        seen.add(fresh[0])


def test_src_has_no_import_cycles() -> None:
    arrows, _ = import_graph(SRC)
    found = set(cycles(arrows))
    new = [a_cycle(arrows, c) for c in found]
    assert not new, "import cycles in src/:\n" + "\n".join(" -> ".join(c) for c in new)


def test_database_drivers_are_imported_only_by_their_backend() -> None:
    _, outside = import_graph(SRC)
    wrong = [
        f"{module}:{line} imports {target}"
        for module, line, target in outside
        if (home := DRIVERS.get(target.split(".")[0])) is not None
        and not (module == home or module.startswith(home + "."))
    ]
    assert not wrong, "database drivers outside their backend package:\n" + "\n".join(wrong)
    drivers_seen = {target.split(".")[0] for _, _, target in outside} & DRIVERS.keys()
    assert drivers_seen == DRIVERS.keys()  # the walk does find them where they belong


def private_imports(arrows: Mapping[str, set[str]]) -> list[str]:
    """Arrows into a ``_``-prefixed module from outside its package (docs/adr/0037: a
    package's ``__init__`` is its surface; its ``_`` modules are its own business)."""
    return sorted(
        f"{module} imports {target}"
        for module, targets in arrows.items()
        for target in targets
        if (package := target.rpartition(".")[0])
        and target.rpartition(".")[2].startswith("_")
        and not (module == package or module.startswith(package + "."))
    )


def test_private_modules_are_imported_only_inside_their_package() -> None:
    arrows, _ = import_graph(SRC)
    wrong = private_imports(arrows)
    assert not wrong, "a package's private module imported from outside it:\n" + "\n".join(wrong)
    assert any(t.endswith("._client") for t in arrows["venom_mem_adapters.client"])


# -- the checker itself, on trees made to fail -----------------------------------------------


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from .b import B\n",
                "pkg/b.py": "from pkg.a import thing\n",
            },
            {frozenset({"pkg.a", "pkg.b"})},
            id="type-checking-only",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "def f():\n    from . import b\n    return b\n",
                "pkg/b.py": "from .sub import c\n",
                "pkg/sub/__init__.py": "",
                "pkg/sub/c.py": "import pkg.a\n",
            },
            {frozenset({"pkg.a", "pkg.b", "pkg.sub.c"})},
            id="lazy-and-relative",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from .a import A as A\n",
                "pkg/a.py": "from .b import B\n",
                "pkg/b.py": "import os\n",
            },
            set(),
            id="a-package-re-exporting-is-no-cycle",
        ),
    ],
)
def test_the_checker_finds_each_kind_of_cycle(
    tmp_path: Path, files: dict[str, str], expected: set[frozenset[str]]
) -> None:
    arrows, _ = import_graph(write_tree(tmp_path, files))
    assert set(cycles(arrows)) == expected


def test_the_checker_finds_a_driver_imported_lazily_outside_its_package(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "venom_mem_adapters/__init__.py": "",
            "venom_mem_adapters/daemon.py": "def f():\n    import apsw.ext\n",
        },
    )
    _, outside = import_graph(root)
    assert ("venom_mem_adapters.daemon", 2, "apsw.ext") in outside


def test_the_checker_finds_a_private_module_imported_from_outside(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "from ._a import A as A\n",
            "pkg/_a.py": "from ._b import B\n",
            "pkg/_b.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/c.py": "from .. import _a\n",
            "other.py": "from pkg import A\nfrom pkg._b import B\n",
        },
    )
    arrows, _ = import_graph(root)
    assert private_imports(arrows) == ["other imports pkg._b"]


# -- what a daemon loads -----------------------------------------------------------------------

_DAEMON_OF = """
import sys
from pathlib import Path
from venom_mem_core.config import StoreConfig
from venom_mem_cli import bootstrap
from venom_mem_adapters.daemon import ops, server, startup
from venom_mem_adapters.daemon.ops import doctor
from venom_mem_adapters.sqlite.lock import StoreLock
from venom_mem_adapters.store_backend import backend_for

backend = backend_for(StoreConfig(url=sys.argv[1]), Path("/nonexistent/store"))
print(backend.name, sorted(m for m in ("apsw", "psycopg") if m in sys.modules))
"""


@pytest.mark.parametrize(
    ("url", "loaded"),
    [("postgresql:///venom?host=/nonexistent", "postgres ['psycopg']"), ("", "sqlite ['apsw']")],
)
def test_a_daemon_loads_only_its_own_backends_driver(url: str, loaded: str) -> None:
    """A PostgreSQL daemon's modules (start-up, the store lock, doctor, the writer's error
    classification) load no apsw, and a SQLite daemon's no psycopg."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _DAEMON_OF, url], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == loaded


_DAEMON_BUILT = """
import sys
from pathlib import Path
from venom_mem_adapters.daemon.context import DaemonPaths
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_cli.bootstrap import build_daemon
from venom_mem_core import commands
from venom_mem_core.config import Config

root = Path(sys.argv[1])
store = SqliteStore.open(root / "store.db")
paths = DaemonPaths(socket=root / "d.sock", store=root / "store.db", config=root / "c.zon")
daemon = build_daemon(store, Config(), paths, on_demand=True)
later = ("venom_mem_adapters.daemon.mcp_session", "venom_mem_adapters.copy", "tempfile")
ops = "venom_mem_adapters.daemon.ops."
print(sorted(m for m in sys.modules if m.startswith(ops) or m in later))
print([name for name in vars(commands) if name in ("AddMemory", "SearchMemories", "Whoami")])
daemon.close()
store.close()
"""


def test_a_daemons_start_loads_only_what_serving_needs(tmp_path: Path) -> None:
    """The ops (but the audit log and the session reporters), the MCP sessions, store.copy
    and the commands load when a caller first needs them, not while the daemon starts
    (docs/adr/0038)."""
    import subprocess
    import sys

    (tmp_path / "data").mkdir(mode=0o700)
    result = subprocess.run(
        [sys.executable, "-c", _DAEMON_BUILT, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded, made = result.stdout.splitlines()
    assert loaded == str(
        ["venom_mem_adapters.daemon.ops.audit", "venom_mem_adapters.daemon.ops.reporters"]
    )
    assert made == "[]"
