"""venom-mem import --format server-memory|basic-memory|mcp-memory-service (docs/adr/0040):
each on a store the real tool wrote, remade here by the tool when scripts/test-deps.sh could
install it (else the committed fixture, made by the same script, and the reason is printed),
then a search that finds the imported text with its origin shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.daemon_env import World

ROOT = Path(__file__).parents[2]
PEERS = ROOT / "tests" / "fixtures" / "peers"
CACHE = ROOT / ".cache" / "peers"
WIDE = {"COLUMNS": "200"}  # a table as wide as the origin it shows


def _made(name: str, tool: Path, command: list[str], out: Path) -> Path:
    """The store remade by the real tool, or the committed fixture when it isn't installed."""
    if not tool.exists():
        print(f"{name} is not installed ({tool} missing: scripts/test-deps.sh);"
              " importing the committed fixture it made")  # fmt: skip
        return PEERS / out.name
    subprocess.run(command, check=True, timeout=300, capture_output=True)
    return out


def _search(world: World, query: str) -> dict[str, Any]:
    (hit,) = world.ok("memory", "search", "--query", query, token="@owner")["results"]
    found: dict[str, Any] = hit
    return found


def test_server_memory(world: World, tmp_path: Path) -> None:
    tool = CACHE / "npm" / "node_modules" / ".bin" / "mcp-server-memory"
    out = tmp_path / "server-memory.jsonl"
    script = PEERS / "make_server_memory.py"
    source = _made("server-memory", tool, [sys.executable, str(script), str(tool), str(out)], out)
    assert json.loads(source.read_text(encoding="utf-8").splitlines()[0])["type"] == "entity"
    done = world.ok("import", str(source), "--format", "server-memory", token="@owner")
    assert done["files"][0]["memories"] == 5  # 4 observations and a relation
    hit = _search(world, "zigversion")
    assert hit["space"] == "imported/server-memory"
    assert hit["title"] == "venom-std"
    assert hit["origin"] == {"format": "server-memory", "id": "entity venom-std observation 1"}
    shown = world.run("memory", "search", "--query", "zigversion", token="@owner", env_extra=WIDE)
    assert "server-memory entity venom-std" in shown.stdout  # the table's origin column
    got = world.run("memory", "get", "--id", "m1", token="@owner", env_extra=WIDE)
    assert "origin      server-memory entity venom-std observation 1" in got.stdout
    relation = _search(world, "maintains")
    assert relation["snippet"] == "Ada Lövelace maintains venom-std"
    again = world.run("import", str(source), "--format", "server-memory", token="@owner",
                      env_extra=WIDE)  # fmt: skip
    assert f"{source}: 5 already present, 0 added" in again.stdout


def test_basic_memory(world: World, tmp_path: Path) -> None:
    tool = CACHE / "bm-venv" / "bin" / "basic-memory"
    out = tmp_path / "basic-memory"
    script = PEERS / "make_basic_memory.sh"
    source = _made("basic-memory", tool, ["bash", str(script), str(tool), str(out)], out)
    assert (source / "projects" / "Zig toolchain.md").read_text().startswith("---\n")
    done = world.ok("import", str(source), "--format", "basic-memory", token="@owner")
    assert done["files"][0]["memories"] == 5  # 3 observations and 2 relations
    hit = _search(world, "zigversion")
    assert hit["space"] == "imported/basic-memory"
    assert (hit["title"], hit["kind"]) == ("Zig toolchain", "fact")
    assert set(hit["tags"]) >= {"zig", "build"}
    assert hit["origin"] == {"format": "basic-memory", "id": "main/projects/zig-toolchain line 14"}
    shown = world.run("memory", "search", "--query", "zigversion", token="@owner", env_extra=WIDE)
    assert "basic-memory main/projects/zig" in shown.stdout


def test_mcp_memory_service(world: World, tmp_path: Path) -> None:
    python = CACHE / "mms-venv" / "bin" / "python"
    out = tmp_path / "mcp-memory-service.db"
    script = PEERS / "make_mcp_memory_service.py"
    source = _made("mcp-memory-service", python, [str(python), str(script), str(out)], out)
    done = world.ok("import", str(source), "--format", "mcp-memory-service", "--space", "team",
                    token="@owner")  # fmt: skip
    assert done["files"][0]["memories"] == 3
    hit = _search(world, "PostgreSQL")
    assert (hit["space"], hit["kind"]) == ("team", "decision")
    origin = hit["origin"]
    assert isinstance(origin, dict)
    assert origin["format"] == "mcp-memory-service"
    assert len(origin["id"]) == 64  # the service's content hash
    assert origin["created"].startswith("20")


def test_a_broken_peer_file_names_the_line_and_writes_nothing(world: World, tmp_path: Path) -> None:
    lines = (PEERS / "server-memory.jsonl").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], '{"type":"entity","name":"x"}', *lines[1:]]) + "\n")
    result = world.run("import", str(bad), "--format", "server-memory", "--json", token="@owner")
    assert result.code == 2, result
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["data"]["line"]) == ("invalid_params.import_line", 2)
    assert "line 2 has no entityType" in error["message"]
    other = world.run("import", str(PEERS / "server-memory.jsonl"),
                      "--format", "mcp-memory-service", "--json", token="@owner")  # fmt: skip
    assert json.loads(other.stdout)["error"]["code"] == "invalid_params.import_format"
    assert world.ok("store", "status", token="@owner")["memories"] == 0


def test_a_dry_run_prints_what_it_would_write(world: World) -> None:
    source = PEERS / "server-memory.jsonl"
    shown = world.run("import", str(source), "--format", "server-memory", "--dry-run",
                      token="@owner", env_extra=WIDE)  # fmt: skip
    assert "0 already present, 5 would be added" in shown.stdout
    assert "would write memory entity venom-std observation 1" in shown.stdout
    assert world.ok("store", "status", token="@owner")["memories"] == 0
