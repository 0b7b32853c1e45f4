"""``venom-mem setup --apply``, ``--check`` and ``--remove`` against the real Claude Code,
Codex and opencode CLIs from npm, each in a throwaway HOME (ADR 0036): each harness's own
list shows venom-mem connected, a second ``--apply`` changes no byte, ``--remove`` leaves
every file as it was, a Codex config's comments and other servers stay, and ``claude -p``
with the installed SessionStart hook gets the memory context in its first model request
(the scripted model records it) while the hook records Claude Code's session.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from tests.support.daemon_env import VENOM_MEM
from tests.support.harness_home import Home, harness, harness_home, plain
from tests.support.offline_endpoint import offline_endpoint
from tests.support.scripted_model import Script, find_tool
from venom_mem_cli.opencode_plugin import PLUGIN_MARK, plugin_text

ALL = ("claude-code", "codex", "opencode")
CODEX_SEED = """# my own settings: keep this comment
model = "o3"  # and this one

[mcp_servers.other]
command = "/bin/other-server"  # another server of mine
args = ["--flag"]
"""
FACT = "The context hook puts this fact into every Claude Code session."
# Not venom-mem's own: what a harness and the tests write of their own accord.
_NOT_CONFIG = (".local/", ".cache/", ".claude/telemetry/", ".claude/backups/", ".claude/projects/",
               ".claude/shell-snapshots/", ".claude/statsig/", ".claude/todos/", ".codex/log/",
               ".codex/sessions/", ".codex/tmp/", ".codex/.tmp/", ".codex/cache/",
               # npm's cache, of the fetch opencode 1.18 makes at each start (ADR 0044).
               ".npm/",
               # Codex's own state, written at its first start (here by its app server, which
               # setup asks what it trusts: ADR 0044).
               ".codex/skills/", ".codex/installation_id")  # fmt: skip
_CODEX_STATE = re.compile(r"\.codex/[a-z]+_\d+\.sqlite(-wal|-shm)?")


@pytest.fixture
def home() -> Iterator[Home]:
    with harness_home("vm-setup-") as h:
        yield h


def files(home: Home) -> dict[str, tuple[str, int]]:
    """Every config file under HOME (backups aside): its digest and mode."""
    out: dict[str, tuple[str, int]] = {}
    for path in sorted(home.home.rglob("*")):
        rel = str(path.relative_to(home.home))
        if not path.is_file() or rel.startswith(_NOT_CONFIG) or _CODEX_STATE.fullmatch(rel):
            continue
        if ".venom-mem-backup-" in rel:
            continue
        data = path.read_bytes()
        out[rel] = (hashlib.sha256(data).hexdigest(), stat.S_IMODE(path.stat().st_mode))
    return out


def setup(home: Home, *args: str) -> dict[str, Any]:
    ran = home.run([VENOM_MEM, "setup", *args, "--json"], timeout=180)
    assert ran.returncode in (0, 1), plain(ran)
    result: dict[str, Any] = json.loads(ran.stdout)
    result["exit"] = ran.returncode
    return result


def seed(home: Home) -> None:
    """A HOME as a user's would be: Claude Code run once, a Codex config of one's own."""
    for name in ("claude", "codex", "opencode"):
        harness(name)
    home.run([harness("claude"), "mcp", "list"])
    (home.home / ".codex").mkdir()
    (home.home / ".codex" / "config.toml").write_text(CODEX_SEED)


def test_apply_check_reapply_and_remove_with_the_real_harnesses(home: Home) -> None:
    seed(home)
    before = files(home)
    applied = setup(home, *ALL, "--apply")
    assert (applied["exit"], applied["changed"]) == (0, True), applied
    # Each harness's own list shows venom-mem connected (Codex's list starts nothing: enabled).
    listed = plain(home.run([harness("claude"), "mcp", "list"]))
    assert re.search(r"venom-mem: .*venom-mem mcp - .*Connected", listed), listed
    # With a plugin there, opencode waits for its npm fetch first (ADR 0044).
    listed = plain(home.run([harness("opencode"), "mcp", "list"], timeout=300))
    assert re.search(r"venom-mem\s+connected", listed), listed
    codex = json.loads(home.run([harness("codex"), "mcp", "get", "venom-mem", "--json"]).stdout)
    assert (codex["enabled"], codex["transport"]["command"]) == (True, VENOM_MEM), codex
    # What needed editing by hand, done: Codex's keys with the config's comments and other
    # server kept, opencode's file private, Claude Code's hook in its user settings.
    config = (home.home / ".codex" / "config.toml").read_text()
    assert config.startswith(CODEX_SEED), config
    assert 'required = true\ndefault_tools_approval_mode = "approve"\n' in config, config
    opencode = home.home / ".config" / "opencode" / "opencode.jsonc"
    assert stat.S_IMODE(opencode.stat().st_mode) == 0o600
    settings = json.loads((home.home / ".claude" / "settings.json").read_text())
    [group] = settings["hooks"]["SessionStart"]
    assert group["hooks"][0]["command"].startswith(
        f"{VENOM_MEM} session hook --harness claude-code"
    )
    # A backup of the one file that existed and changed, as it was.
    [backup] = (home.home / ".codex").glob("config.toml.venom-mem-backup-*")
    assert backup.read_text() == CODEX_SEED
    for entry in applied["harnesses"]:
        assert not any(str(home.home / "src") in f for f in entry["files"])

    checked = setup(home, "--check")
    assert (checked["exit"], checked["ok"]) == (0, True), checked
    rows = {row["harness"]: row for row in checked["harnesses"]}
    assert {name: row["client"] for name, row in rows.items()} == {h: h for h in ALL}
    assert (rows["claude-code"]["hook"], rows["codex"]["keys"]) == (True, True)

    after_apply = files(home)
    again = setup(home, *ALL, "--apply")
    assert again["changed"] is False, again
    assert all("token" not in entry for entry in again["harnesses"])
    assert files(home) == after_apply  # no byte, no mode
    human = home.run([VENOM_MEM, "setup", *ALL, "--apply"], timeout=180)
    assert "Nothing changed: every step was done already." in human.stdout, plain(human)

    removed = setup(home, *ALL, "--remove")
    assert removed["exit"] == 0, removed
    assert [e["kept"] for e in removed["harnesses"]] == [[], [], []], removed
    assert files(home) == before
    assert setup(home, "--check", *ALL)["exit"] == 1


def test_remove_puts_a_file_back_after_the_harness_wrote_it_again(home: Home) -> None:
    """A file the harness rewrote since --apply (the same content, reformatted) is undone
    through the harness's own remove and still comes back byte-equal."""
    seed(home)
    before = files(home)
    setup(home, "codex", "--apply")
    config = home.home / ".codex" / "config.toml"
    config.write_text(config.read_text() + "\n")  # touched since: not as --apply left it
    removed = setup(home, "codex", "--remove", "--revoke")
    [entry] = removed["harnesses"]
    assert (entry["removed"], entry["kept"]) == (["register", "hook", "revoke"], []), removed
    assert files(home) == before
    clients = home.run([VENOM_MEM, "client", "list", "--json"], env={"VENOM_MEM_TOKEN": "@owner"})
    assert "codex" not in [c["client"] for c in json.loads(clients.stdout)["clients"]]


