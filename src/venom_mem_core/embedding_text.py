"""The text a memory is embedded as (RFC-0020 section 5).

The worker "embeds title, two newlines and content, cut at a UTF-8 boundary to
``embeddings.max_input_bytes``". A memory with no title has no title to embed (section 2: the
title is absent when empty), so its input is the content alone, with no leading blank lines:
two newlines with nothing before them would only move the vector, not add meaning.
"""

from __future__ import annotations

from .ranking import cut_utf8

__all__ = ["TITLE_SEPARATOR", "embedding_input"]

TITLE_SEPARATOR = "\n\n"


def embedding_input(title: str, content: str, max_bytes: int) -> str:
    """``title + "\\n\\n" + content`` (just ``content`` when the title is empty), cut to at most
    ``max_bytes`` of UTF-8 without splitting a character."""
    text = f"{title}{TITLE_SEPARATOR}{content}" if title else content
    return cut_utf8(text, max_bytes)
