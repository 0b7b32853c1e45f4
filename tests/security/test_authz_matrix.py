"""The authorization matrix: every verb of the manifest x every kind of caller, over the real
daemon's socket, against a table built here from the manifest's ``right`` and ``resource``
fields and RFC-0020 section 3's rules, not from the implementation.

Callers: no token (``unknown``, the default ``read`` on ``*``), a malformed token, a revoked
client, a revoked and an expired ``grant.issue`` token, a read-only client, a client that may
write only another space, one that may read and write only another space, and the owner.

The rules (RFC-0020 section 3, CONTRACT sections 3 to 5):

- a bad token is refused at hello with ``denied.token`` and its reason; every verb on that
  connection is then ``denied.hello``;
- a verb with no right answers everyone; admin verbs are the owner's (``denied.admin`` on
  ``*``), and so is skill.install, which needs ``files`` (section 14); otherwise the right
  is checked on the verb's resource: ``*``, ``session:*``, the
  space named by ``space``, the memory named by ``id``, the session named by ``session``,
  and for search and list each explicit item of ``spaces``; a verb with no resource filters
  rows instead, and answers;
- ``denied.<right>`` has ``data = {right, resource, principal, fix}`` and the message
  "principal P lacks 'R' on X";
- the resource check comes before existence: a caller without the right is denied on a
  memory or session that doesn't exist, exactly as on one it can't see; a caller with the
  right gets ``not_found``;
- a refused request changes nothing: no event, no count, no client, no token.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from tests.reliability.support import RawConnection, raw_connection, record
from tests.support.daemon_env import World, make_world
from venom_mem_core.errors import denied_fix
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Verb

TARGET = "project/target"
ELSEWHERE = "project/elsewhere"
IDLE = "project/idle"  # space.deactivate's, so the matrix's own spaces stay active
ABSENT = {"id": "m99999", "session": "s99999", "name": "no-such-client", "principal": "g99999"}
READ_ALL = {"right": "read", "scope": "*"}
VERBS: tuple[Verb, ...] = tuple(v for v in MANIFEST.verbs if not v.local and v.name != "hello")


# -- the callers ---------------------------------------------------------------------------------


@attrs.frozen
class Caller:
    name: str
    token: str | None
    grants: tuple[tuple[str, str], ...] = ()  # (right, scope)
    token_problem: str | None = None  # the denied.token reason
    owner: bool = False

    def holds(self, right: str, resource: Resource) -> bool:
        """CONTRACT section 5: a grant with the right whose scope contains the resource."""
        return self.owner or any(
            r == right and contains(scope, resource) for r, scope in self.grants
        )


@attrs.frozen
class Resource:
    kind: str  # store, space, memory, session
    name: str | None = None  # space name, m<N>, s<N>; None for session:*
    space: str | None = None  # a memory's space, when it exists

    def __str__(self) -> str:
        if self.kind == "store":
            return "*"
        if self.kind == "space":
            return f"space:{self.name}"
        return f"{self.kind}:{self.name}" if self.name else f"{self.kind}:*"


def contains(scope: str, resource: Resource) -> bool:
    if scope == "*":
        return True
    if scope == "space:*":
        return resource.kind in ("space", "memory")  # every memory is in some space
    if scope.startswith("space:"):
        name = scope.removeprefix("space:")
        return (resource.kind == "space" and resource.name == name) or (
            resource.kind == "memory" and resource.space == name
        )
    if scope in ("memory:*", "session:*"):
        return resource.kind == scope.removesuffix(":*")
    if scope.startswith(("memory:", "session:")):
        kind, _, name = scope.partition(":")
        return resource.kind == kind and resource.name == name
    return False  # self: every target here was created by the owner


# -- the expected answer, from the manifest and section 3 -------------------------------------


@attrs.frozen
class Expect:
    outcome: str  # ok, not_found, denied, token
    right: str | None = None
    resource: str | None = None
    reason: str | None = None


def resource_of(verb: Verb, target: dict[str, Any]) -> Resource | None:
    """What section 3 checks ``verb`` on, for params naming ``target``; None: filtered."""
    if verb.resource == "*":
        return Resource("store")
    if verb.resource == "session:*":
        return Resource("session")
    if verb.resource == "space":
        return Resource("space", target["space"])
    if verb.resource == "id" or verb.name in ("memory.link", "memory.unlink"):
        return Resource("memory", target["id"], target.get("memory_space"))
    listing = ("memory.search", "memory.list", "memory.context", "store.export")
    if verb.name in listing and target.get("spaces"):
        return Resource("space", target["spaces"][0])  # each explicit item of spaces
    if verb.resource == "session" and "session" in target:
        return Resource("session", target["session"])
    return None


def expected(verb: Verb, caller: Caller, target: dict[str, Any], present: bool) -> Expect:
    if caller.token_problem is not None:
        return Expect("token", reason=caller.token_problem)
    right = verb.right
    found = Expect("ok" if present else "not_found")
    if right is None or caller.owner:
        return found if right is not None else Expect("ok")
    if right in ("admin", "files"):  # files: granted to nobody, so the owner's alone
        return Expect("denied", right, "*")
    if (
        verb.resource is None
        and right == "write"
        and not any(r == "write" for r, _ in caller.grants)
    ):
        return Expect("denied", right, "*")  # writes nowhere: refused before the use case
    resource = resource_of(verb, target)
    if resource is None or caller.holds(right, resource):
        return found
    return Expect("denied", right, str(resource))


def not_found_code(verb: Verb) -> str | None:
    codes = [e.code for e in verb.errors if e.code.startswith("not_found.")]
    return codes[0] if codes else None


# -- the world the matrix runs in -------------------------------------------------------------


@attrs.define
class Matrix:
    world: World
    owner: RawConnection
    callers: list[Caller]
    memory: str
    session: str
    ids: Iterator[int] = attrs.field(factory=lambda: itertools.count(1000))
    serial: Iterator[int] = attrs.field(factory=lambda: itertools.count(1))

    def owner_call(self, verb: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = self.owner.call(next(self.ids), verb, params)
        assert "ok" in reply, (verb, params, reply)
        return dict(reply["ok"])

    def unique(self, what: str) -> str:
        return f"matrix {what} {next(self.serial)}"

    def fresh_memory(self, *, deleted: bool = False) -> str:
        id = str(
            self.owner_call("memory.add", {"space": TARGET, "content": self.unique("m")})["id"]
        )
        if deleted:
            self.owner_call("memory.delete", {"id": id, "revision": 1})
        return id

    def fresh_text(self) -> str:
        """The text of a new memory of the target space, for memory.replace and .forget."""
        text = self.unique("text")
        self.owner_call("memory.add", {"space": TARGET, "content": text})
        return text

    def fresh_link(self) -> str:
        """A new memory of the target space that relates_to the matrix's memory."""
        id = self.fresh_memory()
        link = {"from": id, "to": self.memory, "relation": "relates_to"}
        self.owner_call("memory.link", link)
        return id

    def fresh_session(self) -> str:
        return str(self.owner_call("session.start", {"harness": "matrix"})["session"])

    def fingerprint(self) -> tuple[Any, ...]:
        status = self.owner_call("store.status", {})
        status.pop("bytes")
        events = self.owner_call("events", {"limit": 1000})
        return (
            sorted(status.items()),
            len(self.owner_call("client.list", {})["clients"]),
            len(self.owner_call("grant.list", {})["principals"]),
            events["cursor"],
        )


