"""Issue 7 through the real CLI and daemon: doctor (MEM-01), config, events, skill and audit.

Each test gets a fresh world (store, socket, config); see tests/support/daemon_env.py.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import rich_click as click

from tests.support.daemon_env import VENOM_MEM, World
from tests.support.mcp_stdio import EXCLUDED_VERBS
from venom_mem_adapters.daemon.event_log import EventLog
from venom_mem_adapters.daemon.ops.audit import AuditLog, read_entries
from venom_mem_adapters.daemon.ops.doctor import run_checks
from venom_mem_adapters.daemon.ops.events import (
    Cursor,
    parse_cursor,
    resume_point,
    visible,
    wait_for_append,
)
from venom_mem_adapters.health import Inputs
from venom_mem_adapters.mcp.tools import build_catalog
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_adapters.sqlite.backend import SqliteBackend
from venom_mem_cli.app import build_cli
from venom_mem_cli.argv import extra_flags
from venom_mem_cli.fixes import STARTS_ON_DEMAND as STARTS
from venom_mem_cli.here import HERE_VERBS
from venom_mem_core.clock import FixedClock
from venom_mem_core.config import Config
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST, T1_SENTENCE
from venom_mem_core.records import Grant, Principal

OWNER = "@owner"
SECRET_KEY = "sk-live-not-for-your-eyes-42"


def checks_by_id(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {c["id"]: c for c in report["checks"]}


# -- MEM-01 ------------------------------------------------------------------------------------


def test_mem_01_doctor_reports_store_path_and_schema_version(world: World) -> None:
    assert world.ok("whoami")["principal"] == "unknown"  # starts the daemon
    report = world.ok("doctor")
    checks = checks_by_id(report)
    assert report["status"] == 0
    assert list(checks) == [
        "store.open",
        "store.schema",
        "store.sqlite",
        "store.permissions",
        "audit.log",
        "daemon.lifetime",
        "embeddings.provider",
        "embeddings.remote",
        "embeddings.health",
        "embeddings.pending",
        "embeddings.vectors",
    ]
    for check in report["checks"]:
        assert set(check) == {"id", "status", "message", "fix"}
        assert check["status"] == "ok"
        assert check["fix"].startswith(("venom-mem ", "ls "))
    assert checks["store.open"]["message"] == f"Store open at {world.store}"
    assert checks["store.schema"]["message"] == "Schema version 3"
    assert checks["embeddings.provider"]["message"] == "Embeddings off: full-text search only"
    assert "on-demand" in checks["daemon.lifetime"]["message"].lower()
    assert "300000" in checks["daemon.lifetime"]["message"]

    status = world.ok("store", "status")
    assert status["path"] == str(world.store)
    assert status["schema_version"] == 3
    major, minor, *_ = (int(n) for n in status["sqlite_version"].split("."))
    assert (major, minor) >= (3, 42)
    assert status["sqlite_version"] in checks["store.sqlite"]["message"]
    assert status["engine"] == f"sqlite {status['sqlite_version']}"


def test_mem_01_cli_and_mcp_come_from_one_manifest() -> None:
    """Verb by verb: every manifest verb has its CLI command and (unless local) its MCP tool,
    and neither side has anything the manifest lacks."""
    root = build_cli()
    catalog = build_catalog(MANIFEST)
    cli_paths: set[tuple[str, ...]] = set()
    for name, command in root.commands.items():
        cli_paths.add((name,))
        if isinstance(command, click.Group):
            cli_paths.update((name, sub) for sub in command.commands)
    expected_cli: set[tuple[str, ...]] = set()
    expected_tools: set[str] = set()
    for verb in MANIFEST.verbs:
        if verb.name == "hello":
            continue
        path = tuple(verb.name.split("."))
        expected_cli.add(path)
        if len(path) == 2:
            expected_cli.add(path[:1])  # the group
        command = root.commands[path[0]]
        if len(path) == 2:
            assert isinstance(command, click.Group)
            command = command.commands[path[1]]
        assert command.help == verb.summary
        flags = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
        own = {"--json", "--full-times"} | ({"--here"} if verb.name in HERE_VERBS else set())
        habits = {e.flag for e in extra_flags(verb)}  # --tag, --grant, --content-file
        assert flags - own == {p.flag for p in verb.params} | habits
        tool = verb.name.replace("_", "_u").replace(".", "_d")
        if verb.local or verb.name in EXCLUDED_VERBS:
            assert tool not in catalog
            continue
        expected_tools.add(tool)
        spec = catalog[tool]
        assert spec.verb.name == verb.name
        assert spec.description == verb.summary
        tool_params = {p.name for p in verb.params if not p.cli_only}
        assert set(spec.input_schema["properties"]) == tool_params
    assert cli_paths == expected_cli
    assert set(catalog) == expected_tools


def test_ops_verbs_never_start_a_daemon(world: World) -> None:
    for name in (
        "doctor",
        "ping",
        "events",
        "audit",
        "config.get",
        "config.set",
        "config.reload",
        "grant.issue",
        "grant.list",
        "grant.revoke",
    ):
        verb = MANIFEST.verb(name)
        assert verb is not None
        assert verb.starts_daemon is False, name
    for args in (
        ("doctor",),
        ("events",),
        ("events", "--follow"),
        ("audit",),
        ("config", "get"),
        ("config", "reload"),
        ("config", "set", "--key", "memory.max_versions", "--value", "5"),
    ):
        result = world.run(*args, "--json", token=OWNER)
        assert result.code == 6, (args, result)
        error = result.json["error"]
        assert error["code"] == "unavailable.not_running"
        # RFC-0020 section 8 pins doctor's fix; the others name a command that starts one.
        assert error["data"]["fix"] == ("venom-mem serve" if args == ("doctor",) else STARTS)
    human = world.run("doctor")
    assert human.code == 6
    assert "fix: venom-mem serve" in human.stderr
    assert not world.socket.exists()


# -- doctor ------------------------------------------------------------------------------------


def test_store_permissions_fails_on_0644_and_passes_after_chmod(world: World) -> None:
    world.ok("whoami")
    assert checks_by_id(world.ok("doctor"))["store.permissions"]["status"] == "ok"
    os.chmod(world.store, 0o644)
    try:
        failing = world.run("doctor", "--json")
        assert failing.code == 1
        report = failing.json
        check = checks_by_id(report)["store.permissions"]
        assert report["status"] == 2
        assert check["status"] == "fail"
        assert str(world.store) in check["message"]
        assert "0644" in check["message"]
        assert check["fix"] == f"chmod 0600 '{world.store}'"
    finally:
        os.chmod(world.store, 0o600)
    report = world.ok("doctor")
    assert checks_by_id(report)["store.permissions"]["status"] == "ok"
    assert report["status"] == 0


def test_doctor_store_directory_open_to_others_fails(world: World) -> None:
    world.ok("whoami")
    os.chmod(world.store.parent, 0o755)
    try:
        report = world.run("doctor", "--json")
        assert report.code == 1  # a failing check exits 1 (CONTRACT section 9)
        assert report.json["status"] == 2
        check = checks_by_id(report.json)["store.permissions"]
        assert check["status"] == "fail"
        human = world.run("doctor")
        assert human.code == 1
        assert f"chmod 0700 '{world.store.parent}'" in check["fix"]
    finally:
        os.chmod(world.store.parent, 0o700)


@pytest.fixture
def store_path(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "store"
    directory.mkdir(mode=0o700)
    path = directory / "store.db"
    store = SqliteStore.open(path)
    try:
        yield path
    finally:
        store.close()


def http_config(base_url: str, **embeddings: Any) -> Config:
    return Config.from_mapping(
        {
            "embeddings": {
                "provider": "http",
                "base_url": base_url,
                "model": "nomic-embed-text",
                "dimensions": 768,
                "api_key": SECRET_KEY,
                **embeddings,
            }
        }
    )


def test_doctor_warns_on_a_remote_provider_and_never_shows_the_key(store_path: Path) -> None:
    report = run_checks(
        Inputs(
            store=store_path,
            config=http_config("https://embeddings.example.com/v1"),
            on_demand=False,
        ),
        SqliteBackend(store_path),
    )
    checks = checks_by_id(report)
    assert report["status"] == 1
    assert checks["embeddings.remote"]["status"] == "warn"
    assert "embeddings.example.com" in checks["embeddings.remote"]["message"]
    assert checks["embeddings.provider"]["message"] == (
        "Embeddings from embeddings.example.com with model nomic-embed-text (768 dimensions)"
    )
    assert "Persistent" in checks["daemon.lifetime"]["message"]
    assert SECRET_KEY not in json.dumps(report)


def test_doctor_reads_the_embedding_workers_facts(store_path: Path) -> None:
    config = http_config("http://127.0.0.1:11434/v1", warn_vectors=10)
    report = run_checks(
        Inputs(
            store=store_path,
            config=config,
            on_demand=True,
            facts={"last_error": "HTTP 500 from the server", "pending_over_hour": 3, "vectors": 11},
        ),
        SqliteBackend(store_path),
    )
    checks = checks_by_id(report)
    assert checks["embeddings.remote"]["status"] == "ok"
    assert checks["embeddings.health"]["status"] == "warn"
    assert "HTTP 500" in checks["embeddings.health"]["message"]
    assert checks["embeddings.pending"]["status"] == "warn"
    assert checks["embeddings.pending"]["message"].startswith("3 memories")
    assert checks["embeddings.vectors"]["status"] == "warn"
    assert report["status"] == 1

    quiet = run_checks(
        Inputs(store=store_path, config=config, on_demand=True, facts={"last_error": None}),
        SqliteBackend(store_path),
    )
    quiet_checks = checks_by_id(quiet)
    assert quiet_checks["embeddings.health"]["message"] == "The last embeddings call succeeded"
    # Without the worker's numbers, doctor counts from the store: an empty one.
    assert quiet_checks["embeddings.pending"]["status"] == "ok"
    assert quiet_checks["embeddings.vectors"]["message"].startswith("0 vectors")
    assert quiet["status"] == 0


def test_doctor_fails_store_open_for_a_missing_store(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "store.db"
    inputs = Inputs(store=missing, config=Config.defaults(), on_demand=True)
    report = run_checks(inputs, SqliteBackend(missing))
    checks = checks_by_id(report)
    assert report["status"] == 2
    assert checks["store.open"]["status"] == "fail"
    assert str(missing) in checks["store.open"]["message"]
    assert checks["store.schema"]["status"] == "fail"
    assert checks["store.permissions"]["status"] == "fail"


# -- config ------------------------------------------------------------------------------------

BAD_CONFIGS = {
    "syntax": (".{\n    .memory = .{ .max_versions = 20 ;\n}\n", 2),
    "unknown key": (".{\n    .memory = .{\n        .max_version = 20,\n    },\n}\n", 3),
    "wrong type": ('.{\n    .memory = .{ .max_versions = "twenty" },\n}\n', 2),
    "out of range": (".{\n\n    .memory = .{ .max_content_bytes = 300000 },\n}\n", 3),
}


@pytest.mark.parametrize("case", BAD_CONFIGS, ids=list(BAD_CONFIGS))
def test_a_bad_config_stops_serve_naming_file_and_line(world: World, case: str) -> None:
    text, line = BAD_CONFIGS[case]
    world.write_config(text)
    proc = subprocess.run(
        [VENOM_MEM, "serve"],
        env=world.environ(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2, proc
    assert "invalid_params.config" in proc.stderr
    assert f"{world.config}:{line}:" in proc.stderr
    # The on-demand launch says the same, as the caller's error.
    result = world.run("memory", "list", "--json")
    assert result.code == 2
    error = result.json["error"]
    assert error["code"] == "invalid_params.config"
    assert error["data"]["file"] == str(world.config)
    assert error["data"]["line"] == line
    assert not world.socket.exists()


def test_config_set_applies_now_and_reload_keeps_the_old_config_on_a_bad_file(
    world: World,
) -> None:
    world.write_config(".{ .memory = .{ .max_versions = 7 } }\n")
    world.ok("whoami")
    assert world.ok("config", "get", "--key", "memory.max_versions") == {
        "key": "memory.max_versions",
        "value": 7,
    }
    denied = world.run("config", "set", "--key", "memory.max_versions", "--value", "9", "--json")
    assert denied.code == 4
    assert denied.json["error"]["code"] == "denied.admin"

    out = world.ok("config", "set", "--key", "memory.max_versions", "--value", "9", token=OWNER)
    assert out == {"key": "memory.max_versions", "restart_required": False}
    assert world.ok("config", "get", "--key", "memory.max_versions")["value"] == 9
    assert ".max_versions = 9" in world.config.read_text()
    assert world.config.stat().st_mode & 0o777 == 0o600

    out = world.ok(
        "config", "set", "--key", "daemon.idle_timeout_ms", "--value", "60000", token=OWNER
    )
    assert out["restart_required"] is True
    assert world.ok("config", "get", "--key", "daemon.idle_timeout_ms")["value"] == 300000

    bad_value = world.run(
        "config", "set", "--key", "memory.max_versions", "--value", "0", "--json", token=OWNER
    )
    assert bad_value.code == 2
    assert bad_value.json["error"]["code"] == "invalid_params.config"
    assert world.ok("config", "get", "--key", "memory.max_versions")["value"] == 9

    # A good reload applies the reloadable keys and lists those that wait for a restart.
    world.write_config(
        ".{ .memory = .{ .max_versions = 11 }, .daemon = .{ .idle_timeout_ms = 70000 } }\n"
    )
    assert world.ok("config", "reload", token=OWNER) == {
        "reloaded": True,
        "changed": ["memory.max_versions"],
        "restart_required": ["daemon.idle_timeout_ms"],
    }
    assert world.ok("config", "get", "--key", "memory.max_versions")["value"] == 11

    # A bad file: the error says why and where, and the running config stays.
    world.write_config(".{\n    .memory = .{ .max_versions = -1 },\n}\n")
    refused = world.run("config", "reload", "--json", token=OWNER)
    assert refused.code == 2
    error = refused.json["error"]
    assert error["code"] == "invalid_params.config"
    assert error["data"]["line"] == 2
    assert f"{world.config}:2:" in error["message"]
    assert "memory.max_versions must be 1 to 1000" in error["message"]
    assert "unchanged" in error["message"]
    assert world.ok("config", "get", "--key", "memory.max_versions")["value"] == 11
    # The limit really is the running one: the 12th version of a memory pushes out the 1st.
    added = world.ok("memory", "add", "--space", "user", "--content", "v1", token=OWNER)
    revision = added["revision"]
    for n in range(2, 13):
        revision = world.ok(
            "memory", "update", "--id", added["id"], "--revision", str(revision),
            "--content", f"v{n}", token=OWNER,
        )["revision"]  # fmt: skip
    versions = world.ok("memory", "history", "--id", added["id"])["versions"]
    assert len(versions) == 11


def test_config_get_never_shows_the_api_key(world: World) -> None:
    world.write_config(f'.{{ .embeddings = .{{ .api_key = "{SECRET_KEY}" }} }}\n')
    world.ok("whoami")
    outputs = [
        world.run("config", "get", "--json"),
        world.run("config", "get", "--key", "embeddings", "--json"),
        world.run("config", "get", "--key", "embeddings.api_key", "--json"),
        world.run("config", "get", "--key", "embeddings.api_key", token=OWNER),
        world.run("doctor", "--json"),
    ]
    assert outputs[0].json["value"]["embeddings"]["api_key"] == "<secret>"
    assert outputs[2].json == {"key": "embeddings.api_key", "value": "<secret>"}
    for result in outputs:
        assert result.code == 0, result
        assert SECRET_KEY not in result.stdout + result.stderr
    changed = world.ok(
        "config", "set", "--key", "embeddings.api_key", "--value", "sk-other", token=OWNER
    )
    assert changed == {"key": "embeddings.api_key", "restart_required": True}
    assert "sk-other" not in world.run("config", "get", "--json").stdout


def test_config_get_needs_read_on_the_store(world: World) -> None:
    token = world.add_client("narrow", '[{"right":"read","scope":"space:a"}]')
    denied = world.run("config", "get", "--json", token=token)
    assert denied.code == 4
    assert denied.json["error"]["code"] == "denied.read"


# -- events ------------------------------------------------------------------------------------


class Follower:
    """``venom-mem events --follow`` in its own process, its lines read on a thread."""

    def __init__(self, world: World, *args: str, token: str | None = None) -> None:
        self.proc = subprocess.Popen(
            [VENOM_MEM, "events", "--follow", "--json", *args],
            env=world.environ(token),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.raw: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def until(self, predicate: Any, timeout: float = 20) -> list[dict[str, Any]]:
        """Every line read so far, once one satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                raise AssertionError(f"no matching line; got {self.raw!r}") from None
            self.raw.append(line)
            if predicate(json.loads(line)):
                return [json.loads(item) for item in self.raw]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.reader.join(timeout=10)  # it ends at the end of the output
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def started(world: World) -> World:
    world.write_config(".{ .daemon = .{ .idle_timeout_ms = 60000 } }\n")
    world.ok("whoami")
    return world


