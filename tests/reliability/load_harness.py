"""The mixed-load harness: CLI processes, socket clients and MCP adapters, each a client of
its own, all on one daemon, for a bounded time.

Every actor loops over the same workload: read-modify-write on a few shared memories (the
update carries the revision it read, so a lost update would show as two acknowledgements of
one revision), adds to its own space, searches, and deletes, restores and updates its own
memories. Every acknowledged change is recorded as (memory, revision, action, principal);
afterwards each must be in ``memory.history`` exactly so. Errors other than the expected
``conflict.memory_revision`` on a shared memory are collected; ``unavailable.*`` or any
"locked"/"busy" text reaching a client is a failure.

Used by tests/reliability/test_load.py and bench/soak.py.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from tests.reliability.support import mcp_adapter, rss_kib
from tests.support.daemon_env import World
from venom_mem_adapters.client import connect
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST

__all__ = ["LoadRun", "run_load"]

Call = Callable[[str, Mapping[str, Any]], dict[str, Any]]
SHARED_SPACE = "project/shared"
MAX_VERSIONS = 1000
CONFIG = (
    ".{ .daemon = .{ .idle_timeout_ms = 600000 },"
    f" .memory = .{{ .max_versions = {MAX_VERSIONS} }} }}\n"
)


def cli_call(world: World, token: str) -> Call:
    """One ``venom-mem <noun> <verb> --param value --json`` process per call."""

    def call(verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
        found = MANIFEST.verb(verb)
        assert found is not None
        args = verb.split(".")
        for name, value in params.items():
            param = found.param(name)
            assert param is not None
            if isinstance(value, bool):  # CONTRACT section 6: --flag=true|false
                args.append(f"{param.flag}={'true' if value else 'false'}")
                continue
            text = json.dumps(value) if isinstance(value, list | dict) else str(value)
            args += [param.flag, text]
        result = world.run(*args, "--json", token=token, timeout=60)
        out = result.json
        if "error" in out:
            raise VenomError.from_json(out["error"])
        assert result.code == 0, result
        return dict(out)

    return call


@attrs.define
class Actor:
    name: str
    kind: str  # "cli", "socket" or "mcp"
    principal: str
    rng: random.Random
    acknowledged: list[tuple[str, int, str]] = attrs.field(factory=list)
    outcomes: Counter[str] = attrs.field(factory=Counter)
    forbidden: list[str] = attrs.field(factory=list)
    own: dict[str, bool] = attrs.field(factory=dict)  # own memory id -> live
    serial: int = 0

    def _text(self) -> str:
        self.serial += 1
        return f"{self.name} note {self.serial}: " + self.rng.choice(
            ("zig build cache", "sqlite wal fsync", "agent memory search", "daemon socket")
        )

    def _do(self, call: Call, verb: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        try:
            out = call(verb, params)
        except VenomError as error:
            self.outcomes[error.code] += 1
            text = f"{error.code} {error.message}".lower()
            if error.code.startswith("unavailable.") or "locked" in text or "busy" in text:
                self.forbidden.append(f"{verb}: {error.code}: {error.message}")
            elif not (error.code == "conflict.memory_revision" and verb == "memory.update"):
                self.forbidden.append(f"unexpected {verb}: {error.code}: {error.message}")
            return None
        self.outcomes["ok"] += 1
        return out

    def step(self, call: Call, shared: list[str]) -> None:
        roll = self.rng.random()
        if roll < 0.4:  # read-modify-write on a shared memory
            id = self.rng.choice(shared)
            got = self._do(call, "memory.get", {"id": id})
            if got is None:
                return
            out = self._do(
                call,
                "memory.update",
                {"id": id, "revision": got["revision"], "content": self._text()},
            )
            if out is not None:
                assert out["revision"] == got["revision"] + 1, out
                self.acknowledged.append((id, out["revision"], "update"))
        elif roll < 0.6 or not self.own:
            out = self._do(
                call, "memory.add", {"space": f"project/{self.name}", "content": self._text()}
            )
            if out is not None:
                assert out["changed"] is True
                self.own[out["id"]] = True
                self.acknowledged.append((out["id"], 1, "add"))
        elif roll < 0.75:
            self._do(call, "memory.search", {"query": "zig sqlite agent", "limit": 10})
        else:
            self._own_change(call)

    def _own_change(self, call: Call) -> None:
        id = self.rng.choice(sorted(self.own))
        got = self._do(call, "memory.get", {"id": id, "include_deleted": True})
        if got is None:
            return
        if not self.own[id]:
            out = self._do(call, "memory.restore", {"id": id})
            action = "restore"
        elif self.rng.random() < 0.5:
            out = self._do(call, "memory.delete", {"id": id, "revision": got["revision"]})
            action = "delete"
        else:
            out = self._do(
                call,
                "memory.update",
                {"id": id, "revision": got["revision"], "content": self._text()},
            )
            action = "update"
        if out is not None:
            assert out["revision"] == got["revision"] + 1, out
            self.own[id] = action != "delete"
            self.acknowledged.append((id, out["revision"], action))


@attrs.define
class LoadRun:
    actors: list[Actor]
    rss_before_kib: int
    rss_after_kib: int
    rss_peak_kib: int
    seconds: float
    lost: list[str]
    history_checked: int

    @property
    def forbidden(self) -> list[str]:
        return [line for actor in self.actors for line in actor.forbidden]

    def requests(self, kind: str | None = None) -> int:
        return sum(sum(a.outcomes.values()) for a in self.actors if kind is None or a.kind == kind)

    @property
    def acknowledged(self) -> int:
        return sum(len(a.acknowledged) for a in self.actors)

    @property
    def conflicts(self) -> int:
        return sum(a.outcomes["conflict.memory_revision"] for a in self.actors)


@contextlib.contextmanager
def _socket_actor(world: World, token: str) -> Iterator[Call]:
    with connect(world.environ(token), may_start=False) as conn:
        yield conn.call


@contextlib.contextmanager
def _mcp_actor(world: World, token: str, name: str) -> Iterator[Call]:
    env = world.environ(token)
    with mcp_adapter(env, world.root, world.root / f"{name}.stderr") as client:
        yield client.call


def run_load(
    world: World, *, seconds: float, cli: int = 8, sockets: int = 4, mcps: int = 2, seed: int = 1
) -> LoadRun:
    world.write_config(CONFIG)
    with connect(world.environ("@owner")) as owner:
        shared = [
            owner.call("memory.add", {"space": SHARED_SPACE, "content": f"shared memory {n}"})["id"]
            for n in range(4)
        ]
        plan = [("cli", cli), ("socket", sockets), ("mcp", mcps)]
        actors: list[tuple[Actor, str]] = []
        rng = random.Random(seed)
        for kind, count in plan:
            for n in range(count):
                name = f"{kind}-{n}"
                grants = [{"right": "read", "scope": "*"}, {"right": "write", "scope": "*"}]
                added = owner.call("client.add", {"name": name, "grants": grants})
                actor = Actor(name, kind, added["principal"], random.Random(rng.random()))
                actors.append((actor, added["token"]))
    pid = world.daemon_pid()  # from `venom-mem ping --json`
    assert pid is not None, "the daemon isn't running"
    stop, go = threading.Event(), threading.Event()
    ready = threading.Semaphore(0)
    failures: list[BaseException] = []

    def drive(actor: Actor, token: str) -> None:
        try:
            with contextlib.ExitStack() as stack:
                if actor.kind == "cli":
                    call = cli_call(world, token)
                elif actor.kind == "socket":
                    call = stack.enter_context(_socket_actor(world, token))
                else:
                    call = stack.enter_context(_mcp_actor(world, token, actor.name))
                ready.release()
                go.wait()
                while not stop.is_set():
                    actor.step(call, shared)
        except BaseException as exc:
            failures.append(exc)
            ready.release()
            stop.set()

    threads = [threading.Thread(target=drive, args=pair, daemon=True) for pair in actors]
    for thread in threads:
        thread.start()
    for _ in threads:  # every client connected (an MCP adapter takes a second to start)
        assert ready.acquire(timeout=120), "a client never got ready"
    rss_before = rss_kib(pid)
    peak = [rss_before]
    started = time.monotonic()
    go.set()
    while time.monotonic() - started < seconds and not stop.is_set():
        time.sleep(0.25)
        peak.append(rss_kib(pid))
    stop.set()
    for thread in threads:
        thread.join(timeout=120)
    elapsed = time.monotonic() - started
    if failures:
        raise failures[0]
    rss_after = rss_kib(pid)
    lost, checked = _check_history([a for a, _ in actors], world, shared, MAX_VERSIONS)
    return LoadRun(
        actors=[a for a, _ in actors],
        rss_before_kib=rss_before,
        rss_after_kib=rss_after,
        rss_peak_kib=max(peak),
        seconds=elapsed,
        lost=lost,
        history_checked=checked,
    )


def _check_history(
    actors: list[Actor], world: World, shared: list[str], max_versions: int
) -> tuple[list[str], int]:
    """No lost update: for every memory, the acknowledged revisions are exactly 1 to the
    current one, each once (only these clients write them; the owner added the shared ones),
    and every one history still keeps names the action and the client it was acknowledged to
    (history keeps the newest ``max_versions``). Returns the problems and the entries
    checked against history."""
    lost: list[str] = []
    checked = 0
    by_memory: dict[str, list[tuple[int, str, str]]] = {id: [(1, "add", "owner")] for id in shared}
    for actor in actors:
        for id, revision, action in actor.acknowledged:
            by_memory.setdefault(id, []).append((revision, action, actor.principal))
    with connect(world.environ("@owner"), may_start=False) as owner:
        for id, acks in sorted(by_memory.items()):
            current = owner.call("memory.get", {"id": id, "include_deleted": True})["revision"]
            revisions = sorted(r for r, _, _ in acks)
            if revisions != list(range(1, current + 1)):
                missing = sorted(set(range(1, current + 1)) - set(revisions))
                twice = sorted(r for r in set(revisions) if revisions.count(r) > 1)
                lost.append(f"{id} at r{current}: unacknowledged {missing}, twice {twice}")
            versions = owner.call("memory.history", {"id": id})["versions"]
            kept = {v["revision"]: (v["action"], v["by"]["principal"]) for v in versions}
            for revision, action, principal in acks:
                if revision <= current - max_versions:
                    continue  # pruned, as memory.max_versions says
                checked += 1
                if kept.get(revision) != (action, principal):
                    lost.append(
                        f"{id} r{revision}: acknowledged {action} by {principal}, history has "
                        f"{kept.get(revision)}"
                    )
    return lost, checked
