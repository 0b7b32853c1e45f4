"""A team store survives its database (issue 24, docs/adr/0030).

Two real ``venom-mem serve`` daemons (A and B, each on its own socket and data directory: two
"machines") share one PostgreSQL server with fsync on, reached over TCP through a proxy
(tests/support/tcp_proxy.py); a third daemon (C) serves the same store and gets no request
during any outage. Two writers per busy daemon add memories in a loop, each on its own
connection with a client token (so the clients check runs before every request), retrying
a content after an ``unavailable.*`` until it is acknowledged; beside them two editors per
busy daemon send issue 28's writes round after round (memory.add with ``supersedes``,
memory.link, memory.unlink, memory.replace, memory.forget, space.deactivate and
space.activate), each retried the same way. Meanwhile the server is
crashed (``pg_ctl stop -m immediate``) and started again, and the proxy refuses and drops
(FIN), refuses and resets (RST), and stalls (bytes held, then delivered) every connection,
several cycles each, with no daemon restarted.

What must hold, counted:

* every acknowledged add's ID exists afterwards with exactly its content, once; no content is
  stored twice; and no add reported failed (other than a lost reply, whose outcome the RFC
  leaves open) was applied: a retry of its content would have answered ``changed: false``;
* the same for the editors' writes, per verb: every round's rows are on the server exactly
  once (each fact live with one supersedes link to the one before it and one relates_to link,
  unlinked; each draft's versions add, update, delete; each shelf space active), and no write
  whose tries were all reported failed (no lost reply, no ``commit_unknown``) was found
  applied by its retry (changed: false, or no live link or old text left);
* every writer's writes resume within 5 s of the server or the link being back;
* no answer took longer than the verb's budget, and the codes callers saw are ``unavailable.*``;
* C, idle through the outage, is not latched: its first write afterwards succeeds;
* during an outage doctor shows ``store.reachable`` failing with the reason and since when;
* each daemon logged one "lost the store" per outage it met, not one per attempt.
"""

from __future__ import annotations

import functools
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.reliability.conftest import SUITE
from tests.reliability.support import record
from tests.support.daemon_env import VENOM_MEM, World, make_world, pid_alive, wait_until
from tests.support.postgres_server import PostgresServer, server_or_skip
from tests.support.tcp_proxy import running_proxy
from venom_mem_adapters.client import Connection, connect, reply_budget_s
from venom_mem_core.errors import VenomError

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed (pip install -e '.[dev]')"
)

RESUME_WITHIN_S = 5.0
ADD_BUDGET_S = reply_budget_s("memory.add")
DOWN_S = 3.0  # a crash or a partition of a few seconds
STALL_S = 10.0  # longer than a connection waits for an answer (connection.py's 8 s)
WRITERS_PER_DAEMON = 2
EDITORS_PER_DAEMON = 2
# A lost reply to the daemon: the outcome is open (RFC-0020 section 8), and none is expected.
_OPEN_OUTCOME = {"unavailable.connection", "unavailable.daemon_timeout"}


@attrs.define
class Call:
    sent: float
    took: float
    content: str
    code: str  # "ok", or the error's code
    reason: str | None = None
    changed: bool | None = None


class Writer(threading.Thread):
    """Adds ``<name> add <n>`` to space ``<name>`` until stopped; a content that got an
    error is sent again until it is acknowledged."""

    def __init__(self, name: str, world: World, token: str) -> None:
        super().__init__(name=name, daemon=True)
        self.space = name
        self.world = world
        self.token = token
        self.calls: list[Call] = []
        self.acked: dict[str, int] = {}
        self.stopping = threading.Event()
        self.unexpected: list[str] = []

    def run(self) -> None:
        self._connection: Connection | None = None
        try:
            self._write()
        finally:
            if self._connection is not None:
                self._connection.close()

    def _write(self) -> None:
        n = 0
        while True:
            connection = self._connection
            content = f"{self.space} add {n}"
            if self.stopping.is_set() and content not in self._tried():
                return
            try:
                if connection is None:
                    connection = connect(self.world.environ(), may_start=False, token=self.token)
                    self._connection = connection
                sent = time.monotonic()
                try:
                    out = connection.call("memory.add", {"space": self.space, "content": content})
                except VenomError as error:
                    self.calls.append(
                        Call(
                            sent,
                            time.monotonic() - sent,
                            content,
                            error.code,
                            reason=error.data.get("reason"),
                        )
                    )
                    if error.code in _OPEN_OUTCOME:
                        connection.close()
                        self._connection = None
                    time.sleep(0.05)
                    continue
            except VenomError as error:  # connect: the daemon itself must always answer
                self.unexpected.append(f"connect: {error.code}: {error.message}")
                time.sleep(0.2)
                continue
            self.calls.append(
                Call(sent, time.monotonic() - sent, content, "ok", changed=bool(out["changed"]))
            )
            number = int(str(out["id"]).removeprefix("m"))
            if self.acked.setdefault(content, number) != number:
                self.unexpected.append(
                    f"{content} acknowledged as m{number} and m{self.acked[content]}"
                )
            n += 1
            time.sleep(0.01)

    def _tried(self) -> set[str]:
        return {c.content for c in self.calls if c.code != "ok"} - set(self.acked)