def test_follow_sees_every_change_from_another_process_without_text(started: World) -> None:
    world = started
    # Starting from a cursor, the follower misses nothing however late it connects.
    follower = Follower(world, "--json", "--after", world.ok("events")["cursor"])
    secret_text = "the launch codes are 0000"
    secret_title = "launch-codes-title"
    try:
        added = world.ok(
            "memory", "add", "--space", "project/x", "--content", secret_text,
            "--title", secret_title, token=OWNER,
        )  # fmt: skip
        mid = added["id"]
        updated = world.ok(
            "memory", "update", "--id", mid, "--revision", "1", "--content", secret_text + "!",
            token=OWNER,
        )  # fmt: skip
        world.ok("memory", "delete", "--id", mid, "--revision", str(updated["revision"]),
                 token=OWNER)  # fmt: skip
        world.ok("memory", "restore", "--id", mid, token=OWNER)
        world.ok("memory", "purge", "--id", mid, token=OWNER)
        session = world.ok("session", "start", "--harness", "claude-code", token=OWNER)["session"]
        world.ok("session", "end", "--session", session, token=OWNER)
        world.ok("session", "purge", "--session", session, token=OWNER)
        seen = follower.until(lambda e: e.get("type") == "session.purged")
    finally:
        follower.stop()
    events = [e for e in seen if "type" in e]
    assert [e["type"] for e in events] == [
        "memory.added",
        "memory.updated",
        "memory.deleted",
        "memory.restored",
        "memory.purged",
        "session.started",
        "session.ended",
        "session.purged",
    ]
    for event in events:
        assert set(event) == {"seq", "source", "type", "resource", "data", "ts"}
    assert {e["resource"] for e in events[:5]} == {"space:project/x"}
    assert {e["resource"] for e in events[5:]} == {f"session:{session}"}
    assert events[0]["data"] == {"memory": mid, "space": "project/x", "revision": 1}
    assert events[4]["data"] == {"memory": mid, "space": "project/x"}
    assert events[5]["data"] == {"session": session, "harness": "claude-code"}
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs)
    stream = "".join(follower.raw)
    assert "launch codes" not in stream
    assert secret_title not in stream


