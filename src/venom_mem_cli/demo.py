"""``make demo``: a short real tour of the CLI against a throwaway store and daemon.

Every line shown is a real ``venom-mem`` process; the daemon starts on the first call and is
stopped at the end, and the temporary directory goes with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VENOM_MEM = str(Path(sys.executable).parent / "venom-mem")
RW = '[{"right":"read","scope":"*"},{"right":"write","scope":"*"}]'


def _say(text: str) -> None:
    print(f"\n\033[1m# {text}\033[0m", flush=True)


def _run(env: dict[str, str], *args: str, token: str | None = None) -> tuple[int, str]:
    shown = ["venom-mem", *args]
    prefix = ""
    if token is not None:
        short = token if token.startswith("@") else token[:24] + "…"
        prefix = f"VENOM_MEM_TOKEN={short} "
    print(f"$ {prefix}{shlex.join(shown)}", flush=True)
    run_env = dict(env)
    if token is not None:
        run_env["VENOM_MEM_TOKEN"] = token
    proc = subprocess.run([VENOM_MEM, *args], env=run_env, capture_output=True, text=True,
                          check=False)  # fmt: skip
    out = (proc.stdout + proc.stderr).rstrip()
    if out:
        print(out, flush=True)
    if proc.returncode:
        print(f"(exit {proc.returncode})", flush=True)
    return proc.returncode, proc.stdout


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="venom-mem-demo-"))
    for name in ("run", "data", "config", "home"):
        (root / name).mkdir(mode=0o700)
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL") if key in os.environ}
    env.update(
        HOME=str(root / "home"),
        XDG_RUNTIME_DIR=str(root / "run"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
    )
    try:
        _say("The human creates one client token per harness (the daemon starts on demand)")
        _, out = _run(env, "client", "add", "--name", "claude-code", "--grants", RW, "--json",
                      token="@owner")  # fmt: skip
        claude = json.loads(out)["token"]
        _, out = _run(env, "client", "add", "--name", "codex", "--grants", RW, "--json",
                      token="@owner")  # fmt: skip
        codex = json.loads(out)["token"]

        _say("Claude Code stores a fact; repeating it changes nothing")
        add = ("memory", "add", "--space", "project/venom-std", "--kind", "fact", "--title",
               "Zig pin", "--content",
               "venom-std pins Zig with .zigversion; check it before upgrading.",
               "--tags", '["zig","build"]', "--json")  # fmt: skip
        _run(env, *add, token=claude)
        _run(env, *add, token=claude)

        _say("Codex finds it in a new session; search needs no token")
        _run(env, "memory", "search", "--query", "which zig version", "--json")
        _run(env, "memory", "search", "--query", "zig", token=codex)

        _say("Updates need the revision they read")
        _run(env, "memory", "update", "--id", "m1", "--revision", "1", "--content",
             "venom-std pins Zig 0.17 with .zigversion.", "--json", token=codex)  # fmt: skip
        _run(env, "memory", "update", "--id", "m1", "--revision", "1", "--content", "stale edit",
             "--json", token=codex)  # fmt: skip
        _run(env, "memory", "history", "--id", "m1", "--json")

        _say("Without a token it can read, but not write")
        _run(env, "memory", "add", "--space", "user", "--content", "hello", "--json")

        _say("Sessions: a fork, and search along its chain")
        _run(env, "session", "start", "--harness", "claude-code", "--cwd", "/home/u/venom-std",
             "--json", token=claude)  # fmt: skip
        _run(env, "session", "start", "--harness", "codex", "--parent", "s1", "--relation", "fork",
             "--json", token=codex)  # fmt: skip
        _run(env, "memory", "add", "--space", "project/venom-std", "--session", "s1",
             "--content", "The proto tests need a writable XDG_RUNTIME_DIR.", "--json",
             token=claude)  # fmt: skip
        _run(env, "memory", "search", "--query", "proto tests", "--session", "s2",
             "--lineage=true", "--json")  # fmt: skip
        _run(env, "store", "status", "--json")
    finally:
        _stop_daemon(env)
        shutil.rmtree(root, ignore_errors=True)
    print("\nDone: the throwaway store and its daemon are gone.")
    return 0


def _stop_daemon(env: dict[str, str]) -> None:
    proc = subprocess.run([VENOM_MEM, "ping", "--json"], env=env, capture_output=True, text=True,
                          check=False)  # fmt: skip
    if proc.returncode != 0:
        return
    pid = int(json.loads(proc.stdout)["pid"])
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
