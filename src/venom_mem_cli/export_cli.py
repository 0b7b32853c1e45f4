"""``venom-mem export`` and ``venom-mem import`` (docs/adr/0039), run in the CLI's process.

Export pages through the daemon's ``store.export`` and writes each page's lines as it gets
them. Import checks a whole file first (every line parsed, every call it will make checked
against the manifest's params) and writes nothing when a line is bad; then it writes through
the daemon as the caller, sessions before memories, each in the source's order, and skips
what the store already holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import IO, Any

from venom_mem_adapters.client import Connection, connect
from venom_mem_core.errors import VenomError
from venom_mem_core.export_format import ImportLine, check_line
from venom_mem_core.ids import id_number
from venom_mem_core.manifest import MANIFEST
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


def _session_key(line: ImportLine) -> tuple[Any, ...]:
    fields = ("harness", "harness_session", "relation", "cwd")
    return (*(line.get(k) for k in fields), "ended" in line)


class _Held:
    """What the store already holds that the caller may read: the keys of its memories and
    sessions, with the sessions' IDs, read through the same export (hashes, not text)."""

    def __init__(self) -> None:
        self.memories: Counter[tuple[str, str, bool]] = Counter()
        self.sessions: defaultdict[tuple[Any, ...], list[str]] = defaultdict(list)

    @classmethod
    def read(cls, conn: Connection, space: str | None) -> _Held:
        held = cls()
        request = {"include_deleted": True, **({"spaces": [space]} if space else {})}
        for page in _pages(conn, request):
            for line in page["lines"]:
                if line["type"] == "memory":
                    held.memories[_memory_key(line, line["space"])] += 1
                elif line["type"] == "session":
                    held.sessions[_session_key(line)].append(line["session"])
        for ids in held.sessions.values():
            ids.sort(key=lambda s: id_number(s, "s") or 0)
        return held


class _Plan:
    """A checked file: where each session and memory line starts, in the source's order."""

    def __init__(self, path: str, space: str | None) -> None:
        self.path = path
        self.space = space
        self.sessions: list[tuple[int, int, int]] = []  # (id, line number, offset)
        self.memories: list[tuple[int, int, int]] = []
        self.spaces: list[tuple[int, int]] = []
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
        try:
            source = open(path, "rb")  # noqa: SIM115  # closed below, read line by line
        except OSError as error:
            raise VenomError.param("file", "files", f"{path}: {error.strerror}") from None
        with source:
            offset, number = 0, 0
            for number, raw in enumerate(source, start=1):
                line = check_line(raw, number, first=number == 1)
                plan._note(line, number, offset, sessions)
                offset += len(raw)
            if number == 0:
                raise VenomError("invalid_params.import_format", f"{path} is empty", {"line": 1})
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
        counts: Counter[str] = Counter()
        would: list[dict[str, Any]] = []
        sessions: dict[str, str] = {}
        with open(self.path if self.held is None else os.devnull, "rb") as source:
            for _, number, offset in self.sessions:
                line = self._line(source, offset)
                key = _session_key(line)
                if held.sessions.get(key):
                    sessions[line["session"]] = held.sessions[key].pop(0)
                    counts["sessions_skipped"] += 1
                    continue
                counts["sessions"] += 1
                if dry_run:
                    would.append({"line": number, "session": line["session"]})
                    sessions[line["session"]] = line["session"]
                    continue
                sessions[line["session"]] = _start(conn, line, sessions)
            for _, number, offset in self.memories:
                line = self._line(source, offset)
                space = self.space or line["space"]
                key = _memory_key(line, space)
                if held.memories[key] > 0:
                    held.memories[key] -= 1
                    counts["skipped"] += 1
                    continue
                if dry_run:
                    counts["memories"] += 1
                    would.append(
                        {
                            "line": number,
                            "memory": line["origin"]["id"] if self.held else line["id"],
                            "space": space,
                            "revisions": len(line["revisions"]),
                            **({"content": line["revisions"][-1]["content"]} if self.held else {}),
                        }
                    )
                    continue
                if _add(conn, line, space, sessions.get(line.get("session", ""))):
                    counts["memories"] += 1
                else:
                    counts["skipped"] += 1
            for number, offset in self.spaces:
                line = self._line(source, offset)
                if dry_run:
                    would.append({"line": number, "space": line["space"]})
                    counts["spaces"] += 1
                elif conn.call("space.describe", _describe(line))["changed"]:
                    counts["spaces"] += 1
                else:
                    counts["spaces_skipped"] += 1
        out: dict[str, Any] = {"file": self.path, **{k: counts[k] for k in _COUNTS}}
        if dry_run:
            out["dry_run"] = True
            out["would_write"] = would
        return out


_COUNTS = ("memories", "skipped", "sessions", "sessions_skipped", "spaces", "spaces_skipped")


def _number(text: str) -> int:
    return id_number(text, text[0]) or 0


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


def _add(conn: Connection, line: ImportLine, space: str, session: str | None) -> bool:
    """Replay the memory's revisions; False when its first text is already a live memory of
    the space (that memory is left alone)."""
    memory, revision = "", 0
    deleted = False
    for verb, planned in _replay(line, space, "m1", session):
        if verb == "memory.add":
            added = conn.call(verb, planned)
            if not added["changed"]:
                return False
            memory, revision = added["id"], added["revision"]
            continue
        call = {**planned, "id": memory}
        if "revision" in call:
            call["revision"] = revision
        answer = conn.call(verb, call)
        revision = answer.get("revision", revision)
        deleted = verb == "memory.delete"
    if "deleted" in line and not deleted:
        conn.call("memory.delete", {"id": memory, "revision": revision})
    return True