def test_follow_waits_out_a_long_gap_between_daemons(started: World) -> None:
    """CONTRACT section 8: --follow streams until interrupted. The on-demand daemon comes
    back only when another command starts it, which can be long after it stopped."""
    world = started
    follower = Follower(world, "--json", "--after", world.ok("events")["cursor"])
    try:
        world.ok("memory", "add", "--space", "user", "--content", "before", token=OWNER)
        follower.until(lambda e: e.get("type") == "memory.added")
        world.stop_daemon()
        time.sleep(6)  # longer than the few seconds it used to wait
        assert follower.proc.poll() is None, follower.proc.stderr
        world.ok("memory", "add", "--space", "user", "--content", "after", token=OWNER)
        # The new daemon doesn't know the old cursor: it answers with its snapshot. The
        # follower may reach it before or after m2 is committed, so m2 is either counted in
        # that snapshot or streamed after it.
        follower.until(
            lambda e: (
                (e.get("entity") == "space" and e["data"]["memories"] == 2)
                or (e.get("type") == "memory.added" and e["data"]["memory"] == "m2")
            )
        )
        world.ok("memory", "add", "--space", "user", "--content", "later", token=OWNER)
        seen = follower.until(lambda e: e.get("type") == "memory.added" and e["seq"] == 2)
    finally:
        follower.stop()
    after_restart = seen[1:]
    assert seen[0]["data"]["memory"] == "m1"
    assert after_restart[0]["entity"] == "space", after_restart
    counted = after_restart[0]["data"]["memories"]
    streamed = [e["data"]["memory"] for e in after_restart if e.get("type") == "memory.added"]
    # m2 committed between the snapshot's start and its read is in both: never in neither.
    assert (counted, streamed) in ((2, ["m3"]), (1, ["m2", "m3"]), (2, ["m2", "m3"]))


