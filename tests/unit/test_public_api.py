"""``venom_mem_core``'s public names, and that importing it stays light (pure domain, no I/O).

In the manner of httpx's tests/test_exported_members.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import venom_mem_core
from venom_mem_core.manifest_types import Manifest

HEAVY = (
    "apsw", "anyio", "httpx", "mcp", "rich", "rich_click", "numpy", "sqlite3", "socket",
    "psycopg", "psycopg_pool",
)  # fmt: skip


def test_all_is_sorted_and_unique() -> None:
    assert venom_mem_core.__all__ == sorted(set(venom_mem_core.__all__))
    assert dir(venom_mem_core) == venom_mem_core.__all__


@pytest.mark.parametrize("name", venom_mem_core.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    value = getattr(venom_mem_core, name)
    if name == "MANIFEST":
        assert isinstance(value, Manifest)
    else:
        assert value.__name__ == name
        assert value.__module__.startswith("venom_mem_core.")


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = venom_mem_core.NoSuchThing


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


def test_manifest_needs_only_the_standard_library() -> None:
    assert _modules_after("from venom_mem_core.manifest import MANIFEST") == []


def test_the_whole_core_does_no_io() -> None:
    loaded = _modules_after(
        "import venom_mem_core\n"
        "for name in venom_mem_core.__all__: getattr(venom_mem_core, name)\n"
        "import venom_mem_core.usecases.handlers, venom_mem_core.dispatch"
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
    """In process, a verb only a daemon answers is ``unsupported.verb``, never a KeyError."""
    from venom_mem_core import App, InMemoryStore, LocalClient, Principal, SystemClock
    from venom_mem_core.errors import VenomError
    from venom_mem_core.manifest import MANIFEST

    owner = Principal(id="owner", label="owner")
    codes: dict[str, str] = {}
    with InMemoryStore() as store:
        me = LocalClient(App(store=store, clock=SystemClock()), owner)
        for verb in MANIFEST.verbs:
            if verb.local or verb.name == "hello":
                continue
            try:
                me.call(verb.name, {})
            except VenomError as error:
                codes[verb.name] = error.code
    assert codes["ping"] == "unsupported.verb"
    assert codes["doctor"] == "unsupported.verb"
    assert "memory.list" not in codes  # the core's verbs answer
    allowed = {"invalid_params", "not_found", "unsupported"}
    assert {name: code for name, code in codes.items() if code.split(".")[0] not in allowed} == {}
