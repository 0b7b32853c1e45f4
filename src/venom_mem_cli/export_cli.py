"""``venom-mem export`` and ``venom-mem import`` (docs/adr/0039), run in the CLI's process.

Export pages through the daemon's ``store.export`` and writes each page's lines as it gets
them. Import checks a whole file first (every line parsed, every call it will make checked
against the manifest's params) and writes nothing when a line is bad; then it writes through
the daemon as the caller, sessions before memories, each in the source's order, then the
links between them, the deletes held back for them (a link needs both ends live), the space
descriptions, and last the inactive spaces (a write activates a space); it skips what the
store already holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import IO, Any, NamedTuple

from venom_mem_adapters.client import Connection, connect
from venom_mem_core.errors import VenomError
from venom_mem_core.export_format import ImportLine, check_line
from venom_mem_core.ids import id_number
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.shapes import memory_id
from venom_mem_core.validation import check_value

from .peers import DEFAULT_SPACES, Reader, reader

__all__ = ["run_export", "run_import"]


def run_export(params: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """Write the export to ``params["out"]`` (through a ``.part`` file renamed at the end, so
    a cut export leaves no file that looks whole) or to stdout."""
    out = params.get("out")
    counts: Counter[str] = Counter()
    with connect(environ) as conn:
        if out is None:
            _write_export(conn, params, sys.stdout, counts)
            sys.stdout.flush()
        else:
            part = f"{out}.part"
            try:
                with open(part, "w", encoding="utf-8") as sink:
                    _write_export(conn, params, sink, counts)
                os.replace(part, out)
            except BaseException:
                if os.path.exists(part):
                    os.unlink(part)
                raise
    return {
        "out": out,
        "memories": counts["memory"],
        "sessions": counts["session"],
        "spaces": counts["space"],
        "links": counts["link"],
        "inactive_spaces": counts["inactive_space"],
    }


def _pages(conn: Connection, params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    request: dict[str, Any] = {"include_deleted": params.get("include_deleted", False)}
    if params.get("spaces") is not None:
        request["spaces"] = list(params["spaces"])
    after: str | None = None
    while True:
        page = conn.call("store.export", {**request, **({"after": after} if after else {})})
        yield page
        after = page.get("next")
        if after is None:
            return


def _write_export(
    conn: Connection, params: Mapping[str, Any], sink: IO[str], counts: Counter[str]
) -> None:
    for number, page in enumerate(_pages(conn, params)):
        if number == 0:
            sink.write(_json(page["header"]))
        for line in page["lines"]:
            counts[line["type"]] += 1
            sink.write(_json(line))


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


# -- import ---------------------------------------------------------------------------------


def run_import(params: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """Check every file, then import each: a file is written whole or, on a bad line, not at
    all (a failure of the daemon midway leaves what was written, which a re-run skips)."""
    target = params.get("space")
    form = params.get("format", "venom")
    if form != "venom":  # a peer's store: always one space, the format's unless named
        target = target or DEFAULT_SPACES[form]
        plans = [_Plan.of_peer(path, target, reader(form)) for path in params["files"]]
    else:
        plans = [_Plan.read(path, target) for path in params["files"]]
    done = []
    with connect(environ) as conn:
        held = _Held.read(conn, target)
        for plan in plans:
            done.append(plan.run(conn, held, dry_run=params.get("dry_run", False)))
    return {"files": done}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _memory_key(line: ImportLine, space: str) -> tuple[str, str, bool]:
    return (space, _sha(line["revisions"][-1]["content"]), "deleted" in line)


def _link_key(line: ImportLine, ends: Mapping[str, str]) -> tuple[str, str, str, bool]:
    """A link as the target would hold it: its ends mapped to the target's IDs."""
    return (ends[line["from"]], ends[line["to"]], line["relation"], "unlinked" in line)


def _session_key(line: ImportLine) -> tuple[Any, ...]:
    fields = ("harness", "harness_session", "relation", "cwd")
    return (*(line.get(k) for k in fields), "ended" in line)


