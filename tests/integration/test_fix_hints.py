"""A test per fix hint (issue 14): the error's fix, run as written in bash with the same
token, gets past the error, or is the documented next step and succeeds."""

from __future__ import annotations

import re
import signal
import subprocess

from tests.integration.test_cli_human import shell
from tests.support.daemon_env import VENOM_MEM, Result, World
from venom_mem_core.errors import UNKNOWN_DENIED_FIX

OWNER = "@owner"


def fix_of(result: Result) -> str:
    """The fix a failed command gave: data.fix with --json, the ``fix:`` line without."""
    if result.stdout.startswith('{"error"'):
        return str(result.json["error"]["data"]["fix"])
    match = re.search(r"^fix: (.*)$", result.stderr, re.M)
    assert match, result
    return match.group(1)


def test_unknown_denied_write_keeps_the_transcripts_fix_and_it_runs(world: World) -> None:
    denied = world.run("memory", "add", "--space", "user", "--content", "hello", "--json")
    assert denied.code == 4
    assert fix_of(denied) == UNKNOWN_DENIED_FIX  # RFC-0020 section 1, exactly
    assert shell(world, fix_of(denied)).code == 0  # the documented next step: who am I


def test_a_client_lacking_write_is_shown_its_grants(world: World) -> None:
    token = world.add_client("reader", '[{"right":"read","scope":"*"}]')
    denied = world.run("memory", "add", "--space", "user", "--content", "x", token=token)
    assert denied.code == 4
    fix = fix_of(denied)
    assert fix.startswith("venom-mem whoami  #")
    assert "--grant write:space:user" in fix
    shown = shell(world, fix, token=token)
    assert shown.code == 0
    assert re.search(r"^read +\*", shown.stdout, re.M)


def test_an_admin_denial_is_the_same_command_as_owner(world: World) -> None:
    token = world.add_client("claude-code")
    for args in (("client", "list"), ("client", "list", "--json"), ("stop", "--json")):
        denied = world.run(*args, token=token)
        assert denied.code == 4, args
        fix = fix_of(denied)
        assert fix.startswith(f"VENOM_MEM_TOKEN=@owner venom-mem {' '.join(args)}  #"), fix
        assert "outside any managed tree" in fix
        assert "client token" not in fix  # a client can never be admin
        assert shell(world, fix, token=token).code == 0, args


def test_a_revoked_token_is_told_how_to_get_a_new_one(world: World) -> None:
    token = world.add_client("gone")
    world.ok("client", "remove", "--name", "gone", token=OWNER)
    denied = world.run("memory", "add", "--space", "user", "--content", "x", "--json", token=token)
    assert denied.json["error"]["code"] == "denied.token"
    fix = fix_of(denied)
    made = shell(world, fix.replace("--grant", "--json --grant", 1), token=token)
    assert made.code == 0, made
    fresh = made.json["token"]
    assert world.ok("memory", "add", "--space", "user", "--content", "x", token=fresh)["changed"]


def test_no_daemon_names_a_command_that_starts_one(world: World) -> None:
    for args in (("ping",), ("ping", "--json"), ("events", "--json"), ("audit",)):
        missing = world.run(*args, token=OWNER)
        assert missing.code == 6, args
        fix = fix_of(missing)
        assert fix.startswith("venom-mem store status"), fix
        assert shell(world, fix, token=OWNER).code == 0
        assert world.run(*args, token=OWNER).code == 0, args
        world.stop_daemon()


def test_doctor_without_a_daemon_keeps_serve_which_now_says_when_it_is_ready(
    world: World,
) -> None:
    missing = world.run("doctor", "--json", token=OWNER)
    assert fix_of(missing) == "venom-mem serve"  # RFC-0020 section 8 pins it
    serve = subprocess.Popen([VENOM_MEM, "serve"], env=world.environ(), stderr=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert serve.stderr is not None
        assert "ready on" in serve.stderr.readline()
        assert world.run("doctor", token=OWNER).code == 0
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=10)


def test_explicit_startup_says_serve(world: World) -> None:
    world.write_config('.{ .daemon = .{ .startup = "explicit" } }')
    missing = world.run("ping", "--json")
    assert fix_of(missing) == "venom-mem serve"


