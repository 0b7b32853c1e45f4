from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from tests.support.daemon_env import World, make_world
from tests.support.ui_server import UI, run_ui

SCRIPT = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
READ_ONLY = '[{"right":"read","scope":"*"}]'


@attrs.frozen
class Seeded:
    world: World
    tokens: dict[str, str]
    ids: dict[str, str]


def seed(world: World) -> Seeded:
    """Two agents and a reader, through the CLI: claude-code writes m1, codex edits it; a
    memory whose text is markup; a session."""
    tokens = {
        "claude-code": world.add_client("claude-code"),
        "codex": world.add_client("codex"),
        "reader": world.add_client("reader", READ_ONLY),
    }
    claude, codex = tokens["claude-code"], tokens["codex"]
    session = world.ok("session", "start", "--harness", "claude-code", token=claude)["session"]
    fork = world.ok(
        "session", "start", "--harness", "codex", "--parent", session, "--relation", "fork",
        "--cwd", "/home/u/venom-std", token=codex,
    )["session"]  # fmt: skip
    pin = world.ok(
        "memory", "add", "--space", "project/venom-std", "--kind", "fact", "--title", "Zig pin",
        "--content", "venom-std pins Zig with .zigversion; check it before upgrading.",
        "--tags", '["zig","build"]', "--session", session, token=claude,
    )["id"]  # fmt: skip
    world.ok(
        "memory", "update", "--id", pin, "--revision", "1",
        "--content", "venom-std pins Zig 0.17 with .zigversion.", token=codex,
    )  # fmt: skip
    markup = world.ok(
        "memory", "add", "--space", "user", "--title", "<b>bold</b> title",
        "--content", SCRIPT, token=codex,
    )["id"]  # fmt: skip
    ids = {"pin": pin, "markup": markup, "session": session, "fork": fork}
    return Seeded(world, tokens, ids)


@pytest.fixture(scope="module")
def seeded() -> Iterator[Seeded]:
    with make_world() as world:
        yield seed(world)


@pytest.fixture(scope="module")
def owner_ui(seeded: Seeded) -> Iterator[UI]:
    with run_ui(seeded.world) as ui:
        yield ui


@pytest.fixture(scope="module")
def reader_ui(seeded: Seeded) -> Iterator[UI]:
    with run_ui(seeded.world, token=seeded.tokens["reader"]) as ui:
        yield ui


@pytest.fixture
def world() -> Iterator[World]:
    """A fresh store, socket and config; its daemon is stopped afterwards."""
    with make_world() as w:
        yield w


@pytest.fixture
def fresh() -> Iterator[Seeded]:
    """A store of its own, seeded, for a test that changes what it shows."""
    with make_world() as world:
        yield seed(world)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    out = tmp_path / "screenshots"
    out.mkdir()
    print(f"screenshots in {out}")
    return out