def test_follow_prints_the_snapshot_first_one_line_each(started: World) -> None:
    world = started
    world.ok("memory", "add", "--space", "user", "--content", "one", token=OWNER)
    world.ok("memory", "add", "--space", "user", "--content", "two", token=OWNER)
    session = world.ok("session", "start", "--harness", "codex", token=OWNER)["session"]
    follower = Follower(world)
    try:
        seen = follower.until(lambda e: e.get("entity") == "session")
        world.ok("memory", "add", "--space", "user", "--content", "three", token=OWNER)
        seen = follower.until(lambda e: e.get("type") == "memory.added")
    finally:
        follower.stop()
    assert seen[0]["entity"] == "space"
    assert seen[0]["resource"] == "space:user"
    assert seen[0]["data"]["space"] == "user"
    assert seen[0]["data"]["memories"] == 2
    assert seen[1]["entity"] == "session"
    assert seen[1]["data"]["session"] == session
    assert seen[1]["data"]["harness"] == "codex"
    assert seen[2]["type"] == "memory.added"
    assert len(seen) == 3


def test_a_caller_without_read_on_a_space_sees_none_of_its_events(started: World) -> None:
    world = started
    token = world.add_client(
        "narrow", '[{"right":"read","scope":"space:a"},{"right":"write","scope":"space:a"}]'
    )
    world.ok("memory", "add", "--space", "b", "--content", "old b", token=OWNER)
    world.ok("memory", "add", "--space", "a", "--content", "old a", token=OWNER)
    one_shot = world.ok("events", token=token)
    assert [e["resource"] for e in one_shot["snapshot"]] == ["space:a"]
    assert one_shot["events"] == []

    follower = Follower(world, "--json", "--after", one_shot["cursor"], token=token)
    try:
        b = world.ok("memory", "add", "--space", "b", "--content", "in b", token=OWNER)
        world.ok("memory", "update", "--id", b["id"], "--revision", "1", "--content", "in b 2",
                 token=OWNER)  # fmt: skip
        world.ok("session", "start", "--harness", "x", token=OWNER)
        world.ok("memory", "add", "--space", "a", "--content", "in a", token=token)
        seen = follower.until(lambda e: e.get("type") == "memory.added")
    finally:
        follower.stop()
    assert [(e["type"], e["resource"]) for e in seen] == [("memory.added", "space:a")]

    # The owner sees all of them, and principal.* too; a memory grant doesn't open its space.
    everything = world.ok("events", "--after", one_shot["cursor"], token=OWNER)["events"]
    assert {e["resource"] for e in everything} >= {"space:a", "space:b", "session:s1"}
    memory_only = world.add_client("one-memory", '[{"right":"read","scope":"memory:m1"}]')
    assert world.ok("events", "--after", one_shot["cursor"], token=memory_only)["events"] == []
    # principal.* is for admins: the owner sees the client added above, unknown doesn't.
    issued = ("--after", one_shot["cursor"], "--types", '["principal.issued"]')
    admin_view = world.ok("events", *issued, token=OWNER)["events"]
    assert [e["data"] for e in admin_view] == [{"principal": "g2", "label": "one-memory"}]
    assert world.ok("events", *issued)["events"] == []


