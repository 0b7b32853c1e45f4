"""``venom-mem memory context --here`` as a SessionStart hook runs it: in a real git repository,
on a branch, through the real CLI and daemon (docs/context.md, ADR 0017)."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.daemon_env import VENOM_MEM, World
from venom_mem_adapters.mcp.tools import build_catalog
from venom_mem_core import App, InMemoryStore, LocalClient, Principal
from venom_mem_core.clock import FixedClock
from venom_mem_core.manifest import MANIFEST, T1_SENTENCE
from venom_mem_core.records import Grant
from venom_mem_core.skill import render_skill
from venom_mem_core.usecases.principals import OWNER

WRITE_ALL = Grant(right="write", scope="*")

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
    cursor = world.ok("events")["cursor"]
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
    told = world.ok("events", "--after", cursor, "--types", '["space.described"]')
    assert [(e["type"], e["resource"], e["data"]) for e in told["events"]] == [
        ("space.described", "space:project/venom-std", {"space": "project/venom-std"})
    ]
    snapshot = {e["resource"]: e["data"] for e in world.ok("events")["snapshot"]}
    assert snapshot["space:project/venom-std"]["description"].startswith("Build and review")

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
    assert failed.json["error"]["data"]["fix"] == "pass --space (or --spaces) explicitly"
    fixed = world.ok("memory", "context", "--here", "--spaces", '["user"]', cwd=str(bad))
    assert fixed["memories"] == []
    human = world.run("memory", "search", "--query", "x", "--here", cwd=str(plain))
    assert human.code == 2


# -- docs/context.md, run as written ---------------------------------------------------------

DOC = Path(__file__).parents[2] / "docs" / "context.md"


def _blocks(language: str) -> list[str]:
    parts = DOC.read_text().split("```")
    return [p[len(language) + 1 :] for p in parts[1::2] if p.startswith(language + "\n")]


def test_the_docs_example_is_what_memory_context_prints() -> None:
    """The console example, rebuilt in process on a fixed clock: the same text, byte for byte."""
    example = _blocks("console")[0].splitlines()
    assert example[1] == "$ venom-mem memory context --here"
    expected = "\n".join(example[2:]) + "\n"
    clock = FixedClock()
    app = App(store=InMemoryStore(), clock=clock)
    owner, claude, codex = (
        LocalClient(app, who)
        for who in (
            OWNER,
            Principal(id="g1", label="claude-code", grants=(WRITE_ALL,)),
            Principal(id="g2", label="codex", grants=(WRITE_ALL,)),
        )
    )
    owner.call(
        "space.describe",
        {"space": "project/venom-std", "description": "Build, test and review rules of venom-std."},
    )
    zig = {"space": "project/venom-std", "content": "venom-std pins Zig 0.17 with .zigversion."}
    claude.call("memory.add", zig)
    clock.advance(timedelta(days=12))
    rule = "Never force-push feature branches."
    codex.call(
        "memory.add", {"space": "project/venom-std", "content": rule, "importance": "critical"}
    )
    clock.advance(timedelta(days=1))
    claude.call("memory.update", {"id": "m1", "revision": 1, "title": "Zig pin"})
    clock.advance(timedelta(days=1))
    claude.call(
        "memory.add", {"space": "user", "content": "Prefers small PRs.", "importance": "low"}
    )
    text = owner.call(
        "memory.context", {"spaces": ["project/venom-std", "user"], "branch": "feature/ctx"}
    )["text"]
    assert text == expected


def test_the_docs_hooks_run_as_written(world: World, tmp_path: Path) -> None:
    """Each hook snippet is valid JSON in the harness's shape, and its command, run by a shell
    in a repository with no token, exits 0 and prints the context."""
    repo = _repo(tmp_path)
    token = world.add_client("claude-code")
    world.ok("memory", "add", "--space", "project/venom-std", "--content", "Hooked.", token=token)
    hooks = [json.loads(block) for block in _blocks("json")]
    assert len(hooks) == 2  # Claude Code's ~/.claude/settings.json, Codex's hooks.json
    for config in hooks:
        [group] = config["hooks"]["SessionStart"]
        assert "startup" in group["matcher"].split("|")
        [hook] = group["hooks"]
        assert hook["type"] == "command"
        assert hook["timeout"] <= 60
        shell = subprocess.run(
            ["sh", "-c", hook["command"]],
            cwd=repo,
            env={**world.environ(), "PATH": f"{Path(VENOM_MEM).parent}:/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert shell.returncode == 0, shell
        assert "\nHooked.\n" in shell.stdout
        assert shell.stdout.startswith("# venom-mem context\n")


def test_the_mcp_catalog_and_the_skill_carry_the_new_verb_and_fields() -> None:
    catalog = build_catalog(MANIFEST)
    context = catalog["memory_dcontext"]
    assert T1_SENTENCE in context.description
    properties = context.input_schema["properties"]
    assert set(properties) == {"spaces", "branch", "kinds", "budget", "include_superseded"}
    assert (properties["budget"]["minimum"], properties["budget"]["maximum"]) == (1024, 65536)
    assert context.input_schema["required"] == ["spaces"]
    assert set(catalog["space_ddescribe"].input_schema["required"]) == {"space", "description"}
    add = catalog["memory_dadd"].input_schema["properties"]
    assert add["importance"]["enum"] == ["critical", "normal", "low"]
    assert "default" not in add["importance"]  # a request without it stays RFC-0020's
    for tool in ("memory_dsearch", "memory_dlist"):
        assert {"importances", "branch"} <= set(catalog[tool].input_schema["properties"])
    skill = render_skill()
    for name in ("memory_dcontext", "space_ddescribe", "`importance`", "`branches`"):
        assert name in skill
