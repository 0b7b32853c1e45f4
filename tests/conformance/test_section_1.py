"""RFC-0020 section 1, every command line of it, in order, on every store with a default
config. Tokens, times and IDs where the RFC calls them illustrative are matched by pattern;
everything else is the RFC's JSON exactly, exit codes included."""

from __future__ import annotations

import json
import re
import socket
from typing import Any

from tests.conformance.harness import Rfc

TOKEN_RE = re.compile(r"^vnt1\.venom-mem\.g[1-9][0-9]*\.[A-Za-z0-9_-]{43}$")
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
GRANTS = '[{"right":"read","scope":"*"},{"right":"write","scope":"*"}]'
ZIG = "venom-std pins Zig with .zigversion; check it before upgrading."
PROTO = "The proto tests need a writable XDG_RUNTIME_DIR."
HARNESS_SESSION = "6f1c2e0a-7d1b-4c55-9a1e-3f0d7b2c8e41"
CLAUDE = {"principal": "g1", "label": "claude-code"}
CODEX = {"principal": "g2", "label": "codex"}


def timeless(record: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``record`` without its timestamps, each checked to be RFC 3339 with milliseconds."""
    out = dict(record)
    for key in keys:
        assert TS_RE.match(out.pop(key)), (key, record)
    return out


def test_section_1_transcript(rfc: Rfc) -> None:
    if rfc.daemon is not None:
        assert rfc.daemon.daemon_pid() is None  # "No daemon has to be running."
    tokens = {}
    for name, principal in (("claude-code", "g1"), ("codex", "g2")):
        out = rfc.ok("client", "add", "--name", name, "--grants", GRANTS, token="@owner")
        tokens[principal] = out.pop("token")
        assert TOKEN_RE.match(tokens[principal])
        assert tokens[principal].startswith(f"vnt1.venom-mem.{principal}.")
        assert out == {"client": name, "principal": principal, "expires": None}

    add = ("memory", "add", "--space", "project/venom-std", "--kind", "fact", "--title",
           "Zig pin", "--content", ZIG, "--tags", '["zig","build"]')  # fmt: skip
    assert rfc.ok(*add, token=tokens["g1"]) == {"id": "m1", "revision": 1, "changed": True}
    assert rfc.ok(*add, token=tokens["g1"]) == {"id": "m1", "revision": 1, "changed": False}

    for token in (tokens["g2"], None):  # "this also works with no token at all"
        found = rfc.ok("memory", "search", "--query", "which zig version", "--spaces",
                       '["project/venom-std"]', "--limit", "3", token=token)  # fmt: skip
        assert set(found) == {"mode", "results"}
        assert found["mode"] == "fts"
        (hit,) = found["results"]
        assert timeless(hit, "created", "updated") == {
            "id": "m1",
            "space": "project/venom-std",
            "kind": "fact",
            "title": "Zig pin",
            "tags": ["zig", "build"],
            "revision": 1,
            "author": CLAUDE,
            "updated_by": CLAUDE,
            "snippet": ZIG,
            "score": 0.01639344262295082,
            "fts_rank": 1,
        }

    update = ("memory", "update", "--id", "m1", "--revision", "1", "--content")
    assert rfc.ok(*update, "venom-std pins Zig 0.17 with .zigversion.", token=tokens["g2"]) == {
        "id": "m1",
        "revision": 2,
        "changed": True,
    }
    assert rfc.error(*update, "stale edit", token=tokens["g2"]) == (
        5,
        {
            "code": "conflict.memory_revision",
            "message": "m1 is at revision 2",
            "data": {"current": 2},
        },
    )

    assert rfc.error("memory", "add", "--space", "user", "--content", "hello") == (
        4,
        {
            "code": "denied.write",
            "message": "principal unknown lacks 'write' on space:user",
            "data": {
                "right": "write",
                "resource": "space:user",
                "principal": "unknown",
                "fix": "venom-mem whoami --json  # set VENOM_MEM_TOKEN to a client token",
            },
        },
    )

    s1 = rfc.ok("session", "start", "--harness", "claude-code", "--harness-session",
                HARNESS_SESSION, "--cwd", "/home/u/venom-std", token=tokens["g1"])  # fmt: skip
    assert s1 == {"session": "s1", "changed": True}
    s2 = rfc.ok("session", "start", "--harness", "codex", "--parent", "s1", "--relation",
                "fork", "--cwd", "/home/u/venom-std", token=tokens["g2"])  # fmt: skip
    assert s2 == {"session": "s2", "changed": True}
    m2 = rfc.ok("memory", "add", "--space", "project/venom-std", "--session", "s1",
                "--content", PROTO, token=tokens["g2"])  # fmt: skip
    assert m2 == {"id": "m2", "revision": 1, "changed": True}
    chain = rfc.ok("session", "chain", "--session", "s2", token=tokens["g2"])
    assert chain["truncated"] is False
    assert [timeless(s, "started") for s in chain["chain"]] == [
        {
            "session": "s1",
            "harness": "claude-code",
            "harness_session": HARNESS_SESSION,
            "cwd": "/home/u/venom-std",
            "reported_by": CLAUDE,
        },
        {
            "session": "s2",
            "harness": "codex",
            "parent": "s1",
            "relation": "fork",
            "cwd": "/home/u/venom-std",
            "reported_by": CODEX,
        },
    ]
    lineage = rfc.ok("memory", "search", "--query", "proto tests", "--session", "s2",
                     "--lineage=true", token=tokens["g2"])  # fmt: skip
    assert lineage["mode"] == "fts"
    assert [timeless(h, "created", "updated") for h in lineage["results"]] == [
        {
            "id": "m2",
            "space": "project/venom-std",
            "kind": "note",
            "tags": [],
            "revision": 1,
            "author": CODEX,
            "updated_by": CODEX,
            "session": "s1",
            "snippet": PROTO,
            "score": 0.01639344262295082,
            "fts_rank": 1,
        }
    ]

    if rfc.daemon is not None:  # the wire, which only a daemon has
        _the_same_add_on_the_wire(rfc, tokens["g1"])


def _the_same_add_on_the_wire(rfc: Rfc, token: str) -> None:
    world = rfc.daemon
    assert world is not None
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(world.socket))
        frames = sock.makefile("rwb")
        auth = {"auth": {"token": token}, "client": "venom-mem-cli"}
        hello = {"id": 1, "verb": "hello", "params": auth}
        memory = {"space": "user", "kind": "note", "content": "Prefers small PRs."}
        add = {"id": 2, "verb": "memory.add", "params": memory}
        for frame in (hello, add):
            frames.write(json.dumps(frame).encode() + b"\n")
        frames.flush()
        answers = {}
        for _ in range(2):
            reply = json.loads(frames.readline())
            answers[reply["id"]] = reply
    assert answers[1]["ok"]["principal"] == "g1"
    assert answers[1]["ok"]["label"] == "claude-code"
    assert answers[2] == {"id": 2, "ok": {"id": "m3", "revision": 1, "changed": True}}
