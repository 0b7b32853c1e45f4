"""The memory line a peer's record becomes, and the small conversions every reader shares."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from venom_mem_core.errors import VenomError
from venom_mem_core.export_format import ImportLine
from venom_mem_core.grammar import KINDS

__all__ = ["Entry", "Reader", "bad", "cut", "memory_line", "tag", "title"]

# (where, line number, memory line): ``where`` names the place in the source for an error.
Entry = tuple[str, int, ImportLine]
Reader = Callable[[str], Iterator[Entry]]

_NOT_TAG = re.compile(r"[^a-z0-9-]+")


def tag(text: str) -> str | None:
    """A source's tag, type or category as a venom tag (``[a-z0-9][a-z0-9-]{0,63}``), or
    None when nothing of it is left."""
    found = _NOT_TAG.sub("-", text.lower()).strip("-")[:64].rstrip("-")
    return found or None


def cut(text: str, size: int) -> str:
    """One line of at most ``size`` UTF-8 bytes, cut on a character boundary."""
    flat = " ".join(text.split())
    return flat.encode("utf-8")[:size].decode("utf-8", "ignore")


def title(text: str) -> str:
    """A title as the title grammar takes it: one line of at most 200 bytes."""
    return cut(text, 200)


def memory_line(
    number: int,
    content: str,
    *,
    origin: dict[str, str],
    title_text: str = "",
    kind: str = "note",
    tags: list[str | None] | tuple[str | None, ...] = (),
) -> ImportLine:
    """A venom memory line of one revision: ``number`` orders it (``m<number>``)."""
    unique = list(dict.fromkeys(t for t in tags if t))[:16]
    revision: dict[str, Any] = {
        "revision": 1,
        "action": "add",
        "kind": kind if kind in KINDS else "note",
        "title": title(title_text),
        "content": content,
        "tags": unique,
        "importance": "normal",
        "branches": [],
    }
    return {
        "type": "memory",
        "id": f"m{number}",
        "space": "",  # the plan's target space stands in
        "origin": {k: cut(v, 512 if k == "id" else 256) for k, v in origin.items() if v},
        "revisions": [revision],
    }


def bad(where: str, number: int, why: str, *, code: str = "import_line") -> VenomError:
    return VenomError(f"invalid_params.{code}", f"{where} {why}", {"line": number})