def test_a_self_reader_keeps_its_purged_sessions_events(started: World) -> None:
    """CONTRACT section 8: an event is shown to a caller with read on its resource; a
    session's reporter holds read on it through ``self``, also once the session is purged
    and its row, which said who reported it, is gone."""
    world = started
    token = world.add_client(
        "selfer", '[{"right":"read","scope":"self"},{"right":"write","scope":"*"}]'
    )
    cursor = world.ok("events", token=token)["cursor"]
    session = world.ok("session", "start", "--harness", "codex", token=token)["session"]
    world.ok("session", "purge", "--session", session, token=OWNER)
    seen = world.ok("events", "--after", cursor, token=token)["events"]
    assert [(e["type"], e["data"]["session"]) for e in seen] == [
        ("session.started", session),
        ("session.purged", session),
    ]
    other = world.add_client("other", '[{"right":"read","scope":"self"}]')
    assert world.ok("events", "--after", cursor, token=other)["events"] == []


def test_types_limit_and_more(started: World) -> None:
    world = started
    cursor = world.ok("events")["cursor"]
    for n in range(3):
        world.ok("memory", "add", "--space", "user", "--content", f"n{n}", token=OWNER)
    world.ok("session", "start", "--harness", "x", token=OWNER)
    page = world.ok("events", "--after", cursor, "--limit", "2")
    assert "snapshot" not in page
    assert [e["type"] for e in page["events"]] == ["memory.added", "memory.added"]
    assert page["more"] is True
    rest = world.ok("events", "--after", page["cursor"])
    assert [e["type"] for e in rest["events"]] == ["memory.added", "session.started"]
    assert "more" not in rest
    sessions = world.ok("events", "--after", cursor, "--types", '["session.started"]')
    assert [e["type"] for e in sessions["events"]] == ["session.started"]
    # Caught up: a long poll with nothing new returns empty after its wait.
    started_at = time.monotonic()
    idle = world.ok("events", "--after", rest["cursor"], "--wait-ms", "300")
    assert idle["events"] == []
    assert idle["cursor"] == rest["cursor"]
    assert time.monotonic() - started_at >= 0.3
    bad = world.run("events", "--after", "not a cursor", "--json")
    assert bad.code == 2
    assert bad.json["error"]["code"] == "invalid_params.type"
    assert bad.json["error"]["data"] == {"param": "after"}