class _Held:
    """What the store already holds that the caller may read: the keys of its memories and
    sessions with their IDs, of its links, its space descriptions (hashed) and inactive
    spaces, read through the same export (hashes, not text)."""

    def __init__(self) -> None:
        self.memories: defaultdict[tuple[str, str, bool], list[str]] = defaultdict(list)
        self.deleted: set[str] = set()
        self.sessions: defaultdict[tuple[Any, ...], list[str]] = defaultdict(list)
        self.links: Counter[tuple[str, str, str, bool]] = Counter()
        self.described: set[tuple[str, str]] = set()
        self.inactive: set[str] = set()

    @classmethod
    def read(cls, conn: Connection, space: str | None) -> _Held:
        held = cls()
        request = {"include_deleted": True, **({"spaces": [space]} if space else {})}
        for page in _pages(conn, request):
            for line in page["lines"]:
                kind = line["type"]
                if kind == "memory":
                    held.memories[_memory_key(line, line["space"])].append(line["id"])
                    if "deleted" in line:
                        held.deleted.add(line["id"])
                elif kind == "session":
                    held.sessions[_session_key(line)].append(line["session"])
                elif kind == "link":
                    held.links[
                        (line["from"], line["to"], line["relation"], "unlinked" in line)
                    ] += 1
                elif kind == "space":
                    held.described.add((line["space"], _sha(line["description"])))
                elif kind == "inactive_space":
                    held.inactive.add(line["space"])
        for ids in (*held.sessions.values(), *held.memories.values()):
            ids.sort(key=_number)
        return held


class _Plan:
    """A checked file: where each session and memory line starts, in the source's order."""

    def __init__(self, path: str, space: str | None) -> None:
        self.path = path
        self.space = space
        self.sessions: list[tuple[int, int, int]] = []  # (id, line number, offset)
        self.memories: list[tuple[int, int, int]] = []
        self.spaces: list[tuple[int, int]] = []
        self.links: list[tuple[int, int]] = []
        self.inactive: list[tuple[int, int]] = []
        # A peer's lines, converted: held, as its stores are one person's notes (ADR 0040).
        self.held: list[ImportLine] | None = None

    @classmethod
    def of_peer(cls, path: str, space: str, read: Reader) -> _Plan:
        plan = cls(path, space)
        plan.held = []
        for where, number, line in read(path):
            plan._note(line, number, len(plan.held), set(), where=where)
            plan.held.append(line)
        if not plan.held:
            raise VenomError(
                "invalid_params.import_format", f"{path} holds no memories", {"line": 0}
            )
        return plan

    @classmethod
    def read(cls, path: str, space: str | None) -> _Plan:
        plan = cls(path, space)
        sessions: set[str] = set()
        ends: list[tuple[int, str]] = []  # each link's ends, checked once every line is read
        try:
            source = open(path, "rb")  # noqa: SIM115  # closed below, read line by line
        except OSError as error:
            raise VenomError.param("file", "files", f"{path}: {error.strerror}") from None
        with source:
            offset, number = 0, 0
            for number, raw in enumerate(source, start=1):
                line = check_line(raw, number, first=number == 1)
                plan._note(line, number, offset, sessions)
                if line["type"] == "link":
                    ends += [(number, line["from"]), (number, line["to"])]
                offset += len(raw)
            if number == 0:
                raise VenomError("invalid_params.import_format", f"{path} is empty", {"line": 1})
        memories = {memory_id(m) for m, _, _ in plan.memories}
        for number, end in ends:
            if end not in memories:
                raise VenomError(
                    "invalid_params.import_line",
                    f"line {number} links {end}, which no memory line of the file holds",
                    {"line": number},
                )
        plan.sessions.sort()
        plan.memories.sort()
        return plan

    def _note(
        self,
        line: ImportLine,
        number: int,
        offset: int,
        sessions: set[str],
        *,
        where: str | None = None,
    ) -> None:
        kind = line["type"]
        try:
            if kind == "session":
                sessions.add(line["session"])
                self.sessions.append((_number(line["session"]), number, offset))
            elif kind == "memory":
                for verb, call in _replay(line, self.space or line["space"], "m1", "s1"):
                    _check_call(verb, call)
                self.memories.append((_number(line["id"]), number, offset))
            elif kind == "space" and self.space is None:
                _check_call("space.describe", _describe(line))
                self.spaces.append((number, offset))
            elif kind == "link":
                _check_call("memory.link", _link(line, {}))
                self.links.append((number, offset))
            elif kind == "inactive_space" and self.space is None:
                _check_call("space.deactivate", {"space": line["space"]})
                self.inactive.append((number, offset))
        except VenomError as error:
            if error.code == "invalid_params.import_line" or not error.code.startswith(
                "invalid_params."
            ):
                raise
            data = {**(error.data or {}), "line": number}
            at = where or f"line {number}"
            raise VenomError(error.code, f"{at}: {error.message}", data) from None

    def _line(self, source: IO[bytes], offset: int) -> ImportLine:
        if self.held is not None:
            return self.held[offset]
        source.seek(offset)
        parsed: ImportLine = json.loads(source.readline())
        return parsed

    def run(self, conn: Connection, held: _Held, *, dry_run: bool) -> dict[str, Any]:
        run = _Run(conn, held, dry_run)
        with open(self.path if self.held is None else os.devnull, "rb") as source:
            for _, number, offset in self.sessions:
                run.session(self._line(source, offset), number)
            for _, number, offset in self.memories:
                run.memory(self._line(source, offset), number, self.space, peer=bool(self.held))
            for number, offset in self.links:
                run.link(self._line(source, offset), number)
            run.held_deletes()
            for number, offset in self.spaces:
                run.describe(self._line(source, offset), number)
            for number, offset in self.inactive:  # last: a write activates its space
                run.deactivate(self._line(source, offset), number)
        out: dict[str, Any] = {"file": self.path, **{k: run.counts[k] for k in _COUNTS}}
        if dry_run:
            out["dry_run"] = True
            out["would_write"] = run.would
        return out