@attrs.define
class Edit:
    verb: str
    key: str  # which write: the same key for each try of it
    code: str  # "ok", or the error's code
    reason: str | None = None
    settled: str | None = None  # what a try answered that says an earlier one was applied


class Editor(threading.Thread):
    """Issue 28's writes, on space ``<name>`` and its companion ``<name>-shelf``, round after
    round until stopped (each round finished): ``fact <n>`` added superseding ``fact <n-1>``,
    a ``relates_to`` link between them and its unlink, ``draft <n>`` added, replaced and
    forgotten by its text, and the shelf space deactivated and activated. A write that got
    an ``unavailable.*`` is sent again until it is acknowledged, or until a try answers what
    only an applied earlier try leaves (changed: false; no live link; no memory holding the
    old text)."""

    def __init__(self, name: str, world: World, token: str) -> None:
        super().__init__(name=name, daemon=True)
        self.space = name
        self.shelf = f"{name}-shelf"
        self.world = world
        self.token = token
        self.edits: list[Edit] = []
        self.facts: list[int] = []  # fact n is m<facts[n]>
        self.drafts: list[int] = []  # draft n is m<drafts[n]>
        self.acked: list[tuple[str, str]] = []  # (verb, key) acknowledged with a change
        self.stopping = threading.Event()
        self.unexpected: list[str] = []
        self._connection: Connection | None = None

    def run(self) -> None:
        try:
            n = 0
            while not self.stopping.is_set():
                self._round(n)
                n += 1
        finally:
            if self._connection is not None:
                self._connection.close()

    def _round(self, n: int) -> None:
        fact, draft = f"{self.space} fact <{n}>", f"{self.space} draft <{n}>"
        older = {"supersedes": [f"m{self.facts[-1]}"]} if self.facts else {}
        out = self._send("memory.add", fact, {"space": self.space, "content": fact, **older})
        self.facts.append(int(str(out["id"]).removeprefix("m")))
        if len(self.facts) > 1:
            ends = {"from": f"m{self.facts[-1]}", "to": f"m{self.facts[-2]}"}
            link = {**ends, "relation": "relates_to"}
            self._send("memory.link", f"{fact} link", link)
            self._send("memory.unlink", f"{fact} unlink", link, settles="not_found.link")
        out = self._send("memory.add", draft, {"space": self.space, "content": draft})
        self.drafts.append(int(str(out["id"]).removeprefix("m")))
        replaced = {"space": self.space, "old_text": draft, "content": f"{draft} redrafted"}
        self._send("memory.replace", draft, replaced, settles="not_found.memory_text")
        forgotten = {"space": self.space, "old_text": f"{draft} redrafted"}
        self._send("memory.forget", draft, forgotten, settles="not_found.memory_text")
        self._send("space.deactivate", f"{self.shelf} {n}", {"space": self.shelf})
        self._send("space.activate", f"{self.shelf} {n}", {"space": self.shelf})

    def _send(
        self, verb: str, key: str, params: dict[str, Any], *, settles: str | None = None
    ) -> dict[str, Any]:
        while True:
            try:
                if self._connection is None:
                    self._connection = connect(
                        self.world.environ(), may_start=False, token=self.token
                    )
                out = self._connection.call(verb, params)
            except VenomError as error:
                if error.code == settles:
                    self.edits.append(Edit(verb, key, error.code, settled=error.code))
                    return {}
                self.edits.append(Edit(verb, key, error.code, error.data.get("reason")))
                if not error.code.startswith("unavailable."):
                    self.unexpected.append(f"{verb} {key}: {error.code}: {error.message}")
                    raise
                if error.code in _OPEN_OUTCOME and self._connection is not None:
                    self._connection.close()
                    self._connection = None
                time.sleep(0.05)
                continue
            changed = out.get("changed", True)
            self.edits.append(Edit(verb, key, "ok", settled=None if changed else "unchanged"))
            if changed:
                self.acked.append((verb, key))
            return dict(out)