def test_a_cursor_from_a_previous_daemon_gives_a_snapshot(started: World) -> None:
    world = started
    world.ok("memory", "add", "--space", "user", "--content", "kept", token=OWNER)
    first = world.ok("events")
    same = world.ok("events", "--after", first["cursor"])
    assert "snapshot" not in same
    world.stop_daemon()
    world.ok("whoami")  # a new daemon, a new source
    again = world.ok("events", "--after", first["cursor"])
    assert again["cursor"].split(":")[0] != first["cursor"].split(":")[0]
    assert again["snapshot"] == [
        {
            "entity": "space",
            "resource": "space:user",
            "data": first["snapshot"][0]["data"],
        }
    ]
    assert again["events"] == []


def test_parse_cursor_and_resume_point() -> None:
    assert parse_cursor("abc123:7") == Cursor(source="abc123", seq=7)
    for bad in ("", "abc", "abc:", ":7", "abc:-1", "abc:07", "a b:1", "abc:１"):
        with pytest.raises(VenomError) as caught:
            parse_cursor(bad)
        assert caught.value.code == "invalid_params.type"
    log = EventLog(FixedClock(), retention=3)
    assert resume_point(log, None) is None
    assert resume_point(log, Cursor(source=log.source, seq=0)) == 0
    for n in range(5):
        log.emit("memory.added", "space:user", {"memory": f"m{n + 1}"})
    assert resume_point(log, Cursor(source="other", seq=1)) is None
    assert resume_point(log, Cursor(source=log.source, seq=9)) is None  # from the future
    assert resume_point(log, Cursor(source=log.source, seq=1)) is None  # 2 was dropped
    assert resume_point(log, Cursor(source=log.source, seq=2)) == 2
    assert resume_point(log, Cursor(source=log.source, seq=5)) == 5