class _Run:
    """One file's writes, in the plan's order, with the source's IDs mapped to the target's
    (what a dry run would write is listed instead; its IDs stay the source's)."""

    def __init__(self, conn: Connection, held: _Held, dry_run: bool) -> None:
        self.conn, self.held, self.dry_run = conn, held, dry_run
        self.counts: Counter[str] = Counter()
        self.would: list[dict[str, Any]] = []
        self.sessions: dict[str, str] = {}
        self.memories: dict[str, str] = {}
        # A memory that ends deleted is deleted after the links: a link needs both ends live.
        self.deletes: list[tuple[str, int]] = []

    def session(self, line: ImportLine, number: int) -> None:
        key = _session_key(line)
        if self.held.sessions.get(key):
            self.sessions[line["session"]] = self.held.sessions[key].pop(0)
            self.counts["sessions_skipped"] += 1
            return
        self.counts["sessions"] += 1
        if self.dry_run:
            self.would.append({"line": number, "session": line["session"]})
            self.sessions[line["session"]] = line["session"]
            return
        self.sessions[line["session"]] = _start(self.conn, line, self.sessions)

    def memory(self, line: ImportLine, number: int, space: str | None, *, peer: bool) -> None:
        space = space or line["space"]
        key = _memory_key(line, space)
        if self.held.memories.get(key):
            self.memories[line["id"]] = self.held.memories[key].pop(0)
            self.counts["skipped"] += 1
            return
        if self.dry_run:
            self.counts["memories"] += 1
            self.memories[line["id"]] = line["id"]
            self.would.append(
                {
                    "line": number,
                    "memory": line["origin"]["id"] if peer else line["id"],
                    "space": space,
                    "revisions": len(line["revisions"]),
                    **({"content": line["revisions"][-1]["content"]} if peer else {}),
                }
            )
            return
        added = _add(self.conn, line, space, self.sessions.get(line.get("session", "")))
        self.memories[line["id"]] = added.id
        if not added.written:
            self.counts["skipped"] += 1
            return
        self.counts["memories"] += 1
        if "deleted" in line:
            self.deletes.append((added.id, added.revision))

    def link(self, line: ImportLine, number: int) -> None:
        key = _link_key(line, self.memories)
        if self.held.links[key] > 0:
            self.held.links[key] -= 1
            self.counts["links_skipped"] += 1
            return
        if not self.held.deleted.isdisjoint(key[:2]):  # a deleted end can't be linked
            self.counts["links_skipped"] += 1
            return
        call = _link(line, self.memories)
        if self.dry_run:
            self.would.append({"line": number, "link": f"{call['from']} {line['relation']} "
                               f"{call['to']}"})  # fmt: skip
            self.counts["links"] += 1
            return
        # An unlinked link whose triple is live in the target is skipped, not unlinked there.
        if not self.conn.call("memory.link", call)["changed"]:
            self.counts["links_skipped"] += 1
            return
        if "unlinked" in line:
            self.conn.call("memory.unlink", call)
        self.counts["links"] += 1

    def held_deletes(self) -> None:
        for memory, revision in self.deletes:
            self.conn.call("memory.delete", {"id": memory, "revision": revision})

    def describe(self, line: ImportLine, number: int) -> None:
        # Skipped when held, not re-sent: a describe activates the space, even unchanged.
        if (line["space"], _sha(line["description"])) in self.held.described:
            self.counts["spaces_skipped"] += 1
        elif self.dry_run:
            self.would.append({"line": number, "space": line["space"]})
            self.counts["spaces"] += 1
        elif self.conn.call("space.describe", _describe(line))["changed"]:
            self.counts["spaces"] += 1
        else:
            self.counts["spaces_skipped"] += 1

    def deactivate(self, line: ImportLine, number: int) -> None:
        if self.dry_run:
            held = line["space"] in self.held.inactive
            if not held:
                self.would.append({"line": number, "inactive_space": line["space"]})
            self.counts["inactive_spaces_skipped" if held else "inactive_spaces"] += 1
            return
        changed = self.conn.call("space.deactivate", {"space": line["space"]})["changed"]
        self.counts["inactive_spaces" if changed else "inactive_spaces_skipped"] += 1


