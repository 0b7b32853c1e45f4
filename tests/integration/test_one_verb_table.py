"""A verb added to the manifest alone, with its core use case, is served everywhere: the
daemon, ``LocalClient``, the CLI (both paths) and the MCP catalog (docs/adr/0033). Removing
its use case makes the daemon (and LocalClient, and an on-demand start) refuse, naming it.

The test copies ``src/`` and edits the copy as a developer would: one ``Verb`` appended to
``manifest.py`` and one use case module, nothing else; every process then runs the copy
(``PYTHONPATH`` comes before the editable install's path, and the launcher forwards it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.daemon_env import VENOM_MEM, World, make_world
from tests.support.mcp_stdio import mcp_session

SRC = Path(__file__).resolve().parents[2] / "src"

NEW_VERB = """

MANIFEST = MANIFEST.replace(
    verbs=(
        *MANIFEST.verbs,
        Verb(
            "probe.echo",
            "Say a word a few times, as the caller.",
            params=(
                Param("word", "The word", Type("string", min_bytes=1), required=True),
                Param("times", "How many times, 1 to 5", Type("integer", min=1, max=5), default=2),
            ),
            result=_obj(_f("echo", "The words", STR), _f("by", "Who asked", STR)),
            starts_daemon=True,
            examples=_ex({"word": "hi"}, {"echo": "hi hi", "by": "owner"}),
            use_case="probe.echo",
        ),
    )
)
"""

USE_CASE = '''"""probe.echo: a use case the test adds with its verb."""

from typing import Any


def echo(app: Any, who: Any, cmd: Any) -> dict[str, Any]:
    return {"echo": " ".join([cmd.word] * cmd.times), "by": who.id}
'''

LOCAL_CLIENT = """
import json
from venom_mem_core import App, InMemoryStore, LocalClient, Principal, SystemClock
with InMemoryStore() as store:
    me = LocalClient(App(store=store, clock=SystemClock()), Principal(id="owner", label="o"))
    print(json.dumps(me.call("probe.echo", {"word": "hi", "times": 3})))
"""


def _copy_with_new_verb(root: Path) -> Path:
    src = root / "src"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    manifest = src / "venom_mem_core" / "manifest.py"
    manifest.write_text(manifest.read_text() + NEW_VERB)
    (src / "venom_mem_core" / "usecases" / "probe.py").write_text(USE_CASE)
    return src


@pytest.fixture
def copied(tmp_path: Path) -> Iterator[tuple[World, Path]]:
    src = _copy_with_new_verb(tmp_path)
    with make_world(dict(os.environ, PYTHONPATH=str(src))) as world:
        yield world, src


def _local_client(world: World) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LOCAL_CLIENT], env=world.environ(),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip


def test_a_verb_added_to_the_manifest_alone_is_served_everywhere(
    copied: tuple[World, Path],
) -> None:
    world, _ = copied
    # The CLI's --json path, through a daemon it launches on demand (the manifest says so).
    assert world.ok("probe", "echo", "--word", "hi", token="@owner") == {
        "echo": "hi hi",
        "by": "owner",
    }
    assert world.daemon_pid() is not None
    again = world.ok("probe", "echo", "--word", "hi", "--times", "3", token="@owner")
    assert again["echo"] == "hi hi hi"
    bad = world.run("probe", "echo", "--word", "hi", "--times", "9", "--json", token="@owner")
    assert (bad.code, bad.json["error"]["code"]) == (2, "invalid_params.range")
    assert bad.json["error"]["data"]["param"] == "times"
    # The rich-click tree: its group, command, options, defaults and example.
    shown = world.run("probe", "echo", "--help")
    assert shown.code == 0, shown
    assert "--word" in shown.stdout
    assert "[default: 2]" in shown.stdout
    assert "venom-mem probe echo --word hi" in shown.stdout
    human = world.run("probe", "echo", "--word", "hey", token="@owner")
    assert human.code == 0, human
    assert "hey hey" in human.stdout
    # The daemon, over its socket, for a client that holds no grant: right "read" is checked.
    nobody = world.run("probe", "echo", "--word", "hi", "--json", token="")
    assert nobody.code == 0, nobody
    assert nobody.json["by"] == "unknown"
    # LocalClient, in process.
    local = _local_client(world)
    assert local.returncode == 0, local
    assert json.loads(local.stdout) == {"echo": "hi hi hi", "by": "owner"}
    # The MCP catalog, and a call through it to the daemon.
    tools, called = anyio.run(_mcp_probe, world)
    assert tools["probe_decho"]["inputSchema"]["properties"]["times"] == {
        "type": "integer",
        "description": "How many times, 1 to 5",
        "minimum": 1,
        "maximum": 5,
        "default": 2,
    }
    assert tools["probe_decho"]["annotations"]["readOnlyHint"] is True
    assert called == {"echo": "yo yo", "by": "owner"}


async def _mcp_probe(world: World) -> tuple[dict[str, dict[str, Any]], object]:
    async with mcp_session(world.environ("@owner"), world.root) as session:
        listed = await session.list_tools()
        result = await session.call_tool("probe_decho", {"word": "yo"})
    tools = {tool.name: tool.model_dump(mode="json", by_alias=True) for tool in listed.tools}
    return tools, result.structured_content


def test_without_its_use_case_the_daemon_refuses_to_start_naming_the_verb(
    copied: tuple[World, Path],
) -> None:
    world, src = copied
    (src / "venom_mem_core" / "usecases" / "probe.py").unlink()
    missing = "verb probe.echo: its use_case venom_mem_core.usecases.probe.echo is missing"
    serve = subprocess.run([VENOM_MEM, "serve"], env=world.environ(), capture_output=True,
                           text=True, timeout=60, check=False)  # fmt: skip
    assert serve.returncode == 1, serve
    assert serve.stderr.startswith(f"error: failed.internal: {missing}"), serve.stderr
    assert not world.socket.exists()
    # An on-demand start says the same to the CLI that launched it, for any verb.
    launched = world.run("whoami", "--json")
    assert launched.code == 1, launched
    assert launched.json["error"]["code"] == "failed.internal"
    assert launched.json["error"]["message"].startswith(missing)
    assert world.daemon_pid() is None
    local = _local_client(world)
    assert local.returncode == 1, local
    assert f"failed.internal: {missing}" in local.stderr


LOCAL_VERB = """

MANIFEST = MANIFEST.replace(
    verbs=(*MANIFEST.verbs, Verb("probe.here", "Run in the CLI", right=None, local="probe_here"))
)
"""


def test_a_local_verb_without_its_runner_stops_the_cli_naming_the_verb(tmp_path: Path) -> None:
    src = _copy_with_new_verb(tmp_path)
    manifest = src / "venom_mem_core" / "manifest.py"
    manifest.write_text(manifest.read_text() + LOCAL_VERB)
    missing = "verb probe.here: its local venom_mem_cli.local.probe_here is missing"
    with make_world(dict(os.environ, PYTHONPATH=str(src))) as world:
        tree = world.run("--help")  # the rich-click tree checks every local verb first
        assert tree.code == 1, tree
        assert tree.stderr.startswith(f"error: failed.internal: {missing}"), tree.stderr
        called = world.run("probe", "here", "--json")  # the --json path, the verb it runs
        assert called.code == 1, called
        assert called.json["error"]["message"].startswith(missing)
        assert world.daemon_pid() is None
