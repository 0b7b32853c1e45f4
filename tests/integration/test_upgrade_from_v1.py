"""A version-1 store under a real daemon: the first call starts it, it upgrades the file to
schema 2 before it serves (RFC-0020 section 6), and every client and memory works as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.daemon_env import World

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_the_daemon_upgrades_a_version_1_store_before_it_serves(world: World) -> None:
    world.store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    world.store.write_bytes((FIXTURES / "store-v1.db").read_bytes())
    world.store.chmod(0o600)
    tokens = json.loads((FIXTURES / "store-v1.json").read_text())

    first = world.ok("memory", "get", "--id", "m1")  # starts the daemon, which migrates
    assert (first["revision"], first["importance"], first["branches"]) == (3, "normal", [])
    assert world.ok("store", "status")["schema_version"] == 3
    backup = Path(f"{world.store}.bak-1")
    assert os.lstat(backup).st_mode & 0o777 == 0o600

    codex = tokens["codex_token"]
    assert world.ok("whoami", token=codex)["label"] == "codex"
    changed = world.ok(
        "memory", "update", "--id", "m1", "--revision", "3", "--importance", "critical",
        token=codex,
    )  # fmt: skip
    assert changed == {"id": "m1", "revision": 4, "changed": True}
    shown = world.ok("memory", "context", "--spaces", '["project/venom-std"]')
    assert shown["memories"] == ["m1", "m2"]
    assert shown["text"].count("\n[m") == 2
    spaces = {s["space"]: s["memories"] for s in world.ok("space", "list")["spaces"]}
    assert spaces == {"project/venom-std": 2, "user": 1, "project/other": 1}