def _false_failures(edits: list[Edit]) -> dict[str, int]:
    """Per verb, the writes a retry showed applied although every earlier try of them had
    been reported failed (no lost reply, no ``commit_unknown`` among them)."""
    out: dict[str, int] = {}
    tries: dict[tuple[str, str], list[Edit]] = {}
    for edit in edits:
        before = tries.setdefault((edit.verb, edit.key), [])
        if edit.settled is not None and before:
            open_ = any(e.code in _OPEN_OUTCOME or e.reason == "commit_unknown" for e in before)
            if not open_:
                out[edit.verb] = out.get(edit.verb, 0) + 1
        before.append(edit)
    return out


def _edits_on_server(server: PostgresServer, schema: str, editors: list[Editor]) -> list[str]:
    """What the editors' finished rounds must have left, checked row by row: each fact live
    with one supersedes link to the fact before and one relates_to link, unlinked; each
    draft replaced once and forgotten once (its versions add, update, delete); each shelf
    active. Anything else is named."""
    with psycopg.connect(server.url(schema=schema), autocommit=True) as connection:
        memories = {
            int(i): (str(c), d is not None)
            for i, c, d in connection.execute("SELECT id, content, deleted FROM memories")
        }
        links: dict[tuple[int, int, str], list[bool]] = {}
        for source, target, relation, removed in connection.execute(
            "SELECT source, target, relation, removed FROM links"
        ):
            links.setdefault((int(source), int(target), str(relation)), []).append(
                removed is not None
            )
        versions: dict[int, list[str]] = {}
        for memory, action in connection.execute(
            "SELECT memory, action FROM memory_versions ORDER BY memory, revision"
        ):
            versions.setdefault(int(memory), []).append(str(action))
        inactive = {str(r[0]) for r in connection.execute("SELECT space FROM inactive_spaces")}
    wrong: list[str] = []
    for editor in editors:
        for n, fact in enumerate(editor.facts):
            content = f"{editor.space} fact <{n}>"
            if memories.get(fact) != (content, False):
                wrong.append(f"m{fact} ({content}): {memories.get(fact)}")
            if n:
                older = editor.facts[n - 1]
                for relation, removed in (("supersedes", [False]), ("relates_to", [True])):
                    if links.get((fact, older, relation)) != removed:
                        got = links.get((fact, older, relation))
                        wrong.append(f"m{fact} {relation} m{older}: {got}, not {removed}")
        for n, draft in enumerate(editor.drafts):
            content = f"{editor.space} draft <{n}> redrafted"
            if memories.get(draft) != (content, True):
                wrong.append(f"m{draft} (draft {n}): {memories.get(draft)}")
            if versions.get(draft) != ["add", "update", "delete"]:
                wrong.append(f"m{draft} (draft {n}) versions: {versions.get(draft)}")
        if editor.shelf in inactive:
            wrong.append(f"{editor.shelf} left inactive")
    return wrong


@attrs.define
class Daemon:
    world: World
    process: subprocess.Popen[bytes]
    log: Path

    def lost_lines(self) -> int:
        return len(re.findall(r"lost the store; retrying", self.log.read_text(errors="replace")))

    def settled(self) -> list[str]:
        text = self.log.read_text(errors="replace")
        return re.findall(r"the transaction whose COMMIT reply was lost (\w[\w ]*)", text)


@pytest.fixture(scope="module")
def durable_server() -> Iterator[PostgresServer]:
    yield from server_or_skip("the fault tests", durable=True, tcp=True)


