"""basic-memory's Markdown notes: a project directory (or one note) of ``*.md`` files, each
with YAML frontmatter (``title``, ``type``, ``permalink``, ``tags``), free text, observations
``- [category] text #tag`` and relations ``- relation_type [[Target]]``.

Each observation becomes a memory: its text as written, the note's title as title, its
category and #tags and the note's tags as tags, kind fact (decision, procedure or note when
the category is one of those). Each relation becomes a memory ``Title relation_type Target``
tagged ``relation``. A note with neither becomes one memory of its text. Origin is the note's
permalink (else its path) with the observation's line; the files hold no author and no time
(docs/adr/0040)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .lines import Entry, bad, memory_line, tag

__all__ = ["read"]

FORMAT = "basic-memory"
_OBSERVATION = re.compile(r"^\s*- \[(?P<category>[^\]]+)\]\s+(?P<text>\S.*)$")
_RELATION = re.compile(r"^\s*- (?P<relation>[^\s\[]+)\s+\[\[(?P<target>[^\]]+)\]\]")
_HASHTAG = re.compile(r"(?:^|\s)#([\w-]+)")
_KINDS = {"decision": "decision", "procedure": "procedure", "note": "note"}


def read(path: str) -> Iterator[Entry]:
    root = Path(path)
    if root.is_dir():
        notes = sorted(p for p in root.rglob("*.md") if p.is_file())
    elif root.is_file():
        notes = [root]
    else:
        raise bad(path, 0, "is neither a note nor a directory of notes", code="file")
    if not notes:
        raise bad(path, 0, "holds no Markdown notes", code="import_format")
    count = 0
    for note in notes:
        name = str(note.relative_to(root)) if root.is_dir() else note.name
        for number, line in _note(note, name, count):
            count += 1
            yield f"{name} line {number}", number, line


def _note(note: Path, name: str, count: int) -> Iterator[tuple[int, dict[str, object]]]:
    try:
        lines = note.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise bad(name, 1, f"can't be read as UTF-8 text ({error})") from None
    front, body_start = _frontmatter(lines, name)
    title = front.get("title") or note.stem
    note_tags = [tag(t) for t in _list(front.get("tags", ""))]
    ref = front.get("permalink") or name
    found = 0
    body: list[str] = []
    for number, text in enumerate(lines[body_start:], start=body_start + 1):
        observation, relation = _OBSERVATION.match(text), _RELATION.match(text)
        if observation is None and relation is None:
            body.append(text)
            continue
        found += 1
        origin = {"format": FORMAT, "id": f"{ref} line {number}"}
        if observation is not None:
            category = observation["category"].strip()
            words = observation["text"].strip()
            tags = [tag(category), *map(tag, _HASHTAG.findall(words)), *note_tags]
            kind = _KINDS.get(category.lower(), "fact")
            yield number, memory_line(count + found, words, origin=origin, title_text=title,
                                      kind=kind, tags=tags)  # fmt: skip
        elif relation is not None:
            words = f"{title} {relation['relation']} {relation['target']}"
            yield number, memory_line(count + found, words, origin=origin, title_text=title,
                                      kind="fact", tags=["relation", *note_tags])  # fmt: skip
    text = "\n".join(line for line in body if not line.startswith("## ")).strip()
    if not found and text:
        origin = {"format": FORMAT, "id": ref}
        yield body_start + 1, memory_line(count + 1, text, origin=origin, title_text=title,
                                          tags=note_tags)  # fmt: skip


def _frontmatter(lines: list[str], name: str) -> tuple[dict[str, str], int]:
    """The frontmatter's top-level ``key: value`` pairs (a list as its items joined by
    commas), and the first line after it."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    out: dict[str, str] = {}
    key = ""
    for number, text in enumerate(lines[1:], start=2):
        if text.strip() == "---":
            return out, number
        if text.startswith(("- ", "  - ")) and key:
            out[key] = ",".join(filter(None, (out.get(key, ""), text.split("- ", 1)[1].strip())))
        elif ":" in text and not text.startswith(" "):
            key, _, value = text.partition(":")
            key = key.strip()
            out[key] = value.strip().strip("'\"")
    raise bad(f"{name} line 1", 1, "opens frontmatter that never closes")


def _list(value: str) -> list[str]:
    return [v.strip().strip("'\"") for v in value.strip("[]").split(",") if v.strip()]
