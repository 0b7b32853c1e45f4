"""``venom_mem_core``'s public names, and that importing it stays light (pure domain, no I/O).

In the manner of httpx's tests/test_exported_members.py; how every lazily exporting package
reads its names from its typed imports is tested in test_package_exports.py.
"""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import venom_mem_core
from venom_mem_core.manifest_types import Manifest

HEAVY = (
    "apsw",
    "anyio",
    "cattrs",
    "httpx",
    "mcp",
    "rich",
    "rich_click",
    "numpy",
    "sqlite3",
    "socket",
    "pytest",
    "psycopg",
    "psycopg_pool",
)


@pytest.mark.parametrize("name", venom_mem_core.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    value = getattr(venom_mem_core, name)
    if name == "MANIFEST":
        assert isinstance(value, Manifest)
    else:
        assert value.__name__ == name
        assert value.__module__.startswith("venom_mem_core.")


def _modules_after(code: str) -> list[str]:
    probe = (
        f"import json, sys\n{code}\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} + ('attrs',) if m in sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return list(json.loads(result.stdout))


def test_import_is_light() -> None:
    assert _modules_after("import venom_mem_core") == []


def test_only_the_testing_package_imports_pytest() -> None:
    """The contract suite ships in the core (venom_mem_core.testing) but costs nothing until
    it is imported; the FTS semantics module it checks needs no pytest either."""
    assert _modules_after("import venom_mem_core.fts, venom_mem_core.inmemory") == ["attrs"]
    assert "pytest" in _modules_after("import venom_mem_core.testing")


@pytest.mark.parametrize("module", ["venom_mem_core.fts", "venom_mem_core.testing"])
def test_the_public_modules_for_other_stores_export_what_they_define(module: str) -> None:
    names = importlib.import_module(module).__all__
    assert len(names) == len(set(names))  # ruff's RUF022 keeps them sorted
    for name in names:
        value = getattr(importlib.import_module(module), name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith(module), name


def test_manifest_needs_only_the_standard_library() -> None:
    assert _modules_after("from venom_mem_core.manifest import MANIFEST") == []


def test_the_whole_core_does_no_io() -> None:
    loaded = _modules_after(
        "import venom_mem_core\n"
        "for name in venom_mem_core.__all__: getattr(venom_mem_core, name)\n"
        "import venom_mem_core.usecases.verbs, venom_mem_core.dispatch\n"
        "venom_mem_core.usecases.verbs.use_cases()  # every use case, imported"
    )
    assert [m for m in loaded if m != "attrs"] == []


def test_the_readmes_in_process_example_runs_on_both_stores(tmp_path: Path) -> None:
    from venom_mem_adapters.sqlite import SqliteStore
    from venom_mem_core import App, InMemoryStore, LocalClient, Principal, SystemClock

    for make in (InMemoryStore, lambda: SqliteStore.open(tmp_path / "scratch" / "store.db")):
        with make() as store:
            me = LocalClient(
                App(store=store, clock=SystemClock()), Principal(id="owner", label="owner")
            )
            me.call("memory.add", {"space": "user", "content": "Prefers small PRs."})
            hits = me.call("memory.search", {"query": "small PRs"})["results"]
            assert [h["snippet"] for h in hits] == ["Prefers small PRs."]


def test_local_client_answers_every_manifest_verb_or_unsupported() -> None:
    """In process, every manifest verb is answered by its use case, or is
    ``unsupported.verb`` when only a daemon answers it (the manifest's ``op`` verbs, and
    ``hello``), never a KeyError."""
    from venom_mem_core import App, InMemoryStore, LocalClient, Principal, SystemClock
    from venom_mem_core.errors import VenomError
    from venom_mem_core.manifest import MANIFEST

    owner = Principal(id="owner", label="owner")
    codes: dict[str, str] = {}
    with InMemoryStore() as store:
        me = LocalClient(App(store=store, clock=SystemClock()), owner)
        for verb in MANIFEST.verbs:
            params = verb.examples[0].get("params", {}) if verb.examples else {}
            try:
                me.call(verb.name, params)
            except VenomError as error:
                codes[verb.name] = error.code
            else:
                codes[verb.name] = "ok"
    daemon_only = {verb.name for verb in MANIFEST.verbs if verb.runs in ("daemon", None)}
    assert {"hello", "ping", "doctor", "events", "config.get", "skill"} <= daemon_only
    unsupported = {name for name, code in codes.items() if code == "unsupported.verb"}
    local = {verb.name for verb in MANIFEST.verbs if verb.local}  # the CLI's own: serve, mcp
    assert unsupported == daemon_only | local
    assert codes["memory.list"] == codes["whoami"] == "ok"  # the core's verbs answer
    allowed = {"ok", "invalid_params", "not_found", "unsupported"}
    assert {name: code for name, code in codes.items() if code.split(".")[0] not in allowed} == {}