def _serve(world: World, url: str) -> Daemon:
    world.write_config(f'.{{ .store = .{{ .url = "{url}" }} }}')
    log = world.root / "serve.log"
    with log.open("wb") as sink:  # the daemon keeps its own copy of the descriptor
        process = subprocess.Popen(
            [VENOM_MEM, "serve"],
            env=world.environ(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    deadline = time.monotonic() + 30
    while world.daemon_pid() != process.pid:
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return Daemon(world, process, log)


def _stored(server: PostgresServer, schema: str) -> list[tuple[int, str, str]]:
    with psycopg.connect(server.url(schema=schema), autocommit=True) as connection:
        rows = connection.execute("SELECT id, space, content FROM memories").fetchall()
    return [(int(i), str(s), str(c)) for i, s, c in rows]


def _wait_writing(writers: list[Writer], since: float, within: float) -> None:
    """Until every writer had an acknowledged add sent after ``since``."""
    wait_until(
        lambda: all(any(c.code == "ok" and c.sent >= since for c in w.calls) for w in writers),
        within,
        0.05,
    )


def test_writes_survive_crashes_and_partitions_of_the_server(
    durable_server: PostgresServer,
) -> None:
    server = durable_server
    assert server.tcp_port is not None
    schema = server.fresh_schema("faults")
    with (
        running_proxy(("127.0.0.1", server.tcp_port)) as proxy,
        make_world() as a,
        make_world() as b,
        make_world() as idle,
    ):
        url = server.tcp_url("127.0.0.1", proxy.port, schema=schema)
        daemons = [_serve(world, url) for world in (a, b, idle)]
        token = a.add_client("writer")
        idle_token = idle.add_client("idle")
        writers = [
            Writer(f"{tag}{i}", world, token)
            for tag, world in (("a", a), ("b", b))
            for i in range(WRITERS_PER_DAEMON)
        ]
        editors = [
            Editor(f"e{tag}{i}", world, token)
            for tag, world in (("a", a), ("b", b))
            for i in range(EDITORS_PER_DAEMON)
        ]
        for thread in (*writers, *editors):
            thread.start()
        _wait_writing(writers, 0.0, 20)

        doctor_seen: list[dict[str, Any]] = []
        cycles: list[dict[str, Any]] = []
        idle_firsts: list[int] = []

        def cycle(
            kind: str, fault: Callable[[], None], heal: Callable[[], None], down: float
        ) -> None:
            begin = time.monotonic()
            _wait_writing(writers, begin, 10)  # everyone writing before the fault
            fault()
            down_at = time.monotonic()
            if kind == "crash" and not doctor_seen:
                time.sleep(1.5)
                with connect(a.environ(), may_start=False, token="@owner") as owner:
                    doctor_seen.append(owner.call("doctor", {}))
            time.sleep(max(0.0, down - (time.monotonic() - down_at)))
            heal()
            back = time.monotonic()
            # The idle daemon's first write after the outage (a real CLI call).
            first = idle.run("memory", "add", "--space", "idle", "--content", f"idle {len(cycles)}",
                          "--json", token=idle_token)  # fmt: skip
            idle_firsts.append(first.code)
            assert first.code == 0, (kind, first)
            _wait_writing(writers, back, RESUME_WITHIN_S + 5)
            resumed = []
            for writer in writers:
                oks = [
                    x.sent + x.took
                    for x in writer.calls
                    if x.code == "ok" and x.sent + x.took >= back
                ]
                resumed.append(min(oks) - back if oks else float("inf"))
            during = [
                x for w in writers for x in w.calls if down_at <= x.sent + x.took and x.sent <= back
            ]
            cycles.append(
                {
                    "kind": kind,
                    "resumed_s": resumed,
                    "errors": sum(1 for x in during if x.code != "ok"),
                    "max_answer_s": max((x.took for x in during), default=0.0),
                }
            )

        for _ in range(3):
            cycle("crash", server.crash, server.start, DOWN_S)
        for _ in range(2):
            cycle("drop", proxy.partition, proxy.heal, DOWN_S)
        for _ in range(2):
            cycle("reset", functools.partial(proxy.partition, reset=True), proxy.heal, DOWN_S)
        for _ in range(2):
            cycle("stall", proxy.stall, proxy.heal, STALL_S)
        # After a stall, connections the daemons gave up on were closed by them; wait for
        # every writer to go on once more, then stop them (each finishes its content).
        _wait_writing(writers, time.monotonic(), 10)
        for stopping in (*(w.stopping for w in writers), *(e.stopping for e in editors)):
            stopping.set()
        for thread in (*writers, *editors):
            thread.join(60)
            assert not thread.is_alive(), thread.name

        # No daemon restarted, and doctor is back to ok.
        for daemon in daemons:
            assert daemon.process.poll() is None, daemon.log.read_text()
            assert pid_alive(daemon.process.pid)
            assert daemon.world.daemon_pid() == daemon.process.pid
        with connect(a.environ(), may_start=False, token="@owner") as owner:
            after = {x["id"]: x for x in owner.call("doctor", {})["checks"]}
        assert after["store.reachable"]["status"] == "ok", after

        stored = _stored(server, schema)
        edits_wrong = _edits_on_server(server, schema, editors)
        logs = {d.world.root.name: (d.lost_lines(), d.settled()) for d in daemons}
        for daemon in daemons:
            daemon.process.terminate()
            daemon.process.wait(20)

    calls = [x for w in writers for x in w.calls]
    acked = {(w.space, content): number for w in writers for content, number in w.acked.items()}
    rows: dict[tuple[str, str], list[int]] = {}
    for number, space, content in stored:
        rows.setdefault((space, content), []).append(number)
    lost = [key for key, number in acked.items() if rows.get(key) != [number]]
    twice = [key for key, numbers in rows.items() if len(numbers) > 1]
    # A content whose error was followed by "changed: false" had been applied by the call
    # that was reported failed (unless the reply itself was lost, which the RFC leaves open).
    false_failures = []
    for writer in writers:
        failed: set[str] = set()
        for x in writer.calls:
            if x.code != "ok" and x.code not in _OPEN_OUTCOME and x.reason != "commit_unknown":
                failed.add(x.content)
            elif x.code == "ok" and x.content in failed and x.changed is False:
                false_failures.append(x.content)
    codes: dict[str, int] = {}
    for x in calls:
        if x.code != "ok":
            key = f"{x.code}:{x.reason}" if x.reason else x.code
            codes[key] = codes.get(key, 0) + 1
    slowest = max(x.took for x in calls)
    edits = [e for editor in editors for e in editor.edits]
    edit_failures = _false_failures(edits)
    per_verb: dict[str, dict[str, int]] = {}
    for e in edits:
        counts = per_verb.setdefault(e.verb, {"sent": 0, "ok": 0, "errors": 0, "settled": 0})
        counts["sent"] += 1
        counts["ok" if e.code == "ok" else "errors"] += 1
        counts["settled"] += e.settled is not None
        if e.reason == "commit_unknown":  # settled by no witness row: which verb met it
            counts["commit_unknown"] = counts.get("commit_unknown", 0) + 1
    for verb, counts in per_verb.items():
        counts["reported_failed_but_applied"] = edit_failures.get(verb, 0)
    edit_codes: dict[str, int] = {}
    for e in edits:
        if e.code != "ok" and e.settled is None:
            key = f"{e.code}:{e.reason}" if e.reason else e.code
            edit_codes[key] = edit_codes.get(key, 0) + 1
    record(
        SUITE,
        "postgres faults (two daemons, fsync on, through a TCP proxy)",
        cycles=len(cycles),
        kinds={
            k: sum(1 for c in cycles if c["kind"] == k) for k in ("crash", "drop", "reset", "stall")
        },
        adds_sent=len(calls),
        acknowledged=len(acked),
        errors=sum(codes.values()),
        codes=codes,
        lost=len(lost),
        stored_twice=len(twice),
        reported_failed_but_applied=len(false_failures),
        slowest_answer_s=round(slowest, 2),
        resumed_within_s=round(max(max(c["resumed_s"]) for c in cycles), 2),
        per_cycle=[
            {
                "kind": c["kind"],
                "resumed_s": round(max(c["resumed_s"]), 2),
                "errors": c["errors"],
                "max_answer_s": round(c["max_answer_s"], 2),
            }
            for c in cycles
        ],
        edit_rounds=sum(len(e.facts) for e in editors),
        edits_per_verb=per_verb,
        edit_codes=edit_codes,
        edits_wrong_on_server=len(edits_wrong),
        idle_daemon_first_writes=f"{idle_firsts.count(0)} of {len(idle_firsts)} ok",
        lost_store_log_lines=logs,
    )
    unexpected = [*(w.unexpected for w in writers), *(e.unexpected for e in editors)]
    assert not [u for some in unexpected for u in some], unexpected
    assert edits_wrong == [], edits_wrong[:10]
    assert edit_failures == {}, edit_failures
    assert all(code.startswith("unavailable.") for code in edit_codes), edit_codes
    assert all(editor.facts for editor in editors)
    assert lost == [], [(key, acked[key], rows.get(key)) for key in lost[:10]]
    assert twice == [], twice[:10]
    assert false_failures == [], false_failures[:10]
    assert all(code.startswith("unavailable.") for code in codes), codes
    assert slowest < ADD_BUDGET_S, slowest
    for c in cycles:
        assert max(c["resumed_s"]) <= RESUME_WITHIN_S, c
    assert all(code == 0 for code in idle_firsts)
    # Doctor during the first crash: store.reachable failing, with the reason and since when.
    [report] = doctor_seen
    reach = {x["id"]: x for x in report["checks"]}["store.reachable"]
    assert reach["status"] == "fail", reach
    assert re.search(r"since \d{4}-\d\d-\d\dT", reach["message"]), reach
    # One "lost the store" line per outage a daemon met, never one per failed attempt.
    for name, (lines, _settled) in logs.items():
        assert lines <= len(cycles), (name, lines)
