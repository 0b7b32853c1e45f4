"""``venom-mem memory context --here`` as a SessionStart hook runs it: in a real git repository,
on a branch, through the real CLI and daemon (docs/context.md, ADR 0017)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.daemon_env import World

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)


def _repo(root: Path) -> Path:
    """A repository whose directory name has capitals, checked out on feature/ctx."""
    repo = root / "Venom-Std"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("x\n")
    _git(repo, "add", "README")
    _git(repo, "commit", "-q", "-m", "first")
    _git(repo, "checkout", "-q", "-b", "feature/ctx")
    return repo


def test_session_start_hook_prints_the_projects_critical_memory_first(
    world: World, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    token = world.add_client("claude-code")
    inside = str(repo / "src")  # anywhere in the tree: the top level names the project

    def add(*args: str) -> dict[str, object]:
        result = world.run("memory", "add", "--here", *args, "--json", token=token, cwd=inside)
        assert result.code == 0, result
        return dict(result.json)

    assert add("--content", "Run make check before pushing.") == {
        "id": "m1",
        "revision": 1,
        "changed": True,
    }
    add("--content", "Never force-push feature branches.", "--importance", "critical")
    add("--content", "main is frozen until the release.", "--branches", '["main"]')
    world.ok("memory", "add", "--space", "user", "--content", "Prefers small PRs.", token=token)
    world.ok("memory", "add", "--space", "project/other", "--content", "Not this one.", token=token)
    world.ok(
        "space",
        "describe",
        "--space",
        "project/venom-std",
        "--description",
        "Build and review rules of venom-std.",
        token=token,
    )
    assert world.ok("memory", "get", "--id", "m1")["space"] == "project/venom-std"

    # The hook: no token (grants.unknown reads), no --json, run in the repository.
    hook = world.run("memory", "context", "--here", cwd=inside)
    assert hook.code == 0, hook
    text = hook.stdout
    assert text.startswith("# venom-mem context\n\nResults are text stored by other agents")
    entries = [line for line in text.splitlines() if line.startswith("[m")]
    assert entries[0].startswith(
        "[m2; importance=critical; created=0d; updated=0d; by=claude-code]"
    )
    assert [e.split(";")[0] for e in entries] == ["[m2", "[m1", "[m4"]  # the project first
    assert "main is frozen" not in text  # another branch's memory
    assert "Not this one." not in text  # another project's space
    assert "## project/venom-std\nBuild and review rules of venom-std.\n" in text
    assert text.index("## project/venom-std") < text.index("## user")
    assert text.endswith("does not mean deletion: memory.search finds what is not shown.\n")

    # --json carries the same text, and says what --here resolved to by what it shows.
    as_json = world.ok("memory", "context", "--here", cwd=inside)
    assert as_json["text"] == text
    assert as_json["memories"] == ["m2", "m1", "m4"]

    # At a detached HEAD there is no branch: every branch's memories are shown.
    _git(repo, "checkout", "-q", "--detach")
    detached = world.ok("memory", "context", "--here", cwd=inside)
    assert "m3" in detached["memories"]


def test_here_outside_git_uses_the_directory_and_only_fits_two_verbs(
    world: World, tmp_path: Path
) -> None:
    plain = tmp_path / "Plain.Dir"
    plain.mkdir()
    token = world.add_client("codex")
    added = world.run(
        "memory", "add", "--here", "--content", "outside git", "--json", token=token, cwd=str(plain)
    )
    assert added.code == 0, added
    assert world.ok("memory", "get", "--id", "m1")["space"] == "project/plain.dir"
    shown = world.ok("memory", "context", "--here", cwd=str(plain))
    assert shown["memories"] == ["m1"]
    # Explicit params win over --here.
    explicit = world.ok("memory", "context", "--here", "--spaces", '["user"]', cwd=str(plain))
    assert explicit["memories"] == []
    refused = world.run("memory", "search", "--query", "x", "--here", "--json", cwd=str(plain))
    assert refused.code == 2
    assert refused.json["error"]["code"] == "invalid_params.unknown"
    bad = tmp_path / "Not A Space"
    bad.mkdir()
    failed = world.run("memory", "context", "--here", "--json", cwd=str(bad))
    assert failed.code == 2
    assert failed.json["error"]["code"] == "invalid_params.space"
    human = world.run("memory", "search", "--query", "x", "--here", cwd=str(plain))
    assert human.code == 2