def params_for(verb: Verb, m: Matrix, present: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """Valid params for ``verb`` (so only rights decide), and the target they name."""
    name = verb.name
    one_memory = {"memory.get", "memory.history", "memory.related"}
    if name in ("memory.link", "memory.unlink"):  # write on from, read on to (ADR 0042)
        source = ABSENT["id"]
        if present:
            source = m.fresh_memory() if name == "memory.link" else m.fresh_link()
        link = {"from": source, "to": m.memory, "relation": "relates_to"}
        return link, {"id": source, "memory_space": TARGET if present else None}
    fresh_memory = {"memory.update", "memory.delete", "memory.restore", "memory.purge"}
    if name in one_memory | fresh_memory:
        id = ABSENT["id"]
        if present:
            id = (
                m.memory if name in one_memory else m.fresh_memory(deleted=name.endswith("restore"))
            )
        params: dict[str, Any] = {"id": id}
        if name in ("memory.update", "memory.delete"):
            params["revision"] = 1
        if name == "memory.update":
            params["content"] = m.unique("update")
        return params, {"id": id, "memory_space": TARGET if present else None}
    if name in ("session.get", "session.chain", "session.end", "session.purge"):
        session = ABSENT["session"]
        if present:
            session = m.session if name in ("session.get", "session.chain") else m.fresh_session()
        return {"session": session}, {"session": session}
    if name == "client.remove":
        client = ABSENT["name"]
        if present:
            client = m.unique("c").replace(" ", "-")
            m.owner_call("client.add", {"name": client, "grants": [READ_ALL]})
        return {"name": client}, {}
    if name == "grant.revoke":
        principal = ABSENT["principal"]
        if present:
            principal = m.owner_call("grant.issue", {"grants": [READ_ALL], "ttl": 60})["principal"]
        return {"principal": principal}, {}
    fixed: dict[str, Callable[[], dict[str, Any]]] = {
        "memory.add": lambda: {"space": TARGET, "content": m.unique("add")},
        "memory.search": lambda: {"query": "matrix", "spaces": [TARGET]},
        "memory.list": lambda: {"spaces": [TARGET]},
        "memory.context": lambda: {"spaces": [TARGET]},
        "store.export": lambda: {"spaces": [TARGET]},
        "space.list": dict,
        "space.describe": lambda: {"space": TARGET, "description": m.unique("d")},
        "space.deactivate": lambda: {"space": IDLE},  # not TARGET: the matrix reads it
        "space.activate": lambda: {"space": TARGET},
        "memory.replace": lambda: {
            "space": TARGET,
            "old_text": m.fresh_text(),
            "content": m.unique("replaced"),
        },
        "memory.forget": lambda: {"space": TARGET, "old_text": m.fresh_text()},
        "store.copy": lambda: {"to": f"{m.world.store}.copy-{next(m.serial)}"},
        "session.start": lambda: {"harness": "matrix"},
        "session.list": dict,
        "client.add": lambda: {
            "name": m.unique("n").replace(" ", "-"),
            "grants": [READ_ALL],
        },
        "client.list": dict,
        "store.status": dict,
        "whoami": dict,
        "ping": dict,
        "doctor": dict,
        "config.get": lambda: {"key": "memory.max_versions"},
        "config.set": lambda: {"key": "memory.max_versions", "value": "20"},
        "config.reload": dict,
        "grant.issue": lambda: {"grants": [READ_ALL], "ttl": 60},
        "grant.list": dict,
        "audit": lambda: {"limit": 5},
        "events": lambda: {"limit": 5},
        "skill": dict,
        "skill.install": dict,
        "stop": dict,
    }
    assert name in fixed, f"the matrix has no params for {name}: add them"
    params = fixed[name]()
    return params, dict(params)


def has_target(verb: Verb) -> bool:
    return (
        verb.resource in ("id", "session")
        and verb.name
        not in (
            "memory.search",
            "memory.list",
        )
    ) or verb.name in (
        "memory.purge",
        "session.purge",
        "client.remove",
        "grant.revoke",
        "memory.link",
        "memory.unlink",
    )


def _client(owner: RawConnection, name: str, grants: list[dict[str, str]]) -> Caller:
    reply = owner.call(90, "client.add", {"name": name, "grants": grants})
    token = reply["ok"]["token"]
    return Caller(name, token, tuple((g["right"], g["scope"]) for g in grants))


@pytest.fixture(scope="module")
def matrix() -> Iterator[Matrix]:
    with make_world() as world:
        world.write_config(".{ .daemon = .{ .idle_timeout_ms = 600000 } }")
        world.ok("whoami")
        with raw_connection(world.socket, token="@owner") as owner:
            issued = owner.call(80, "grant.issue", {"grants": [READ_ALL], "ttl": 1})["ok"]
            issued_at = time.monotonic()
            revoked_issue = owner.call(81, "grant.issue", {"grants": [READ_ALL], "ttl": 600})["ok"]
            owner.call(82, "grant.revoke", {"principal": revoked_issue["principal"]})
            removed = _client(owner, "removed", [READ_ALL])
            owner.call(83, "client.remove", {"name": "removed"})
            write = {"right": "write", "scope": f"space:{ELSEWHERE}"}
            callers = [
                Caller("no-token", None, (("read", "*"),)),
                Caller(
                    "malformed-token", "vnt1.venom-mem.g1.not-a-secret", token_problem="invalid"
                ),
                Caller("revoked-client", removed.token, token_problem="revoked"),
                Caller("revoked-issued-token", revoked_issue["token"], token_problem="revoked"),
                Caller("expired-issued-token", issued["token"], token_problem="expired"),
                _client(owner, "read-only", [READ_ALL]),
                _client(owner, "write-elsewhere", [READ_ALL, write]),
                _client(
                    owner,
                    "read-elsewhere",
                    [{"right": "read", "scope": f"space:{ELSEWHERE}"}, write],
                ),
                Caller("owner", "@owner", owner=True),
            ]
            memory = owner.call(84, "memory.add", {"space": TARGET, "content": "the target"})
            session = owner.call(85, "session.start", {"harness": "matrix"})
            time.sleep(max(0.0, issued_at + 1.2 - time.monotonic()))  # the issued token expires
            yield Matrix(world, owner, callers, memory["ok"]["id"], session["ok"]["session"])


@contextlib.contextmanager
def connection_as(m: Matrix, caller: Caller) -> Iterator[tuple[RawConnection, Any]]:
    """A connection that sent hello with the caller's token; yields it and hello's reply."""
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(str(m.world.socket))
    conn = RawConnection(sock, sock.makefile("rb"))
    try:
        params: dict[str, Any] = {"auth": {"token": caller.token}} if caller.token else {}
        yield conn, conn.call(1, "hello", params)
    finally:
        conn.close()


def check_cell(
    verb: Verb, caller: Caller, *, hello: Any, reply: Any, expect: Expect, principal: str
) -> None:
    cell = f"{verb.name} as {caller.name}: {reply}"
    if expect.outcome == "token":
        error = hello["error"]
        assert error["code"] == "denied.token", hello
        assert error["data"]["reason"] == expect.reason, hello
        assert reply["error"]["code"] == "denied.hello", cell
        return
    if expect.outcome == "ok":
        assert "ok" in reply, cell
        return
    assert "error" in reply, cell
    error = reply["error"]
    if expect.outcome == "not_found":
        assert error["code"].startswith("not_found."), cell
        code = not_found_code(verb)
        if code is not None:
            assert error["code"] == code, cell
        return
    assert expect.right is not None
    assert expect.resource is not None
    assert error == {
        "code": f"denied.{expect.right}",
        "message": f"principal {principal} lacks '{expect.right}' on {expect.resource}",
        "data": {
            "right": expect.right,
            "resource": expect.resource,
            "principal": principal,
            "fix": denied_fix(expect.right, expect.resource, principal),
        },
    }, cell


def principal_of(hello: Any) -> str:
    return str(hello["ok"]["principal"]) if "ok" in hello else ""


@pytest.mark.parametrize("verb", VERBS, ids=[v.name for v in VERBS])
def test_every_caller_gets_the_section_3_answer(matrix: Matrix, verb: Verb) -> None:
    counts: Counter[str] = Counter()
    for caller in matrix.callers:
        if verb.name == "stop" and caller.owner:
            continue  # it would end the matrix's daemon; test_cli_human.py runs the owner's
        for present in (True, False) if has_target(verb) else (True,):
            params, target = params_for(verb, matrix, present)
            expect = expected(verb, caller, target, present)
            before = matrix.fingerprint() if expect.outcome in ("denied", "token") else None
            with connection_as(matrix, caller) as (conn, hello):
                reply = conn.call(2, verb.name, params)
            check_cell(
                verb,
                caller,
                hello=hello,
                reply=reply,
                expect=expect,
                principal=principal_of(hello),
            )
            if before is not None:
                assert matrix.fingerprint() == before, f"{verb.name} as {caller.name} changed"
            counts[expect.outcome] += 1
    record(
        "security",
        "authorization_matrix",
        verbs=1,
        callers=str(len(matrix.callers)),
        cells=sum(counts.values()),
        **{f"cells_{k}": v for k, v in sorted(counts.items())},
    )


def test_unreadable_and_absent_look_the_same(matrix: Matrix) -> None:
    """For a caller without read on the target's space, a memory or session it can't read
    and one that doesn't exist get the same answer, but for the ID they name."""
    caller = next(c for c in matrix.callers if c.name == "read-elsewhere")
    pairs = [
        ("memory.get", "id", matrix.memory, ABSENT["id"]),
        ("memory.history", "id", matrix.memory, ABSENT["id"]),
        ("session.get", "session", matrix.session, ABSENT["session"]),
        ("session.chain", "session", matrix.session, ABSENT["session"]),
    ]
    with connection_as(matrix, caller) as (conn, _):
        for verb, param, hidden, absent in pairs:
            a = conn.call(2, verb, {param: hidden})["error"]
            b = conn.call(3, verb, {param: absent})["error"]
            assert a["code"] == b["code"] == "denied.read"
            assert a["message"].replace(hidden, "X") == b["message"].replace(absent, "X")
            assert set(a["data"]) == set(b["data"])
    record("security", "unreadable_vs_absent", pairs=len(pairs))


def test_a_space_grant_writes_that_space_only(matrix: Matrix) -> None:
    """The control for the write-elsewhere column: its grant works where it points."""
    for name in ("write-elsewhere", "read-elsewhere"):
        caller = next(c for c in matrix.callers if c.name == name)
        with connection_as(matrix, caller) as (conn, hello):
            added = conn.call(2, "memory.add", {"space": ELSEWHERE, "content": f"own {name}"})
            assert added["ok"]["changed"] is True
            got = conn.call(3, "memory.get", {"id": added["ok"]["id"]})["ok"]
            assert got["author"] == {"principal": principal_of(hello), "label": name}
            refused = conn.call(4, "memory.add", {"space": TARGET, "content": f"not {name}"})
            assert refused["error"]["code"] == "denied.write"


@pytest.mark.parametrize(
    "caller_name", ["malformed-token", "revoked-client", "expired-issued-token"]
)
def test_the_cli_reports_a_bad_token_before_anything_runs(matrix: Matrix, caller_name: str) -> None:
    caller = next(c for c in matrix.callers if c.name == caller_name)
    before = matrix.fingerprint()
    for args in (
        ("memory", "add", "--space", TARGET, "--content", "from a bad token"),
        ("memory", "search", "--query", "target"),
        ("client", "list"),
    ):
        result = matrix.world.run(*args, "--json", token=caller.token)
        assert result.code == 4, result
        error = result.json["error"]
        assert error["code"] == "denied.token"
        assert error["data"]["reason"] == caller.token_problem
    assert matrix.fingerprint() == before
    record("security", "bad_tokens_through_the_cli", calls=3)
