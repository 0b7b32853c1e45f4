"""A throwaway HOME for the real harness CLIs from npm (Claude Code, Codex, opencode), so
nothing a test does touches a real user's configuration, and a way to run ``venom-mem
setup`` and the lines it prints there."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon_env import VENOM_MEM, wait_gone

NPM_BIN = Path(__file__).resolve().parents[2] / ".cache" / "npm" / "node_modules" / ".bin"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def harness(name: str) -> str:
    """The installed harness binary, or a skip that says why it isn't there."""
    path = NPM_BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in {NPM_BIN} (scripts/test-deps.sh could not npm it)")
    return str(path)


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir(mode=0o700)

    @property
    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": f"{NPM_BIN}:{os.path.dirname(VENOM_MEM)}:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CI": "true",
        }

    def run(
        self, argv: list[str], timeout: float = 120, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            env={**self.env, **(env or {})},
            cwd=str(self.home),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def setup(self, *harnesses: str) -> dict[str, Any]:
        result = self.run([VENOM_MEM, "setup", *harnesses, "--json"])
        assert result.returncode == 0, result
        out: dict[str, Any] = json.loads(result.stdout)
        return out

    def stop_daemon(self) -> None:
        record = self.home / ".local" / "share" / "venom-mem" / "store.db.daemon"
        if record.exists():
            pid = json.loads(record.read_text())["pid"]
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                return
            wait_gone(pid, 10)


@contextlib.contextmanager
def harness_home(prefix: str = "vm-cli-") -> Iterator[Home]:
    """A fresh HOME (short path, for the daemon's socket); its daemon is stopped afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    h = Home(root)
    try:
        yield h
    finally:
        h.stop_daemon()
        shutil.rmtree(root, ignore_errors=True)


def as_written(entry: Mapping[str, Any], binary: str) -> list[str]:
    """The printed command, with the harness resolved to its installed binary."""
    command: list[str] = list(entry["command"])
    return [binary, *command[1:]]


def codex_settings(entry: Mapping[str, Any]) -> list[str]:
    """The TOML lines the printed steps say to add to Codex's ``[mcp_servers.venom-mem]``."""
    [keys] = [step for step in entry["steps"] if step["kind"] == "codex_keys"]
    return [line.strip().split("  #")[0] for line in keys["lines"] if line.startswith("  ")]


def plain(result: subprocess.CompletedProcess[str]) -> str:
    return ANSI.sub("", result.stdout + result.stderr)
