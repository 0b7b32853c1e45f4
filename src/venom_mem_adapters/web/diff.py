"""A diff between two revisions of a memory, as plain data for a template to escape and draw.

Lines are compared with :class:`difflib.SequenceMatcher`; a changed line that has one
counterpart is compared again word by word, so a one-line memory shows the words that changed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = ["DiffLine", "FieldChange", "RevisionDiff", "diff_revisions"]

_WORDS = re.compile(r"\s+|[^\s]+")


@attrs.frozen
class DiffLine:
    """``op`` is ``same``, ``del`` or ``add``; ``parts`` are ``(changed, text)`` pieces."""

    op: str
    parts: tuple[tuple[bool, str], ...]


@attrs.frozen
class FieldChange:
    name: str
    old: str
    new: str


@attrs.frozen
class RevisionDiff:
    old: int
    new: int
    fields: tuple[FieldChange, ...]
    lines: tuple[DiffLine, ...]

    @property
    def same(self) -> bool:
        return not self.fields and all(line.op == "same" for line in self.lines)


def _field_text(version: Mapping[str, Any], name: str) -> str:
    value = version.get(name)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, Mapping):
        return str(value.get("label") or value.get("principal") or "")
    return "" if value is None else str(value)


def _word_pair(old: str, new: str) -> tuple[DiffLine, DiffLine]:
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    removed: list[tuple[bool, str]] = []
    added: list[tuple[bool, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            removed.append((False, "".join(a[i1:i2])))
            added.append((False, "".join(b[j1:j2])))
            continue
        if i2 > i1:
            removed.append((True, "".join(a[i1:i2])))
        if j2 > j1:
            added.append((True, "".join(b[j1:j2])))
    return DiffLine("del", tuple(removed)), DiffLine("add", tuple(added))


def _lines(old: Sequence[str], new: Sequence[str]) -> list[DiffLine]:
    out: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.extend(DiffLine("same", ((False, line),)) for line in old[i1:i2])
        elif op == "replace" and i2 - i1 == j2 - j1:
            for a, b in zip(old[i1:i2], new[j1:j2], strict=True):
                out.extend(_word_pair(a, b))
        else:
            out.extend(DiffLine("del", ((True, line),)) for line in old[i1:i2])
            out.extend(DiffLine("add", ((True, line),)) for line in new[j1:j2])
    return out


def diff_revisions(old: Mapping[str, Any], new: Mapping[str, Any]) -> RevisionDiff:
    """Two ``memory.get --revision`` results, older first."""
    fields = tuple(
        FieldChange(name, _field_text(old, name), _field_text(new, name))
        for name in ("title", "kind", "tags", "updated_by")
        if _field_text(old, name) != _field_text(new, name)
    )
    lines = _lines(
        str(old.get("content", "")).splitlines(), str(new.get("content", "")).splitlines()
    )
    return RevisionDiff(
        old=int(old.get("revision", 0)),
        new=int(new.get("revision", 0)),
        fields=fields,
        lines=tuple(lines),
    )