def test_a_missing_flag_is_named_and_its_fix_is_the_example(world: World) -> None:
    for args in (("memory", "search"), ("memory", "search", "--json")):
        missing = world.run(*args, "--limit", "3", token=OWNER)
        assert missing.code == 2
        text = missing.json["error"]["message"] if "--json" in args else missing.stderr
        assert "memory search needs --query" in text
        fix = fix_of(missing)
        assert fix.startswith("venom-mem memory search --query ")
        assert shell(world, fix, token=OWNER).code == 0
    out_of_range = world.run("memory", "list", "--limit", "0", "--json")
    assert out_of_range.json["error"]["message"] == "--limit must be at least 1"


def test_a_stale_revision_says_re_read_then_update(world: World) -> None:
    world.ok("memory", "add", "--space", "user", "--content", "v1", token=OWNER)
    world.ok("memory", "update", "--id", "m1", "--revision", "1", "--content", "v2", token=OWNER)
    stale = world.run("memory", "update", "--id", "m1", "--revision", "1", "--content", "v3",
                      token=OWNER)  # fmt: skip
    assert stale.code == 5
    fix = fix_of(stale)
    assert fix == "venom-mem memory get --id m1  # re-read it, then update with --revision 2"
    assert shell(world, fix, token=OWNER).code == 0
    redo = world.ok("memory", "update", "--id", "m1", "--revision", "2", "--content", "v3",
                    token=OWNER)  # fmt: skip
    assert redo["revision"] == 3
    # --json keeps RFC-0020 section 1's shape: no fix in data.
    as_json = world.run("memory", "update", "--id", "m1", "--revision", "1", "--content", "x",
                        "--json", token=OWNER)  # fmt: skip
    assert as_json.json["error"]["data"] == {"current": 3}


def test_a_duplicate_names_the_memory_that_holds_the_text(world: World) -> None:
    world.ok("memory", "add", "--space", "user", "--content", "same", token=OWNER)
    world.ok("memory", "add", "--space", "user", "--content", "other", token=OWNER)
    dup = world.run("memory", "update", "--id", "m2", "--revision", "1", "--content", "same",
                    token=OWNER)  # fmt: skip
    assert dup.code == 5
    fix = fix_of(dup)
    assert fix.startswith("venom-mem memory get --id m1")
    shown = shell(world, fix, token=OWNER)
    assert shown.code == 0
    assert "same" in shown.stdout


def test_a_client_name_in_use_says_remove_it_or_choose_another(world: World) -> None:
    world.add_client("codex")
    taken = world.run("client", "add", "--name", "codex", "--grant", "read:*", token=OWNER)
    assert taken.code == 5
    fix = fix_of(taken)
    assert fix.startswith("VENOM_MEM_TOKEN=@owner venom-mem client remove --name codex")
    assert shell(world, fix).code == 0
    assert world.run("client", "add", "--name", "codex", "--grant", "read:*", token=OWNER).code == 0


def test_a_deleted_memory_says_so_and_how_to_restore_it(world: World) -> None:
    world.ok("memory", "add", "--space", "user", "--content", "x", token=OWNER)
    world.ok("memory", "delete", "--id", "m1", "--revision", "1", token=OWNER)
    again = world.run("memory", "delete", "--id", "m1", "--revision", "2", token=OWNER)
    assert again.code == 3
    assert "error: not_found.memory: m1 is deleted" in again.stderr
    fix = fix_of(again)
    assert fix == "venom-mem memory restore --id m1"
    assert shell(world, fix, token=OWNER).code == 0
    assert world.ok("memory", "get", "--id", "m1")["content"] == "x"


def test_a_second_serve_on_the_same_socket_says_stop_first(world: World) -> None:
    world.ok("whoami")
    second = subprocess.run([VENOM_MEM, "serve"], env=world.environ(), capture_output=True,
                            text=True, timeout=20, check=False)  # fmt: skip
    assert second.returncode == 5
    fix = fix_of(Result(second.returncode, second.stdout, second.stderr))
    assert fix.startswith("VENOM_MEM_TOKEN=@owner venom-mem stop")
    assert shell(world, fix).code == 0
    assert world.daemon_pid() is None  # serve can start now


def test_an_unknown_command_points_at_help(world: World) -> None:
    wrong = world.run("memroy", "add")
    assert wrong.code == 2
    assert shell(world, fix_of(wrong)).code == 0
