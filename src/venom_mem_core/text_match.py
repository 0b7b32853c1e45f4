"""Which memory an ``old_text`` names, for memory.replace and memory.forget (ADR 0043).

The peer design's rule (dsh-mnemon-storage-model, Operations): the normalized full content
first, then a unique substring; zero matches, several full matches or an ambiguous substring
are refused with the candidates' IDs and nothing is guessed. Normalizing is Unicode NFC and
whitespace: runs of whitespace count as one space and the ends are trimmed, since agents
re-type text with other line breaks and spacing. Case is kept: ``Use pnpm`` and ``use
PNPM`` may be different facts, and a mutation must not be fuzzier than the text says.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Literal

import attrs

from .errors import VenomError
from .records import Memory
from .shapes import memory_id

__all__ = ["MAX_CANDIDATES", "TextMatch", "match_text", "normalize_text"]

# A refusal names this many candidates at most, and says how many there were.
MAX_CANDIDATES = 20


def normalize_text(text: str) -> str:
    """NFC, whitespace runs as one space, no whitespace at the ends."""
    return " ".join(unicodedata.normalize("NFC", text).split())


@attrs.frozen(kw_only=True)
class TextMatch:
    memory: Memory
    match: Literal["exact", "substring"]


def match_text(memories: Iterable[Memory], old_text: str, space: str) -> TextMatch:
    """The one memory of ``memories`` (a space's live ones) that ``old_text`` names."""
    wanted = normalize_text(old_text)
    if not wanted:
        raise VenomError.param("old_text", "old_text", "old_text has no text but whitespace")
    exact: list[Memory] = []
    inside: list[Memory] = []
    for memory in memories:
        content = normalize_text(memory.content)
        if content == wanted:
            exact.append(memory)
        elif wanted in content:
            inside.append(memory)
    if len(exact) == 1:
        return TextMatch(memory=exact[0], match="exact")
    if exact:
        raise _ambiguous("exact", exact, space)
    if len(inside) == 1:
        return TextMatch(memory=inside[0], match="substring")
    if inside:
        raise _ambiguous("substring", inside, space)
    raise VenomError(
        "not_found.memory_text",
        f"no live memory of {space} you can read holds this text",
        {"space": space},
    )


def _ambiguous(match: str, found: list[Memory], space: str) -> VenomError:
    ids = [memory_id(memory.id) for memory in sorted(found, key=lambda m: m.id)]
    what = "have this exact text" if match == "exact" else "contain this text"
    return VenomError(
        "conflict.memory_text_ambiguous",
        f"{len(ids)} memories of {space} {what}: {', '.join(ids[:MAX_CANDIDATES])}"
        + ("…" if len(ids) > MAX_CANDIDATES else "")
        + "; name one by ID with memory.update or memory.delete, or quote more of its text",
        {"match": match, "candidates": ids[:MAX_CANDIDATES], "count": len(ids)},
    )