_COUNTS = (
    "memories",
    "skipped",
    "sessions",
    "sessions_skipped",
    "spaces",
    "spaces_skipped",
    "links",
    "links_skipped",
    "inactive_spaces",
    "inactive_spaces_skipped",
)


def _number(text: str) -> int:
    return id_number(text, text[0]) or 0


def _link(line: ImportLine, memories: Mapping[str, str]) -> dict[str, Any]:
    """memory.link's (and .unlink's) params, the ends mapped (as they are when unmapped)."""
    ends = {end: memories.get(line[end], line[end]) for end in ("from", "to")}
    return {**ends, "relation": line["relation"]}


def _describe(line: ImportLine) -> dict[str, Any]:
    return {"space": line["space"], "description": line["description"]}


def _check_call(verb_name: str, call: Mapping[str, Any]) -> None:
    """The params checked as the daemon will check them, before anything is written."""
    verb = MANIFEST.verb(verb_name)
    assert verb is not None, verb_name
    types = {p.name: p.type for p in verb.params}
    for name, value in call.items():
        check_value(value, types[name], name)


def _start(conn: Connection, line: ImportLine, sessions: Mapping[str, str]) -> str:
    call: dict[str, Any] = {k: line[k] for k in ("harness", "harness_session", "cwd") if k in line}
    parent = sessions.get(line.get("parent", ""))
    if parent is not None and "relation" in line:
        call.update(parent=parent, relation=line["relation"])
    started: str = conn.call("session.start", call)["session"]
    if "ended" in line:
        conn.call("session.end", {"session": started})
    return started


def _replay(
    line: ImportLine, space: str, memory: str, session: str | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The calls that rebuild a memory's kept revisions, oldest first (``memory`` and
    ``revision`` stand for what the daemon will answer)."""
    first, *later = line["revisions"]
    add: dict[str, Any] = {"space": space, "content": first["content"], "kind": first["kind"]}
    if first["title"]:
        add["title"] = first["title"]
    for key in ("tags", "branches"):
        if first[key]:
            add[key] = first[key]
    add["importance"] = first["importance"]
    add["origin"] = _origin(line)
    if session is not None and "session" in line:
        add["session"] = session
    yield "memory.add", add
    if first["action"] == "delete":
        yield "memory.delete", {"id": memory, "revision": 1}
    for revision in later:
        if revision["action"] == "update":
            change = {k: revision[k] for k in ("content", "title", "kind", "tags")}
            change.update(importance=revision["importance"], branches=revision["branches"])
            yield "memory.update", {"id": memory, "revision": 1, **change}
        elif revision["action"] == "delete":
            yield "memory.delete", {"id": memory, "revision": 1}
        else:
            yield "memory.restore", {"id": memory}


def _origin(line: ImportLine) -> Any:
    """What the source said of the memory: a line's own ``origin`` as it is (an import of an
    import keeps the first source), else the exported memory's author, time and ID."""
    if "origin" in line:
        return line["origin"]
    out: dict[str, Any] = {"format": "venom", "id": line["id"]}
    author = line.get("author")
    if isinstance(author, dict):
        out["author"] = author.get("label") or author.get("principal")
    if "created" in line:
        out["created"] = line["created"]
    return out


class _Added(NamedTuple):
    id: str
    written: bool  # False: the first text is already a live memory of the space
    revision: int


def _add(conn: Connection, line: ImportLine, space: str, session: str | None) -> _Added:
    """Replay the memory's revisions but a last delete (the run deletes it after the links);
    when its first text is already a live memory of the space, that memory, left alone."""
    calls = list(_replay(line, space, "m1", session))
    if "deleted" in line and calls[-1][0] == "memory.delete":
        calls.pop()
    memory, revision = "", 0
    for verb, planned in calls:
        if verb == "memory.add":
            added = conn.call(verb, planned)
            if not added["changed"]:
                return _Added(added["id"], False, added["revision"])
            memory, revision = added["id"], added["revision"]
            continue
        call = {**planned, "id": memory}
        if "revision" in call:
            call["revision"] = revision
        answer = conn.call(verb, call)
        revision = answer.get("revision", revision)
    return _Added(memory, True, revision)
