"""The human output in a real terminal: tmux runs real commands in a 100-column pane, and the
screen is read back with capture-pane (issue 14). No ID, space or timestamp may be split
across lines, help is coloured on a terminal and plain with NO_COLOR, and ``venom-mem mcp``
ends on the first Ctrl-C. tmux comes from scripts/test-deps.sh; without it these skip."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon_env import VENOM_MEM, World

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (scripts/test-deps.sh)"
)

WIDTH = 100
OWNER = "@owner"
LONG_SPACE = "project/venom-std-with-a-rather-long-space-name"
# An SGR sequence that sets a colour (30-38, 40-48, 90-97, 100-107; 39 and 49 reset).
COLOUR = re.compile(r"\x1b\[(?:[0-9]+;)*(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9]+)*m")
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


class Pane:
    """One tmux server of its own (``-L``), one window of WIDTH columns."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.server = f"vm-{uuid.uuid4().hex[:8]}"
        self.n = 0

    def tmux(self, *args: str) -> str:
        proc = subprocess.run(["tmux", "-L", self.server, *args], capture_output=True,
                              text=True, timeout=20, check=True)  # fmt: skip
        return proc.stdout

    def start(self, command: str, *, env: dict[str, str] | None = None) -> None:
        """Run ``command`` in a fresh window, in the world's environment plus ``env``."""
        self.n += 1
        script = self.world.root / f"pane{self.n}.sh"
        exports = {**self.world.environ(), "TERM": "xterm-256color", **(env or {})}
        lines = ["unset NO_COLOR COLUMNS LINES FORCE_COLOR"]  # the pane decides, as for a person
        lines += [f"export {k}={shlex.quote(v)}" for k, v in exports.items()]
        lines += [f"export PATH={shlex.quote(str(Path(VENOM_MEM).parent))}:$PATH", command,
                  "echo __DONE__ $?", "sleep 600"]  # fmt: skip
        script.write_text("\n".join(lines) + "\n")
        if self.n == 1:
            self.tmux("new-session", "-d", "-x", str(WIDTH), "-y", "80", "-s", "t",
                      f"bash {shlex.quote(str(script))}")  # fmt: skip
        else:
            self.tmux("clear-history", "-t", "t")
            self.tmux("respawn-pane", "-k", "-t", "t", f"bash {shlex.quote(str(script))}")

    def screen(self, *, escapes: bool = False) -> str:
        args = ["capture-pane", "-p", "-t", "t", "-S", "-", "-E", "-"]
        return self.tmux(*args, *(["-e"] if escapes else []))

    def wait_done(self, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.screen()
            if "__DONE__" in text:
                return text
            time.sleep(0.1)
        raise AssertionError(f"the pane did not finish:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True,
                       timeout=20, check=False)  # fmt: skip


@pytest.fixture
def pane(world: World) -> Iterator[Pane]:
    p = Pane(world)
    try:
        yield p
    finally:
        p.close()


def fill(world: World) -> None:
    token = world.add_client("a-rather-long-client-name")
    long_text = (
        "The proto tests need a writable XDG_RUNTIME_DIR; in CI it is unset, so the harness "
        "points it at a fresh 0700 directory before the daemon starts. " * 4
    )
    for n in range(12):
        space = LONG_SPACE if n % 2 else "user"
        world.ok("memory", "add", "--space", space, "--kind", "fact", "--title",
                 f"Memory number {n} with a title that goes on", "--content",
                 f"{n}: {long_text}", "--tags", "zig,build,ci", token=token)  # fmt: skip
    world.ok("memory", "update", "--id", "m3", "--revision", "1", "--content", "changed",
             token=token)  # fmt: skip
    parent = world.ok("session", "start", "--harness", "claude-code", "--cwd",
                      "/home/someone/src/github.com/venom-org/venom-std", token=token)  # fmt: skip
    world.ok("session", "start", "--harness", "codex", "--parent", parent["session"],
             "--relation", "fork", token=token)  # fmt: skip


def test_nothing_is_split_in_a_100_column_pane(world: World, pane: Pane) -> None:
    fill(world)
    pane.start(
        "venom-mem memory list; venom-mem memory search --query 'proto tests'; "
        "venom-mem session list --full-times; venom-mem memory history --id m3 --full-times; "
        "venom-mem space list --full-times; venom-mem client list",
        env={"VENOM_MEM_TOKEN": OWNER},
    )
    screen = pane.wait_done()
    lines = screen.splitlines()
    assert "__DONE__ 0" in screen, screen
    assert max(len(line) for line in lines) <= WIDTH
    words = {w for line in lines for w in re.findall(r"[\w./:-]+", line)}
    ids = [f"m{n}" for n in range(1, 13)] + ["s1", "s2"]
    for atom in [*ids, LONG_SPACE, "a-rather-long-client-name"]:
        assert atom in words, (atom, screen)
    memories = world.ok("memory", "list", "--limit", "200")["memories"]
    sessions = world.ok("session", "list")["sessions"]
    full_times = {s["started"] for s in sessions} | {m["updated"] for m in memories[:1]}
    shown_times = set(TS.findall(screen))
    assert {s["started"] for s in sessions} <= shown_times, screen
    assert full_times & shown_times
    # No row of a table is taller than one line: each memory ID starts exactly one line.
    for memory_id in ids[:12]:
        starts = [line for line in lines if re.match(rf"^(\d+ +)?{memory_id}\b", line)]
        assert len(starts) >= 1, (memory_id, screen)
    rows = [line for line in lines if re.match(r"^m\d+ ", line)]
    assert all(line.rstrip().endswith(("…", "ago", "now")) or "  " in line for line in rows)


def test_help_is_coloured_on_a_terminal_and_plain_with_no_color(world: World, pane: Pane) -> None:
    pane.start("venom-mem memory search --help")
    coloured = pane.wait_done() and pane.screen(escapes=True)
    assert COLOUR.search(coloured), coloured
    assert max(len(line) for line in pane.screen().splitlines()) == WIDTH  # the pane's width
    pane.start("venom-mem memory search --help", env={"NO_COLOR": "1"})
    pane.wait_done()
    plain = pane.screen(escapes=True)
    assert "$ venom-mem memory search --query" in plain
    assert not COLOUR.search(plain), plain  # bold and dim stay: NO_COLOR is about colour


def test_mcp_in_a_terminal_ends_on_the_first_ctrl_c(world: World, pane: Pane) -> None:
    pane.start("venom-mem mcp")
    time.sleep(2)  # serving: the mcp SDK imported, stdin the terminal
    pane.tmux("send-keys", "-t", "t", "C-c")
    screen = pane.wait_done(timeout=10)
    assert "__DONE__ 130" in screen
    assert "Traceback" not in screen