def test_apply_refuses_a_config_that_links_into_a_repository(home: Home) -> None:
    harness("codex")
    clone = home.root / "dotfiles"
    (clone / ".git").mkdir(parents=True)
    (clone / "codex").mkdir()
    (clone / "codex" / "config.toml").write_text(CODEX_SEED)
    os.symlink(clone / "codex", home.home / ".codex")
    ran = home.run([VENOM_MEM, "setup", "codex", "--apply", "--json"], timeout=120)
    assert ran.returncode == 4, plain(ran)
    error = json.loads(ran.stdout)["error"]
    assert error["code"] == "denied.config_in_repository", error
    assert (clone / "codex" / "config.toml").read_text() == CODEX_SEED
    clients = home.run([VENOM_MEM, "client", "list", "--json"], env={"VENOM_MEM_TOKEN": "@owner"})
    assert json.loads(clients.stdout)["clients"] == []  # refused before a token was made


def test_claude_p_gets_the_context_from_the_hook_and_its_session_is_recorded(home: Home) -> None:
    claude = harness("claude")
    home.run([claude, "mcp", "list"])
    owner = {"VENOM_MEM_TOKEN": "@owner"}
    added = home.run([VENOM_MEM, "memory", "add", "--space", "user", "--content", FACT,
                      "--importance", "critical", "--json"], env=owner)  # fmt: skip
    assert added.returncode == 0, plain(added)
    assert setup(home, "claude-code", "--apply")["exit"] == 0
    home.stop_daemon()  # the hook starts the daemon on demand, as a first session of a day

    # The model calls memory_dadd with no session: the adapter names the hook's session.
    script = Script("memory_dadd", {"space": "user", "content": "Written from the session."}, "ok")
    with offline_endpoint(script, home.root, "claude") as endpoint:
        env = {
            "MCP_CONNECTION_NONBLOCKING": "false",
            "ANTHROPIC_BASE_URL": endpoint.url,
            "ANTHROPIC_API_KEY": "offline-dummy-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            **endpoint.proxy_env,
        }
        argv = [claude, "-p", "What do you know?", "--output-format", "json",
                "--allowedTools", "mcp__venom-mem__memory_dadd"]  # fmt: skip
        ran = home.run(endpoint.wrap(argv), 180, env)
        requests = endpoint.requests()
    assert ran.returncode == 0, plain(ran)
    final = json.loads(ran.stdout)
    model_requests = [r for r in requests if find_tool(r["body"], "memory_dadd") is not None]
    assert model_requests, requests
    first = json.dumps(model_requests[0]["body"])
    assert "# venom-mem context" in first, first[:2000]
    assert FACT in first, first[:2000]

    sessions = home.run([VENOM_MEM, "session", "list", "--json"], env=owner)
    [session] = json.loads(sessions.stdout)["sessions"]
    assert (session["harness"], session["harness_session"]) == ("claude-code", final["session_id"])
    assert session["cwd"] == str(home.home)
    listed = home.run(
        [VENOM_MEM, "memory", "list", "--session", session["session"], "--json"], env=owner
    )
    [written] = json.loads(listed.stdout)["memories"]
    assert written["author"]["label"] == "claude-code"
    assert written.get("session") == session["session"], written