def test_visibility_per_resource() -> None:
    def event(type_: str, resource: str, **data: Any) -> dict[str, Any]:
        return {"seq": 1, "source": "s", "type": type_, "resource": resource, "data": data,
                "ts": "t"}  # fmt: skip

    def who(*grants: tuple[str, str]) -> Principal:
        return Principal(id="g9", grants=tuple(Grant(right=r, scope=s) for r, s in grants))

    space_a = event("memory.added", "space:a", memory="m1", space="a", revision=1)
    child = event("session.started", "session:s2", session="s2", harness="x", parent="s1")
    issued = event("principal.issued", "*", principal="g3")
    changed = event("config.changed", "*", keys=["memory.max_versions"])
    owner = Principal(id="owner")
    assert visible(owner, issued, {}) == issued
    assert visible(who(("read", "*")), issued, {}) is None
    assert visible(who(("admin", "*")), issued, {}) == issued
    assert visible(who(("read", "*")), changed, {}) == changed
    assert visible(who(("read", "space:a")), space_a, {}) == space_a
    assert visible(who(("read", "space:b")), space_a, {}) is None
    assert visible(who(("read", "memory:m1")), space_a, {}) is None
    assert visible(who(("read", "memory:*")), space_a, {}) is None
    assert visible(who(("read", "space:*")), space_a, {}) == space_a
    assert visible(who(("read", "session:*")), child, {}) == child
    # A parent the caller can't read is left out, as session.get leaves it out.
    hidden_parent = visible(who(("read", "session:s2")), child, {})
    assert hidden_parent is not None
    assert hidden_parent["data"] == {"session": "s2", "harness": "x"}
    assert visible(who(("read", "self")), child, {2: "g9"}) is not None
    assert visible(who(("read", "self")), child, {2: "g8"}) is None
    assert visible(who(("read", "space:*")), child, {}) is None


def test_a_long_poll_wakes_on_an_emit_from_another_thread() -> None:
    log = EventLog(FixedClock())

    async def main() -> float:
        timer = threading.Timer(0.1, log.emit, ("memory.added", "space:a", {"memory": "m1"}))
        timer.start()
        began = time.monotonic()
        assert await wait_for_append(log, 0, 30)
        timer.join()
        return time.monotonic() - began

    assert anyio.run(main) < 10
    assert anyio.run(wait_for_append, log, 1, 0.05) is False


# -- skill and audit ---------------------------------------------------------------------------


def test_skill_has_the_t1_sentence_and_every_verb(world: World) -> None:
    out = world.ok("skill")
    assert out["name"] == "venom-mem"
    content = out["content"]
    assert content.startswith("---\nname: venom-mem\ndescription: ")
    assert T1_SENTENCE in content
    for verb in MANIFEST.verbs:
        if verb.name != "hello":
            assert f"- `{verb.name}`(" in content, verb.name
    human = world.run("skill")
    assert human.code == 0
    assert T1_SENTENCE in human.stdout
    # Human output is the generated text line for line: a redirect is a manual install.
    assert human.stdout.rstrip("\n") == world.ok("skill")["content"].rstrip("\n")


