"""``make demo``: a short real tour of the CLI against a throwaway store and daemon.

Each step says in one line what happens and why, then runs real ``venom-mem`` processes
with their human output. The daemon starts on the first call and is stopped with
``venom-mem stop`` at the end; the temporary directory goes with it. It ends with the next
steps for daily use.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VENOM_MEM = str(Path(sys.executable).parent / "venom-mem")
CHECKOUT = Path(__file__).resolve().parents[2]
ZIG = "venom-std pins Zig with .zigversion; check it before upgrading."


class Tour:
    def __init__(self, env: dict[str, str], *, styled: bool) -> None:
        self.env = env
        self.styled = styled
        self.step = 0

    def say(self, text: str) -> None:
        self.step += 1
        line = f"{self.step}. {text}"
        print(f"\n\033[1m{line}\033[0m" if self.styled else f"\n{line}", flush=True)

    def run(self, *args: str, token: str | None = None, show: bool = True) -> str:
        """Run ``venom-mem args`` as a person would type it; returns its stdout."""
        env = dict(self.env)
        prefix = ""
        if token is not None:
            env["VENOM_MEM_TOKEN"] = token
            shown = token if token.startswith("@") else token[:20] + "…"
            prefix = f"VENOM_MEM_TOKEN={shown} "
        proc = subprocess.run([VENOM_MEM, *args], env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False)  # fmt: skip
        if show:
            print(f"$ {prefix}{shlex.join(['venom-mem', *args])}", flush=True)
            out = (proc.stdout + proc.stderr).rstrip()
            if out:
                print(out, flush=True)
        return proc.stdout


def _token(added: str) -> str:
    """The token line of ``client add``'s human output."""
    return next(line for line in added.splitlines() if line.startswith("vnt1."))


def _environment(root: Path) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL") if key in os.environ}
    env.update(
        HOME=str(root / "home"),
        XDG_RUNTIME_DIR=str(root / "run"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        COLUMNS=str(shutil.get_terminal_size((100, 24)).columns),
    )
    if sys.stdout.isatty() and "NO_COLOR" not in os.environ:
        env["FORCE_COLOR"] = "1"  # the children's output is captured, but read on this terminal
    elif "NO_COLOR" in os.environ:
        env["NO_COLOR"] = os.environ["NO_COLOR"]
    return env


def tour(t: Tour) -> None:
    t.say("Once, the human gives each harness its own client token; the daemon starts itself.")
    claude = _token(t.run("client", "add", "--name", "claude-code", "--grant", "read:*",
                          "--grant", "write:*", token="@owner"))  # fmt: skip
    codex = _token(t.run("client", "add", "--name", "codex", "--grant", "read:*", "--grant",
                         "write:*", token="@owner", show=False))  # fmt: skip
    print("(and one for codex, the same way)")

    t.say("Claude Code stores a fact. Storing the same text again changes nothing.")
    add = ("memory", "add", "--space", "project/venom-std", "--kind", "fact", "--title",
           "Zig pin", "--content", ZIG, "--tag", "zig", "--tag", "build")  # fmt: skip
    t.run(*add, token=claude)
    t.run(*add, token=claude)

    t.say("A week later Codex, in another harness, finds it. Reading needs no token at all.")
    t.run("memory", "search", "--query", "which zig version")

    t.say("An update names the revision it read, so two agents never overwrite each other.")
    t.run("memory", "update", "--id", "m1", "--revision", "1", "--content",
          "venom-std pins Zig 0.17 with .zigversion.", token=codex)  # fmt: skip
    t.run("memory", "update", "--id", "m1", "--revision", "1", "--content", "a stale edit",
          token=claude)  # fmt: skip

    t.say("Every revision is kept, with who made it.")
    t.run("memory", "history", "--id", "m1")

    t.say("Without a token a caller can read, but it can't write.")
    t.run("memory", "add", "--space", "user", "--content", "hello")

    t.say("Codex forks Claude's conversation; a search along the fork finds what Claude noted.")
    t.run("session", "start", "--harness", "claude-code", "--cwd", "/home/u/venom-std",
          token=claude)  # fmt: skip
    t.run("session", "start", "--harness", "codex", "--parent", "s1", "--relation", "fork",
          token=codex)  # fmt: skip
    t.run("memory", "add", "--space", "project/venom-std", "--session", "s1", "--content",
          "The proto tests need a writable XDG_RUNTIME_DIR.", token=claude)  # fmt: skip
    t.run("memory", "search", "--query", "proto tests", "--session", "s2", "--lineage")

    t.say("What the store holds, space by space.")
    t.run("space", "list")

    t.say("The owner stops the daemon cleanly; the next command would start a new one.")
    t.run("stop", token="@owner")


NEXT_STEPS = f"""
Next steps
  Install it for daily use:   pipx install {CHECKOUT}   (or: uv tool install {CHECKOUT})
  Set it up for your harnesses:   venom-mem setup claude-code codex opencode
  Then see what it can do:   venom-mem --help   and   docs/mcp-setup.md
"""


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="venom-mem-demo-"))
    for name in ("run", "data", "config", "home"):
        (root / name).mkdir(mode=0o700)
    env = _environment(root)
    t = Tour(env, styled=sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    print("A tour of venom-mem against a throwaway store; every line below is a real command.")
    try:
        tour(t)
    finally:
        t.run("stop", token="@owner", show=False)  # if a step failed before the last one
        shutil.rmtree(root, ignore_errors=True)
    print("\nDone: the throwaway store and its daemon are gone.")
    print(NEXT_STEPS.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
