"""The registration lines ``venom-mem setup`` prints (and docs/mcp-setup.md shows), run as
written against the real harness CLIs from npm: Claude Code, Codex and opencode.

``make test`` installs the pinned CLIs into .cache/npm (scripts/test-deps.sh); where npm
could not, these tests skip and say so. Each harness gets a throwaway HOME, so nothing here
touches a real user's configuration, and no harness talks to a model: registering, listing
and health-checking the server is all local.
"""

from __future__ import annotations

import json
import re
import stat
import subprocess
from collections.abc import Iterator

import pytest

from tests.support.daemon_env import VENOM_MEM
from tests.support.harness_home import (
    Home,
    as_written,
    codex_settings,
    harness,
    harness_home,
    plain,
)

FAKE_TOKEN = "vnt1.venom-mem.g9." + "A" * 43


@pytest.fixture
def home() -> Iterator[Home]:
    with harness_home() as h:
        yield h


def test_claude_code_registers_and_connects(home: Home) -> None:
    claude = harness("claude")
    [entry] = home.setup("claude-code")["harnesses"]
    assert entry["command"][:6] == ["claude", "mcp", "add", "--scope", "user", "venom-mem"]
    assert entry["command"][-2:] == [VENOM_MEM, "mcp"]
    added = home.run(as_written(entry, claude))
    assert added.returncode == 0, plain(added)
    listed = home.run([claude, "mcp", "list"])
    assert re.search(r"venom-mem: .*venom-mem mcp - .*Connected", plain(listed)), plain(listed)
    config = home.home / ".claude.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert entry["token"] in config.read_text()


def test_claude_code_shows_a_bad_token_as_failed_when_a_daemon_serves(home: Home) -> None:
    claude = harness("claude")
    home.setup("claude-code")  # leaves the store's daemon running
    bad = [claude, "mcp", "add", "--scope", "user", "venom-mem-bad", "-e",
           f"VENOM_MEM_TOKEN={FAKE_TOKEN}", "--", VENOM_MEM, "mcp"]  # fmt: skip
    assert home.run(bad).returncode == 0
    listed = plain(home.run([claude, "mcp", "list"]))
    line = next(row for row in listed.splitlines() if row.startswith("venom-mem-bad:"))
    assert "Connected" not in line, listed
    assert "Failed" in line, listed


def test_codex_registers_with_the_settings_it_needs(home: Home) -> None:
    codex = harness("codex")
    [entry] = home.setup("codex")["harnesses"]
    added = home.run(as_written(entry, codex))
    assert added.returncode == 0, plain(added)
    config = home.home / ".codex" / "config.toml"
    text = config.read_text()
    assert "[mcp_servers.venom-mem]" in text
    assert f'VENOM_MEM_TOKEN = "{entry["token"]}"' in text
    # The settings the printed steps ask for, added where they say; Codex must accept them.
    settings = codex_settings(entry)
    assert settings == ["required = true", 'default_tools_approval_mode = "approve"']
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    table = "[mcp_servers.venom-mem]\n"

    def get_with(lines: list[str]) -> subprocess.CompletedProcess[str]:
        config.write_text(text.replace(table, table + "\n".join(lines) + "\n"))
        return home.run([codex, "mcp", "get", "venom-mem", "--json"])

    listed = get_with(settings)
    assert listed.returncode == 0, plain(listed)
    server = json.loads(listed.stdout)
    assert server["transport"]["command"] == VENOM_MEM
    assert server["transport"]["args"] == ["mcp"]
    # Codex checks these two keys' values, so it knows them: a wrong one is refused.
    assert get_with(['required = "yes"']).returncode != 0
    assert get_with(['default_tools_approval_mode = "sometimes"']).returncode != 0


def test_opencode_registers_connects_and_the_chmod_step_is_needed(home: Home) -> None:
    opencode = harness("opencode")
    [entry] = home.setup("opencode")["harnesses"]
    added = home.run(as_written(entry, opencode))
    assert added.returncode == 0, plain(added)
    config = home.home / ".config" / "opencode" / "opencode.jsonc"
    assert entry["token"] in config.read_text()
    assert stat.S_IMODE(config.stat().st_mode) & 0o044  # as opencode writes it: readable
    [chmod] = [step for step in entry["then"] if step.startswith("chmod 600")]
    done = subprocess.run(
        ["sh", "-c", chmod.split("  #")[0]], env=home.env, check=False, capture_output=True
    )
    assert done.returncode == 0, done
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    listed = plain(home.run([opencode, "mcp", "list"]))
    assert re.search(r"venom-mem\s+connected", listed), listed
