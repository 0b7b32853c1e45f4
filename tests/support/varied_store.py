"""A store's history with a row of each kind the export and the copy must keep: three
sessions chained by fork and subagent, one ended; memories with non-ASCII text, an update,
a delete, and a delete restored and updated again (m1 to m4, s1 to s3)."""

from __future__ import annotations

from tests.support.daemon_env import World

__all__ = ["write_history"]


def write_history(world: World, agent: str) -> None:
    """Through the CLI, as ``agent`` (a client token) and the owner."""
    world.ok("session", "start", "--harness", "claude-code", "--harness-session", "h-1",
             "--cwd", "/home/u/wörk", token=agent)  # fmt: skip
    world.ok("session", "start", "--harness", "codex", "--parent", "s1", "--relation", "fork",
             token=agent)  # fmt: skip
    world.ok("session", "start", "--harness", "codex", "--parent", "s2",
             "--relation", "subagent", token="@owner")  # fmt: skip
    world.ok("session", "end", "--session", "s3", token="@owner")
    world.ok("memory", "add", "--space", "user", "--content", "Prefers small PRs — 小さい",
             "--title", "Größe", "--kind", "fact", "--tags", "style", token=agent)  # fmt: skip
    world.ok("memory", "add", "--space", "project/x", "--content", "first draft",
             "--session", "s2", token=agent)  # fmt: skip
    world.ok("memory", "update", "--id", "m2", "--revision", "1", "--content", "second draft",
             "--kind", "decision", "--importance", "critical", token="@owner")  # fmt: skip
    world.ok("memory", "add", "--space", "project/x", "--content", "gone for good", token=agent)
    world.ok("memory", "delete", "--id", "m3", "--revision", "1", token=agent)
    world.ok("memory", "add", "--space", "team", "--content", "back again ✓", token=agent)
    world.ok("memory", "delete", "--id", "m4", "--revision", "1", token="@owner")
    world.ok("memory", "restore", "--id", "m4", token="@owner")
    world.ok("memory", "update", "--id", "m4", "--revision", "3", "--title", "Restored",
             token=agent)  # fmt: skip