def opencode_provider(config: Path, url: str) -> None:
    """opencode's own config, pointed at the scripted model (its bundled Anthropic provider)."""
    data = json.loads(config.read_text()) if config.exists() else {}
    data["provider"] = {"anthropic": {"options": {"baseURL": url + "/v1", "apiKey": "offline"}}}
    data["model"] = "anthropic/claude-sonnet-4-5"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(data, indent=2) + "\n")


def test_opencode_run_gets_the_context_from_the_plugin_and_remove_leaves_its_files(
    home: Home,
) -> None:
    """opencode 1.18 reaches for @opencode-ai/plugin on npm at every start, plugin or not
    (offline here: the endpoint records the attempt); the plugin setup installs puts the
    context into the model's request, records opencode's session, and --remove leaves
    ~/.config/opencode as it was."""
    opencode = harness("opencode")
    owner = {"VENOM_MEM_TOKEN": "@owner"}
    added = home.run([VENOM_MEM, "memory", "add", "--space", "user", "--content", FACT,
                      "--json"], env=owner)  # fmt: skip
    assert added.returncode == 0, plain(added)
    config = home.home / ".config" / "opencode" / "opencode.jsonc"
    env = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}
    with offline_endpoint(Script("nothing_offered", {}, "done"), home.root, "opencode") as ep:
        opencode_provider(config, ep.url)
        argv = ep.wrap([opencode, "run", "hello"])
        plain_run = home.run(argv, 240, {**env, **ep.proxy_env})
        assert plain_run.returncode == 0, plain(plain_run)
        without = ep.requests()
        assert without, plain(plain_run)
        assert all(FACT not in json.dumps(r["body"]) for r in without), without
        fetched = [r["target"] for r in ep.outbound()]
        assert "registry.npmjs.org:443" in fetched, fetched  # no plugin, and still fetched

        before = files(home)
        applied = setup(home, "opencode", "--apply")
        assert applied["exit"] == 0, applied
        plugin = home.home / ".config" / "opencode" / "plugins" / "venom-mem.js"
        assert f"const VENOM_MEM = {json.dumps(VENOM_MEM)};" in plugin.read_text()
        assert setup(home, "--check", "opencode")["harnesses"][0]["hook"] is True
        home.stop_daemon()  # the plugin's hook starts it on demand
        ran = home.run(argv, 240, {**env, **ep.proxy_env})
        assert ran.returncode == 0, plain(ran)
        turn = ep.requests()[len(without) :]
    assert turn, plain(ran)
    first = json.dumps(turn[0]["body"])
    assert "# venom-mem context" in first, first[:2000]
    assert FACT in first, first[:2000]
    sessions = home.run([VENOM_MEM, "session", "list", "--json"], env=owner)
    [session] = json.loads(sessions.stdout)["sessions"]
    assert session["harness"] == "opencode", session
    assert session["harness_session"].startswith("ses_"), session

    removed = setup(home, "opencode", "--remove")
    assert (removed["exit"], removed["harnesses"][0]["kept"]) == (0, []), removed
    assert "plugin" in removed["harnesses"][0]["removed"], removed
    assert files(home) == before
    assert not plugin.parent.exists()  # the directory setup made, gone with it


