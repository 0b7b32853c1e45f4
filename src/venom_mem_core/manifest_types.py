"""The shape of the verb manifest (RFC-0004): verbs, params, types, results, errors, rights.

Plain frozen dataclasses with no dependencies, so the CLI's ``--json`` path can read the
manifest without importing anything heavy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ErrorDoc", "Field", "Manifest", "Param", "Type", "Verb"]


@dataclass(frozen=True, slots=True)
class Type:
    """A JSON value's type: ``string``, ``integer``, ``number``, ``boolean``, ``array``,
    ``object`` or ``any``, with the constraints the dispatch enforces."""

    kind: str
    items: Type | None = None
    choices: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None
    max_items: int | None = None
    fields: tuple[Field, ...] = ()
    nullable: bool = False
    open: bool = False  # an object whose members are not enumerated


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    summary: str
    type: Type
    required: bool = False


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    summary: str
    type: Type
    required: bool = False
    default: Any = None

    @property
    def flag(self) -> str:
        """The CLI flag: ``harness_session`` is ``--harness-session``."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True, slots=True)
class ErrorDoc:
    code: str
    summary: str


@dataclass(frozen=True, slots=True)
class Verb:
    """One verb. ``right`` is what dispatch checks (``None``: anyone, e.g. ``hello``).
    ``resource`` is what it is checked on: the name of a param holding it (``space``, ``id``,
    ``session``), or a fixed resource (``*``, ``session:*``). With none, rows are filtered
    per caller instead. Admin verbs are always checked on ``*``.

    ``starts_daemon``: a CLI call may launch a missing daemon (RFC-0020 section 8).
    ``local``: runs in the CLI process, not on the daemon (``serve``, ``mcp``).
    ``streams``: the CLI may keep printing (``events --follow``).
    """

    name: str
    summary: str
    params: tuple[Param, ...] = ()
    result: Type = field(default_factory=lambda: Type("object", open=True))
    errors: tuple[ErrorDoc, ...] = ()
    right: str | None = "read"
    resource: str | None = None
    starts_daemon: bool = False
    local: bool = False
    examples: tuple[dict[str, Any], ...] = ()

    @property
    def noun(self) -> str | None:
        return self.name.split(".", 1)[0] if "." in self.name else None

    @property
    def action(self) -> str:
        return self.name.split(".", 1)[-1]

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True, slots=True)
class Manifest:
    format: int
    tool: str
    summary: str
    verbs: tuple[Verb, ...]

    def verb(self, name: str) -> Verb | None:
        for v in self.verbs:
            if v.name == name:
                return v
        return None

    @property
    def nouns(self) -> list[str]:
        seen: dict[str, None] = {}
        for v in self.verbs:
            if v.noun:
                seen.setdefault(v.noun)
        return list(seen)
