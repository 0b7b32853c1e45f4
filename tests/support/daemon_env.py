"""An isolated venom-mem world for a test: its own dirs, socket, config and store, and a way
to run the real ``venom-mem`` executable in it and to stop its daemon afterwards."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

VENOM_MEM = str(Path(sys.executable).parent / "venom-mem")
ALL_RW = '[{"right":"read","scope":"*"},{"right":"write","scope":"*"}]'


@attrs.frozen
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        lines = self.stdout.strip().splitlines()
        assert len(lines) == 1, f"expected one JSON line, got {self.stdout!r} / {self.stderr!r}"
        return json.loads(lines[0])


@attrs.define
class World:
    root: Path
    env: dict[str, str]

    @property
    def socket(self) -> Path:
        return Path(self.env["VENOM_MEM_SOCKET"])

    @property
    def store(self) -> Path:
        return Path(self.env["XDG_DATA_HOME"]) / "venom-mem" / "store.db"

    @property
    def config(self) -> Path:
        return Path(self.env["VENOM_MEM_CONFIG"])

    def write_config(self, text: str) -> None:
        self.config.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.config.write_text(text)

    def environ(self, token: str | None = None, **extra: str) -> dict[str, str]:
        env = dict(self.env)
        if token is not None:
            env["VENOM_MEM_TOKEN"] = token
        env.update(extra)
        return env

    def run(
        self,
        *args: str,
        token: str | None = None,
        timeout: float = 30,
        cwd: str | None = None,
        env_extra: Mapping[str, str] | None = None,
        **extra: str,
    ) -> Result:
        proc = subprocess.run(
            [VENOM_MEM, *args],
            env=self.environ(token, **{**extra, **(env_extra or {})}),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str, token: str | None = None, cwd: str | None = None, **extra: str) -> Any:
        result = self.run(*args, "--json", token=token, cwd=cwd, env_extra=extra)
        assert result.code == 0, (args, result)
        return result.json

    def add_client(self, name: str, grants: str = ALL_RW) -> str:
        out = self.ok("client", "add", "--name", name, "--grants", grants, token="@owner")
        return str(out["token"])

    def daemon_pid(self) -> int | None:
        result = self.run("ping", "--json")
        if result.code != 0:
            return None
        return int(result.json["pid"])

    def stop_daemon(self, timeout: float = 10) -> None:
        pid = self.daemon_pid()
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        wait_gone(pid, timeout)


def wait_until(done: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    """Poll ``done`` until it is true (``True``) or ``timeout`` seconds pass (``False``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(step)
    return False


def wait_gone(pid: int, timeout: float) -> bool:
    return wait_until(lambda: not pid_alive(pid), timeout)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); count it as gone.
    with contextlib.suppress(OSError):
        status = Path(f"/proc/{pid}/status").read_text()
        if "\nState:\tZ" in status:
            return False
    return True


@contextlib.contextmanager
def make_world(base: Mapping[str, str] | None = None) -> Iterator[World]:
    """Short paths (a unix socket path is limited to 107 bytes) in a fresh temp dir."""
    root = Path(tempfile.mkdtemp(prefix="vm-", dir="/tmp"))
    for name in ("run", "data", "config", "home"):
        (root / name).mkdir(mode=0o700)
    source = os.environ if base is None else base
    env = {
        key: source[key]
        for key in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "TMPDIR")
        if key in source
    }
    env.update(
        HOME=str(root / "home"),
        XDG_RUNTIME_DIR=str(root / "run"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        VENOM_MEM_SOCKET=str(root / "run" / "d.sock"),
        VENOM_MEM_CONFIG=str(root / "config" / "config.zon"),
    )
    world = World(root, env)
    try:
        yield world
    finally:
        world.stop_daemon()
        shutil.rmtree(root, ignore_errors=True)