def test_the_hook_prints_nothing_and_exits_0_when_venom_mem_refuses(tmp_path: Path) -> None:
    import subprocess

    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "VENOM_MEM_TOKEN": "not-a-token"}
    ran = subprocess.run(
        [VENOM_MEM, "session", "hook", "--harness", "claude-code"],
        input='{"session_id": "abc", "cwd": "/", "source": "startup"}',
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (ran.returncode, ran.stdout) == (0, ""), ran
    assert "denied.token" in ran.stderr


def codex_provider(url: str) -> str:
    """A model provider that is the scripted endpoint, with Codex's traffic off."""
    return f"""model = "scripted-model"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted model on loopback"
base_url = "{url}/v1"
env_key = "SCRIPTED_MODEL_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false

"""


def untrusted(config: str) -> str:
    """Codex's config without the trust of any hook, as before the person trusted one."""
    doc = tomlkit.parse(config)
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        hooks.pop("state", None)
        if not hooks:
            del doc["hooks"]
    return tomlkit.dumps(doc)


def test_codex_exec_gets_the_context_from_the_hook_once_trusted(home: Home) -> None:
    """Codex 0.171 runs a SessionStart hook only once the person has trusted it (it asks at
    its next interactive start, codex exec never does); --apply records the trust of the
    hook it installed, with the hash Codex lists for it, and --check tells the two apart."""
    codex = harness("codex")
    owner = {"VENOM_MEM_TOKEN": "@owner"}
    added = home.run([VENOM_MEM, "memory", "add", "--space", "user", "--content", FACT,
                      "--json"], env=owner)  # fmt: skip
    assert added.returncode == 0, plain(added)
    assert setup(home, "codex", "--apply")["exit"] == 0
    hooks = json.loads((home.home / ".codex" / "hooks.json").read_text())
    [group] = hooks["hooks"]["SessionStart"]
    assert group["hooks"][0]["command"].startswith(f"{VENOM_MEM} session hook --harness codex")
    config = home.home / ".codex" / "config.toml"
    written = config.read_text()
    assert "[hooks.state." in written, written
    assert setup(home, "--check", "codex")["harnesses"][0]["trusted"] is True
    config.write_text(untrusted(written))
    not_yet = setup(home, "--check", "codex")
    assert (not_yet["exit"], not_yet["harnesses"][0]["trusted"]) == (1, False), not_yet
    human = plain(home.run([VENOM_MEM, "setup", "--check", "codex"], timeout=180))
    assert "codex: hook installed, not yet trusted" in human, human
    home.stop_daemon()
    seen: dict[bool, tuple[str, str]] = {}
    for trusted in (False, True):
        script, log = Script("nothing_offered", {}, "done"), f"codex-trusted-{trusted}"
        with offline_endpoint(script, home.root, log) as ep:  # a log of its own per run
            config.write_text(codex_provider(ep.url) + (written if trusted else untrusted(written)))
            argv = [codex, "exec", "--json", "--skip-git-repo-check", "hello"]
            env = {"SCRIPTED_MODEL_API_KEY": "offline-dummy-key", **ep.proxy_env}
            ran = home.run(ep.wrap(argv), 180, env)
            requests = ep.requests()
        assert ran.returncode == 0, plain(ran)
        events = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
        [thread] = [e["thread_id"] for e in events if e["type"] == "thread.started"]
        turn = [r for r in requests if find_tool(r["body"], "memory_dsearch") is not None]
        assert turn, requests  # the agent's first request, with venom-mem's tools
        seen[trusted] = (thread, json.dumps(turn[0]["body"]))
    assert FACT not in seen[False][1]  # an untrusted hook does not run
    assert "# venom-mem context" in seen[True][1], seen[True][1][:2000]
    assert FACT in seen[True][1]
    sessions = json.loads(home.run([VENOM_MEM, "session", "list", "--json"], env=owner).stdout)
    [session] = sessions["sessions"]
    assert (session["harness"], session["harness_session"]) == ("codex", seen[True][0])


def test_the_plugin_setup_installs_is_the_one_docs_context_md_shows() -> None:
    """One plugin: docs/context.md's, but for its first line (setup's marks the file ours)."""
    doc = (Path(__file__).parents[2] / "docs" / "context.md").read_text()
    [block] = [p[len("javascript\n") :] for p in doc.split("```")[1::2]
               if p.startswith("javascript\n")]  # fmt: skip
    written = plugin_text("/home/you/.local/bin/venom-mem")
    assert written.startswith(PLUGIN_MARK + "\n")
    assert block.split("\n", 1)[1] == written.split("\n", 1)[1]