def test_skill_install_writes_private_files_for_the_owner_only(world: World) -> None:
    home = Path(world.env["HOME"])
    world.ok("whoami")
    admin = world.ok("grant", "issue", "--grants", '[{"right":"admin","scope":"*"}]',
                     token=OWNER)["token"]  # fmt: skip
    refused = world.run("skill", "install", "--json", token=admin)
    assert refused.code == 4
    assert refused.json["error"]["code"] == "denied.files"
    assert world.run("skill", "install", "--json").json["error"]["code"] == "denied.files"
    assert not (home / ".claude").exists()

    out = world.ok("skill", "install", token=OWNER)
    expected = [
        home / ".claude" / "skills" / "venom-mem" / "SKILL.md",
        home / ".codex" / "skills" / "venom-mem" / "SKILL.md",
    ]
    assert out == {"paths": [str(p) for p in expected]}
    content = world.ok("skill")["content"]
    for path in expected:
        assert path.read_text() == content
        assert path.stat().st_mode & 0o777 == 0o600
        for directory in (path.parent, path.parent.parent, path.parent.parent.parent):
            assert directory.stat().st_mode & 0o777 == 0o700
    # Installing again replaces the files in place.
    assert world.ok("skill", "install", token=OWNER) == out


def test_audit_records_tokens_issued_and_revoked_across_restarts(started: World) -> None:
    world = started
    world.add_client("claude-code")
    issued = world.ok("grant", "issue", "--grants", '[{"right":"read","scope":"*"}]',
                      token=OWNER)  # fmt: skip
    world.ok("grant", "revoke", "--principal", issued["principal"], token=OWNER)
    world.ok("client", "remove", "--name", "claude-code", token=OWNER)
    assert len(world.ok("audit", token=OWNER)["entries"]) == 4
    world.stop_daemon()
    world.ok("whoami")
    world.add_client("codex")
    entries = world.ok("audit", token=OWNER)["entries"]
    assert [(e["type"], e["principal"]) for e in entries] == [
        ("principal.issued", "g1"),
        ("principal.issued", issued["principal"]),
        ("principal.revoked", issued["principal"]),
        ("principal.revoked", "g1"),
        ("principal.issued", "g3"),
    ]
    assert entries[0]["label"] == "claude-code"
    assert len({e["source"] for e in entries}) == 2
    for entry in entries:
        assert "token" not in entry
    assert world.ok("audit", "--limit", "2", token=OWNER)["entries"] == entries[-2:]
    audit_file = Path(f"{world.store}.audit.jsonl")
    assert audit_file.stat().st_mode & 0o777 == 0o600
    text = audit_file.read_text()
    assert issued["token"] not in text
    denied = world.run("audit", "--json")
    assert denied.code == 4
    assert denied.json["error"]["code"] == "denied.admin"


def test_audit_is_written_even_if_no_ops_verb_ran_before_the_daemon_stopped(
    started: World,
) -> None:
    world = started
    world.add_client("claude-code")
    world.stop_daemon()
    world.ok("whoami")
    entries = world.ok("audit", token=OWNER)["entries"]
    assert [(e["type"], e["principal"]) for e in entries] == [("principal.issued", "g1")]


def test_audit_log_catches_up_then_appends_as_events_are_emitted(tmp_path: Path) -> None:
    log = EventLog(FixedClock())
    log.emit("principal.issued", "*", {"principal": "g1", "label": "claude-code"})
    path = tmp_path / "store.db.audit.jsonl"
    audit = AuditLog(path, log)
    audit.start()
    log.emit("memory.added", "space:user", {"memory": "m1", "space": "user", "revision": 1})
    log.emit("principal.revoked", "*", {"principal": "g1", "label": "claude-code"})
    audit.stop()
    log.emit("principal.issued", "*", {"principal": "g2"})
    entries = read_entries(path, 10)
    assert entries == [
        {
            "ts": "2026-11-09T10:00:00.000Z",
            "type": "principal.issued",
            "principal": "g1",
            "label": "claude-code",
            "source": log.source,
            "seq": 1,
        },
        {
            "ts": "2026-11-09T10:00:00.000Z",
            "type": "principal.revoked",
            "principal": "g1",
            "label": "claude-code",
            "source": log.source,
            "seq": 3,
        },
    ]
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_entries(path, 1) == entries[-1:]
    assert read_entries(tmp_path / "none.jsonl", 5) == []
