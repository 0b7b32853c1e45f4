"""The command line as a person uses it (issue 14): human output of every verb from a real
daemon, input habits, --version, stop and restart, serve's ready line, mcp and Ctrl-C,
shell completion. Each runs the real ``venom-mem`` executable."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.daemon_env import VENOM_MEM, Result, World, pid_alive, wait_gone
from venom_mem_adapters.client import connect

OWNER = "@owner"
TEXT = "venom-std pins Zig with .zigversion; check it before upgrading."


def run_with_stdin(world: World, stdin: str, *args: str, token: str | None = None) -> Result:
    proc = subprocess.run([VENOM_MEM, *args], env=world.environ(token), input=stdin,
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    return Result(proc.returncode, proc.stdout, proc.stderr)


def shell(world: World, command: str, *, token: str | None = None) -> Result:
    """A command line as a person types it, in bash, with venom-mem on PATH."""
    env = world.environ(token)
    env["PATH"] = f"{Path(VENOM_MEM).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    proc = subprocess.run(["bash", "-c", command], env=env, cwd=world.root,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
                          check=False)  # fmt: skip
    return Result(proc.returncode, proc.stdout, proc.stderr)


def human(world: World, *args: str, token: str | None = OWNER) -> str:
    result = world.run(*args, token=token, COLUMNS="100")
    assert result.code == 0, (args, result)
    assert result.stderr == "", (args, result.stderr)
    return result.stdout


def test_every_verb_prints_readable_text_not_json(world: World) -> None:
    token = world.add_client("claude-code")
    shown = {
        "add": human(
            world,
            "memory",
            "add",
            "--space",
            "project/venom-std",
            "--kind",
            "fact",
            "--title",
            "Zig pin",
            "--content",
            TEXT,
            "--tag",
            "zig",
            "--tag",
            "build",
        ),
        "again": human(
            world,
            "memory",
            "add",
            "--space",
            "project/venom-std",
            "--kind",
            "fact",
            "--title",
            "Zig pin",
            "--content",
            TEXT,
            "--tags",
            "zig,build",
        ),
        "get": human(world, "memory", "get", "--id", "m1"),
        "update": human(
            world,
            "memory",
            "update",
            "--id",
            "m1",
            "--revision",
            "1",
            "--content",
            "venom-std pins Zig 0.17.",
        ),
        "history": human(world, "memory", "history", "--id", "m1"),
        "search": human(world, "memory", "search", "--query", "zig"),
        "nothing": human(world, "memory", "search", "--query", "nothing-like-it"),
        "list": human(world, "memory", "list"),
        "delete": human(world, "memory", "delete", "--id", "m1", "--revision", "2"),
        "restore": human(world, "memory", "restore", "--id", "m1"),
        "spaces": human(world, "space", "list"),
        "start": human(world, "session", "start", "--harness", "codex", "--cwd", "/home/u"),
        "session": human(world, "session", "get", "--session", "s1"),
        "sessions": human(world, "session", "list"),
        "chain": human(world, "session", "chain", "--session", "s1"),
        "end": human(world, "session", "end", "--session", "s1"),
        "clients": human(world, "client", "list"),
        "status": human(world, "store", "status"),
        "whoami": human(world, "whoami", token=token),
        "ping": human(world, "ping"),
        "doctor": human(world, "doctor"),
        "config": human(world, "config", "get", "--key", "memory.max_versions"),
        "grants": human(world, "grant", "list"),
        "audit": human(world, "audit"),
        "events": human(world, "events"),
    }
    for name, text in shown.items():
        assert '{"' not in text, (name, text)
        assert "[{" not in text, (name, text)
    assert shown["add"].startswith("stored m1 in project/venom-std (revision 1)")
    assert "nothing changed" in shown["again"]
    assert re.search(r"^tags +zig, build\s*$", shown["get"], re.M)
    assert re.search(r"^ *2 +update +owner +just now", shown["history"], re.M)
    assert re.search(r"^1 +m1 +project/venom-std", shown["search"], re.M)
    assert shown["nothing"].strip().endswith("no memories match 'nothing-like-it'")
    assert "venom-mem memory restore --id m1" in shown["delete"]
    assert re.search(r"^claude-code +g1 +read:\*, write:\*", shown["clients"], re.M)
    assert re.search(r"^read +\*\s*$", shown["whoami"], re.M)
    assert "principal.issued" in shown["audit"]
    assert "memory.added" in shown["events"] or "snapshot" in shown["events"]


def test_times_in_full_on_request(world: World) -> None:
    world.ok("memory", "add", "--space", "user", "--content", "x", token=OWNER)
    relative = human(world, "space", "list")
    full = human(world, "space", "list", "--full-times")
    assert "just now" in relative
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", full)
    # --full-times changes only human output: the --json path accepts and ignores it.
    assert world.ok("space", "list", "--full-times")["spaces"][0]["space"] == "user"


@pytest.mark.parametrize("json_path", [True, False])
def test_tags_grants_and_content_as_habits_have_them(world: World, json_path: bool) -> None:
    world.write_config(".{ .memory = .{ .max_content_bytes = 262144 } }")
    out = ("--json",) if json_path else ()
    repeated = world.run("memory", "add", "--space", "user", "--content", "one", "--tag", "zig",
                         "--tag", "build", *out, token=OWNER)  # fmt: skip
    commas = world.run("memory", "add", "--space", "user", "--content", "two", "--tags",
                       "zig,build", *out, token=OWNER)  # fmt: skip
    piped = run_with_stdin(world, "from\nstdin\n", "memory", "add", "--space", "user",
                           "--content", "-", *out, token=OWNER)  # fmt: skip
    big = "x" * 200_000 + "\n"  # past what one argv word may carry (128 KiB)
    file = world.root / "big.txt"
    file.write_text(big)
    from_file = world.run("memory", "add", "--space", "user", "--content-file", str(file),
                          *out, token=OWNER)  # fmt: skip
    granted = world.run("client", "add", "--name", "pi", "--grant", "read:*", "--grant",
                        "write:space:user", *out, token=OWNER)  # fmt: skip
    for result in (repeated, commas, piped, from_file, granted):
        assert result.code == 0, result
    memories = {m["id"]: m for m in world.ok("memory", "list", token=OWNER)["memories"]}
    assert memories["m1"]["tags"] == memories["m2"]["tags"] == ["zig", "build"]
    assert world.ok("memory", "get", "--id", "m3")["content"] == "from\nstdin\n"
    assert world.ok("memory", "get", "--id", "m4")["content"] == big
    clients = world.ok("client", "list", token=OWNER)["clients"]
    assert clients[0]["grants"] == [
        {"right": "read", "scope": "*"},
        {"right": "write", "scope": "space:user"},
    ]
    # A repeated array flag accumulates as the singular one does, on add and on update.
    tags = ("--tags", "a", "--tags", "b,c", "--tag", "d")
    added = world.run("memory", "add", "--space", "user", "--content", "five", *tags, *out,
                      token=OWNER)  # fmt: skip
    updated = world.run("memory", "update", "--id", "m1", "--revision", "1", "--tags", "x",
                        "--tags", "y", *out, token=OWNER)  # fmt: skip
    assert (added.code, updated.code) == (0, 0), (added, updated)
    memories = {m["id"]: m for m in world.ok("memory", "list", token=OWNER)["memories"]}
    assert memories["m5"]["tags"] == ["a", "b", "c", "d"]
    assert memories["m1"]["tags"] == ["x", "y"]


def test_a_bad_grant_word_and_a_missing_file_name_their_flag(world: World) -> None:
    bad = world.run("client", "add", "--name", "x", "--grant", "read", "--json", token=OWNER)
    assert bad.code == 2
    assert bad.json["error"]["data"]["param"] == "grants"
    assert "RIGHT:SCOPE" in bad.json["error"]["message"]
    gone = world.run("memory", "add", "--space", "user", "--content-file", "/nonexistent",
                     "--json", token=OWNER)  # fmt: skip
    assert gone.code == 2
    assert gone.json["error"]["data"]["param"] == "content"
    assert world.daemon_pid() is None  # usage errors never launch a daemon


def test_version(world: World) -> None:
    import venom_mem_core

    result = world.run("--version")
    assert (result.code, result.stdout.strip()) == (
        0,
        f"venom-mem, version {venom_mem_core.__version__}",
    )


def test_stop_is_the_owners_and_answers_what_is_in_flight(world: World) -> None:
    token = world.add_client("claude-code")
    pid = world.daemon_pid()
    assert pid is not None
    refused = world.run("stop", "--json", token=token)
    assert refused.code == 4
    assert refused.json["error"]["code"] == "denied.files"
    assert pid_alive(pid)
    # A write in flight when the stop comes (held up by an outside lock) is answered.
    import apsw

    outside = apsw.Connection(str(world.store))
    outside.execute("BEGIN IMMEDIATE")
    with ThreadPoolExecutor(2) as pool, connect(world.environ(OWNER)) as held:
        pending = pool.submit(held.call, "memory.add", {"space": "user", "content": "in flight"})
        time.sleep(0.5)
        stopping = pool.submit(world.run, "stop", token=OWNER)
        time.sleep(0.5)
        outside.execute("ROLLBACK")
        outside.close()
        assert pending.result(timeout=10)["changed"] is True  # answered, not cut off
        stopped = stopping.result(timeout=15)
    assert stopped.code == 0, stopped
    assert stopped.stdout.strip() == f"stopped the daemon (pid {pid})"
    assert not pid_alive(pid)  # stop returns once the process is gone
    assert world.ok("memory", "list", token=OWNER)["memories"][0]["snippet"] == "in flight"


def test_restart_brings_up_a_new_daemon(world: World) -> None:
    world.ok("memory", "add", "--space", "user", "--content", "kept", token=OWNER)
    old = world.daemon_pid()
    result = world.run("restart", "--json", token=OWNER)
    assert result.code == 0, result
    assert result.json["stopped"] == old
    new = result.json["pid"]
    assert new != old
    assert pid_alive(new)
    assert old is not None
    assert not pid_alive(old)
    assert world.daemon_pid() == new
    assert world.ok("memory", "get", "--id", "m1")["content"] == "kept"
    text = human(world, "restart")
    assert re.fullmatch(rf"stopped pid {new}; a new daemon runs as pid \d+\n", text)


def test_serve_says_one_line_on_stderr_when_ready(world: World) -> None:
    proc = subprocess.Popen([VENOM_MEM, "serve"], env=world.environ(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("venom-mem ")
        assert f"ready on {world.socket}" in line
        assert world.ok("ping")["pid"] == proc.pid
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert (out, err) == ("", "")  # one line, and nothing more on a clean stop


def test_mcp_exits_on_the_first_ctrl_c(world: World) -> None:
    proc = subprocess.Popen([VENOM_MEM, "mcp"], env=world.environ(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        time.sleep(1.5)  # past the import of mcp: serving, with stdin open like a terminal's
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert b"Traceback" not in err


def complete(world: World, line: str) -> list[str]:
    words = line.split(" ")
    result = world.run(
        _VENOM_MEM_COMPLETE="bash_complete",
        COMP_WORDS=line,
        COMP_CWORD=str(len(words) - 1),
    )
    assert result.code == 0, result
    return [row.split(",", 1)[1] for row in result.stdout.splitlines()]


def test_completion_knows_verbs_flags_and_choices(world: World) -> None:
    assert {"memory", "session", "stop", "restart"} <= set(complete(world, "venom-mem "))
    assert {"add", "search", "list"} <= set(complete(world, "venom-mem memory "))
    assert {"--query", "--spaces", "--mode"} <= set(complete(world, "venom-mem memory search --"))
    assert complete(world, "venom-mem memory add --kind ") == [
        "fact",
        "decision",
        "procedure",
        "note",
    ]
    assert complete(world, "venom-mem memory search --mode f") == ["fts"]
    assert complete(world, "venom-mem memory search --lineage ") == ["true", "false"]
    for shell in ("bash", "zsh", "fish"):
        script = world.run(_VENOM_MEM_COMPLETE=f"{shell}_source")
        assert script.code == 0, shell
        assert "_VENOM_MEM_COMPLETE" in script.stdout, shell
    assert world.daemon_pid() is None


def test_help_fills_the_terminal_and_shows_examples(world: World) -> None:
    wide = world.run("memory", "search", "--help", COLUMNS="120").stdout
    assert max(len(line) for line in wide.splitlines()) == 120
    assert "$ venom-mem memory search --query 'which zig version'" in wide
    grants = " ".join(world.run("client", "add", "--help", COLUMNS="120").stdout.split())
    assert '[{"right":"read","scope":"*"},{"right":"write","scope":"*"}]' in grants
    assert "--grant" in grants
    assert "\x1b[" not in wide  # not a terminal: no colour


def test_readme_documents_completion() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for shell in ("bash", "zsh", "fish"):
        assert f"_VENOM_MEM_COMPLETE={shell}_source venom-mem" in readme


def test_stop_waits_for_the_process(world: World) -> None:
    """``stop && serve`` finds no daemon in the way: stop returns once the pid is gone."""
    world.ok("whoami")
    pid = world.daemon_pid()
    assert pid is not None
    assert world.run("stop", "--json", token=OWNER).code == 0
    assert wait_gone(pid, 0.01)
    assert not os.path.exists(world.socket)
    nothing = world.run("stop", "--json", token=OWNER)
    assert nothing.code == 6  # nothing to stop, and stop starts nothing
    assert nothing.json["error"]["code"] == "unavailable.not_running"
    assert "fix" not in nothing.json["error"]["data"]
    assert world.daemon_pid() is None


def test_the_readme_terminal_commands_run_as_written(world: World) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Use it from a terminal", 1)[1].split("\n## ", 1)[0]
    block = section.split("```console\n", 1)[1].split("```", 1)[0]
    (world.root / "notes.md").write_text("# notes\nsmall PRs, always\n")
    token = world.add_client("terminal")  # the reader has set VENOM_MEM_TOKEN to a client's
    for line in block.splitlines():
        result = shell(world, line.removeprefix("$ "), token=token)
        assert result.code == 0, (line, result)


def test_the_readme_python_blocks_run_as_written(world: World, tmp_path: Path) -> None:
    """Every ```python block of README.md, run as it stands in a fresh interpreter: the first
    against the world's daemon (started on demand) as a client, the second in process on a
    store of its own (its temporary directory under this test's)."""
    import sys

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", readme, re.M | re.S)
    assert len(blocks) >= 2
    token = world.add_client("python")
    for block in blocks:
        proc = subprocess.run([sys.executable, "-c", block], env=world.environ(token,
                              TMPDIR=str(tmp_path)), cwd=world.root, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        assert (proc.returncode, proc.stderr) == (0, ""), (block, proc)
    [hit] = world.ok("memory", "search", "--query", "small PRs", token=OWNER)["results"]
    assert hit["author"]["label"] == "python"  # the client's call, through the daemon
    [own] = tmp_path.glob("*/store.db")
    from venom_mem_adapters.sqlite import SqliteStore

    with SqliteStore.open(str(own)) as store, store.read() as tx:
        stored = tx.get_memory(1)  # stored in process, on a file of its own
    assert stored is not None
    assert stored.content == "Prefers small PRs."


def test_make_demo_tells_the_story_in_human_output_and_ends_with_next_steps() -> None:
    import sys

    started = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k != "VENOM_MEM_TOKEN"}
    proc = subprocess.run([sys.executable, "-m", "venom_mem_cli.demo"], capture_output=True,
                          text=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
                          env=env)  # fmt: skip
    assert proc.returncode == 0, proc
    assert time.monotonic() - started < 30
    out = proc.stdout
    steps = re.findall(r"^\d+\. .+$", out, re.M)
    assert len(steps) >= 8
    assert '{"' not in out  # human output throughout
    assert "stored m1 in project/venom-std (revision 1)" in out
    assert "fix: venom-mem memory get --id m1  # re-read it, then update with --revision 2" in out
    assert "stopped the daemon (pid " in out
    tail = out.rsplit("Next steps", 1)[1]
    assert "pipx install" in tail
    assert "venom-mem setup" in tail


def _modules_loaded(world: World, *argv: str) -> set[str]:
    """The modules one successful CLI call imports (``python -X importtime``)."""
    import sys

    code = (
        "import sys; from venom_mem_cli.entry import main; "
        f"sys.argv = {['venom-mem', *argv]!r}; main()"
    )
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=world.environ(),
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert proc.returncode == 0, proc
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}


def test_the_json_path_still_imports_nothing_heavy(world: World) -> None:
    """ADR 0006's budget, after issue 14's habits and fixes: on a successful --json call the
    CLI loads neither rich nor click, nor the modules only errors and help need."""
    world.ok("whoami")
    loaded = _modules_loaded(world, "memory", "search", "--query", "x", "--tags", "a,b", "--json")
    roots = {name.split(".")[0] for name in loaded}
    heavy = {"rich", "click", "rich_click", "typing", "dataclasses", "pathlib", "shlex", "datetime"}
    heavy.add("cattrs")  # commands are structured daemon-side (docs/adr/0029)
    assert not roots & heavy, roots & heavy
    assert "venom_mem_cli.fixes" not in loaded
    assert "venom_mem_cli.helptext" not in loaded


def test_a_launching_call_reads_the_config_without_cattrs(world: World) -> None:
    """The call that launches the daemon reads the config's store and daemon sections
    without loading cattrs (docs/adr/0035); the daemon it launches reads the whole file."""
    world.write_config(
        ".{ .daemon = .{ .startup_timeout_ms = 9000 }, .memory = .{ .max_versions = 7 } }\n"
    )
    loaded = _modules_loaded(world, "memory", "list", "--json")
    assert "venom_mem_adapters.client._launcher" in loaded  # this call did launch the daemon
    assert not {name for name in loaded if name.split(".")[0] == "cattrs"}
    assert world.ok("config", "get", "--key", "memory.max_versions")["value"] == 7


def test_events_follow_prints_one_readable_line_per_event(world: World) -> None:
    import select

    world.ok("memory", "add", "--space", "user", "--content", "before", token=OWNER)
    proc = subprocess.Popen(
        [VENOM_MEM, "events", "--follow"],
        env=world.environ(OWNER),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        # A run started in the background (`make test &`) ignores SIGINT, the child inherits
        # that, and Python then installs no KeyboardInterrupt: give it the terminal's default.
        # (Safe here: signal.signal takes no lock, and this runs from the main thread.)
        preexec_fn=functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 20
        added = False
        while time.monotonic() < deadline and not any("memory.added" in line for line in lines):
            ready, _, _ = select.select([proc.stdout], [], [], 0.2)
            if ready:
                lines.append(proc.stdout.readline())
            elif lines and not added:  # the snapshot is out: now something happens
                world.ok("memory", "add", "--space", "user", "--content", "after", token=OWNER)
                added = True
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:  # not left running into the next test
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130
    assert lines[0].startswith("snapshot  space  space:user  space=user memories=1")
    event = next(line for line in lines if "memory.added" in line)
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d  memory\.added  space:user  memory=m2 space=user revision=1\n", event
    )
    assert not any(line.startswith("{") for line in lines)


USAGE_MISTAKES = [
    (("memory", "search"), "invalid_params.missing", "query", "memory search needs --query"),
    (("memory", "search", "--query", "x", "--limit", "ten"), "invalid_params.type", "limit",
     "--limit takes an integer, got 'ten'"),
    (("memory", "search", "--query", "x", "--bogus", "1"), "invalid_params.unknown", "bogus",
     "memory.search has no option --bogus"),
    (("memory", "search", "--query"), "invalid_params.missing", "query",
     "--query needs a value"),
    (("memory", "get", "--id", "m1", "--here"), "invalid_params.unknown", "here",
     "memory.get has no option --here"),
    (("events", "--follow", "--limit", "0"), "invalid_params.range", "limit",
     "--limit must be at least 1"),
    (("setup",), "invalid_params.missing", "harnesses", "setup needs --harnesses"),
    (("ui", "--port", "99999"), "invalid_params.range", "port", "--port must be at most 65535"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "code", "param", "message"), USAGE_MISTAKES)
def test_both_paths_read_a_mistake_alike_and_name_its_flag(
    world: World, args: tuple[str, ...], code: str, param: str, message: str
) -> None:
    """One parser: the --json path and the rich-click commands give one mistake the same
    code, param and message, and neither launches a daemon (CONTRACT section 3)."""
    as_json = world.run(*args, "--json", token=OWNER)
    assert as_json.code == 2, as_json
    assert as_json.json["error"]["code"] == code
    assert as_json.json["error"]["data"]["param"] == param
    assert as_json.json["error"]["message"] == message
    human = world.run(*args, token=OWNER)
    assert human.code == 2, human
    assert human.stderr.splitlines()[0] == f"error: {code}: {message}"
    assert world.daemon_pid() is None


@pytest.mark.parametrize("json_path", [True, False])
def test_setup_takes_harnesses_as_words_or_flags(world: World, json_path: bool) -> None:
    out = ("--json",) if json_path else ()
    words = world.run("setup", "claude-code", "codex", *out)
    flag = world.run("setup", "--harness", "opencode", *out)
    assert (words.code, flag.code) == (0, 0), (words, flag)
    again = world.run("setup", "codex", *out)
    assert again.code == 5, again
    fix = "venom-mem setup codex --replace  # old tokens stop working"
    assert (again.json["error"]["data"]["fix"] if json_path else again.stderr).find(fix) >= 0
    replaced = world.run("setup", "codex", "--replace", *out)
    assert replaced.code == 0, replaced
    if json_path:
        assert [h["harness"] for h in words.json["harnesses"]] == ["claude-code", "codex"]
        assert replaced.json["harnesses"][0]["token"] != words.json["harnesses"][1]["token"]
    else:
        assert "codex  (client codex, g" in words.stdout
        assert "opencode mcp add venom-mem" in flag.stdout
    bad = world.run("setup", "bogus", "--json")
    assert (bad.code, bad.json["error"]["data"]["param"]) == (2, "harnesses")
    clients = world.ok("client", "list", token=OWNER)["clients"]
    assert sorted(c["client"] for c in clients) == ["claude-code", "codex", "opencode"]
