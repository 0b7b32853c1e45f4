"""Issue 13 through the real CLI and daemon: a hand-started serve drops the caller's
credentials, the token check sees through disguises (and covers session claims), and auditing
fails closed."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.support.daemon_env import VENOM_MEM, World

OWNER = "@owner"
TOKEN = "vnt1.venom-mem.g12." + "a1_-" * 10 + "xyz"
HIDDEN = TOKEN[:30] + "\u200b" + TOKEN[30:]


def _wait_for_socket(world: World, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while not world.socket.exists():
        assert proc.poll() is None, "serve exited"
        assert time.monotonic() < deadline, "serve did not come up"
        time.sleep(0.02)


def test_serve_started_by_hand_keeps_no_token_in_its_environment(world: World) -> None:
    env = world.environ(token=TOKEN, VENOM_MEM_PRINCIPAL="g7")
    proc = subprocess.Popen(
        [VENOM_MEM, "serve"], env=env, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_for_socket(world, proc)
        block = Path(f"/proc/{proc.pid}/environ").read_bytes()
        assert TOKEN.encode() not in block  # not even in the block it was started with
        assert b"VENOM_MEM_PRINCIPAL=g7" not in block
        assert world.ok("ping")["pid"] == proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_disguised_tokens_are_refused_through_the_daemon(world: World) -> None:
    disguises = [
        HIDDEN,
        TOKEN.replace(".", "\uff0e"),
        TOKEN[:30] + "\n" + TOKEN[30:],
        "\u2066" + TOKEN[:5] + "\u200d" + TOKEN[5:] + "\u2069",
    ]
    for text in disguises:
        result = world.run(
            "memory", "add", "--space", "user", "--content", f"key: {text}", "--json", token=OWNER
        )
        assert result.code == 2, (text, result)
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "invalid_params.secret_content"
        assert error["data"]["param"] == "content"
    for flag, value in (
        ("--harness", TOKEN),
        ("--harness-session", HIDDEN),
        ("--cwd", f"/home/me/{HIDDEN}"),
    ):
        args = ["session", "start", "--json"]
        if flag != "--harness":
            args += ["--harness", "claude-code"]
        result = world.run(*args, flag, value, token=OWNER)
        assert result.code == 2, (flag, result)
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "invalid_params.secret_content"
        assert error["data"]["param"] == flag[2:].replace("-", "_")
    # Ordinary text with the same characters still goes in, as sent.
    plain = "zero\u200bwidth, ｆｕｌｌｗｉｄｔｈ and\nline breaks"
    added = world.ok("memory", "add", "--space", "user", "--content", plain, token=OWNER)
    assert world.ok("memory", "get", "--id", added["id"], token=OWNER)["content"] == plain
    assert world.ok("memory", "list", token=OWNER)["memories"][0]["id"] == added["id"]


def test_a_link_at_the_audit_path_stops_issuing_and_revoking(world: World) -> None:
    world.add_client("before")  # starts the daemon and writes the first entry
    audit = Path(f"{world.store}.audit.jsonl")
    target = world.root / "elsewhere.jsonl"
    audit.unlink()
    os.symlink(target, audit)
    clients = world.ok("client", "list", token=OWNER)["clients"]
    grants = world.ok("grant", "list", token=OWNER)
    attempts = [
        ("client", "add", "--name", "after", "--grants", '[{"right":"read","scope":"*"}]'),
        ("client", "remove", "--name", "before"),
        ("grant", "issue", "--grants", '[{"right":"read","scope":"*"}]'),
        ("audit",),
    ]
    for args in attempts:
        result = world.run(*args, "--json", token=OWNER)
        assert result.code == 1, (args, result)
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "failed.audit", (args, error)
        assert error["data"]["path"] == str(audit)
        assert str(audit) in error["message"]
    assert world.ok("client", "list", token=OWNER)["clients"] == clients  # nothing changed
    assert world.ok("grant", "list", token=OWNER) == grants
    assert not target.exists()  # the link was never followed
    checks = {c["id"]: c for c in world.run("doctor", "--json").json["checks"]}
    assert checks["audit.log"]["status"] == "fail"
    assert str(audit) in checks["audit.log"]["message"]
    audit.unlink()  # repaired: issuing works again, and is audited
    world.add_client("after")
    assert world.ok("doctor")["status"] == 0
    entries = world.ok("audit", token=OWNER)["entries"]
    assert entries[-1]["label"] == "after"
