"""The venom-mem export format, version 1 (docs/adr/0039): one JSON object a line, a header
first, then memory, session, space, link and inactive space lines. What a line holds and how a
line read back is checked: the daemon writes the lines, the CLI's import checks them before it
writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import VenomError
from .records import InactiveSpace, Link, Memory, Session, SpaceDescription, Version
from .shapes import memory_id, origin_json, provenance_json, session_id, session_json

__all__ = [
    "FORMAT",
    "LINE_TYPES",
    "VERSION",
    "ImportLine",
    "check_line",
    "header_line",
    "inactive_space_line",
    "link_line",
    "memory_line",
    "session_line",
    "space_line",
]

FORMAT = "venom-mem-export"
VERSION = 1


def header_line(store: Mapping[str, Any], exported: str, by: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "store": dict(store),
        "exported": exported,
        "by": dict(by),
    }


def memory_line(memory: Memory, versions: Sequence[Version]) -> dict[str, Any]:
    """A memory with its kept revisions, oldest first."""
    out: dict[str, Any] = {
        "type": "memory",
        "id": memory_id(memory.id),
        "space": memory.space,
        "revision": memory.revision,
        "author": provenance_json(memory.author),
        "updated_by": provenance_json(memory.updated_by),
        "created": memory.created,
        "updated": memory.updated,
    }
    if memory.session is not None:
        out["session"] = session_id(memory.session)
    if memory.deleted is not None:
        out["deleted"] = memory.deleted
    if memory.origin is not None:
        out["origin"] = origin_json(memory.origin)
    out["revisions"] = [_revision(v) for v in sorted(versions, key=lambda v: v.revision)]
    return out


def _revision(v: Version) -> dict[str, Any]:
    return {
        "revision": v.revision,
        "action": v.action,
        "kind": v.kind,
        "title": v.title,
        "content": v.content,
        "tags": list(v.tags),
        "importance": v.importance,
        "branches": list(v.branches),
        "by": provenance_json(v.by),
        "ts": v.ts,
    }


def session_line(session: Session, chain: Sequence[Session]) -> dict[str, Any]:
    """A session, and its chain: its readable ancestors' IDs and its own, oldest first."""
    return {"type": "session", **session_json(session), "chain": [session_id(s.id) for s in chain]}


def space_line(description: SpaceDescription) -> dict[str, Any]:
    return {
        "type": "space",
        "space": description.space,
        "description": description.description,
        "by": provenance_json(description.by),
        "updated": description.updated,
    }


def link_line(link: Link) -> dict[str, Any]:
    """``from <relation> to``, kept after an unlink with who unlinked it when (docs/adr/0042)."""
    out: dict[str, Any] = {
        "type": "link",
        "from": memory_id(link.source),
        "to": memory_id(link.target),
        "relation": link.relation,
        "by": provenance_json(link.by),
        "created": link.created,
    }
    if link.removed is not None and link.removed_by is not None:
        out["unlinked"] = link.removed
        out["unlinked_by"] = provenance_json(link.removed_by)
    return out


def inactive_space_line(state: InactiveSpace) -> dict[str, Any]:
    return {
        "type": "inactive_space",
        "space": state.space,
        "by": provenance_json(state.by),
        "since": state.since,
    }


ImportLine = dict[str, Any]

_ACTIONS = ("add", "update", "delete", "restore")
# A line of a type added later names it (an older importer refuses the line, saying so), so
# the version stays 1 while every change is a new line type (docs/adr/0039).
LINE_TYPES = ("memory", "session", "space", "link", "inactive_space")


def check_line(line: bytes, number: int, *, first: bool) -> ImportLine:
    """The line parsed, or ``invalid_params.import_line`` (``invalid_params.import_format`` on
    a first line that is no version 1 header) naming the line number in ``data.line``."""
    import json

    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError) as error:
        raise _bad(number, f"is not JSON ({error})") from None
    if not isinstance(value, dict):
        raise _bad(number, "is not a JSON object")
    if first:
        if value.get("type") != "header" or value.get("format") != FORMAT:
            raise _bad(number, f"is not a {FORMAT} header", code="import_format")
        if value.get("version") != VERSION:
            raise VenomError(
                "invalid_params.import_version",
                f"line {number} names version {value.get('version')!r}; this venom-mem reads "
                f"{VERSION}",
                {"line": number},
            )
        return value
    kind = value.get("type")
    if kind == "memory":
        _check_memory(value, number)
    elif kind == "session":
        _need(value, number, ("session", "harness"), str)
        _id(value["session"], "s", number)
    elif kind == "space":
        _need(value, number, ("space", "description"), str)
    elif kind == "link":
        _need(value, number, ("from", "to", "relation"), str)
        _id(value["from"], "m", number)
        _id(value["to"], "m", number)
        if "unlinked" in value:
            _need(value, number, ("unlinked",), str)
    elif kind == "inactive_space":
        _need(value, number, ("space",), str)
    else:
        raise _bad(number, f"has type {kind!r}, not one of {', '.join(LINE_TYPES)}")
    return value


def _check_memory(value: Mapping[str, Any], number: int) -> None:
    _need(value, number, ("id", "space"), str)
    _id(value["id"], "m", number)
    if "session" in value:
        _need(value, number, ("session",), str)
        _id(value["session"], "s", number)
    if "origin" in value and not isinstance(value["origin"], dict):
        raise _bad(number, "has an origin that is not an object")
    revisions = value.get("revisions")
    if not isinstance(revisions, list) or not revisions:
        raise _bad(number, "has no revisions")
    for revision in revisions:
        if not isinstance(revision, dict):
            raise _bad(number, "has a revision that is not an object")
        _need(revision, number, ("kind", "title", "content"), str)
        if revision.get("action") not in _ACTIONS:
            raise _bad(number, f"has a revision whose action is {revision.get('action')!r}")
        for key in ("tags", "branches"):
            items = revision.get(key)
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise _bad(number, f"has a revision whose {key} are not strings")
        if not isinstance(revision.get("importance"), str):
            raise _bad(number, "has a revision without importance")


def _need(value: Mapping[str, Any], number: int, keys: Sequence[str], kind: type) -> None:
    for key in keys:
        if not isinstance(value.get(key), kind):
            raise _bad(number, f"has no {kind.__name__} {key}")


def _id(text: str, prefix: str, number: int) -> None:
    from .ids import id_number

    if id_number(text, prefix) is None:
        raise _bad(number, f"has {text!r} where an ID {prefix}<N> belongs")


def _bad(number: int, why: str, *, code: str = "import_line") -> VenomError:
    return VenomError(f"invalid_params.{code}", f"line {number} {why}", {"line": number})
