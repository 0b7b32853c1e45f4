"""FTS5 query syntax: the user's words as an FTS5 ``MATCH`` expression that is never syntax.

RFC-0020 section 5: each token becomes an FTS5 string (``"`` doubled) and the strings are
joined with ``OR``, so ``NEAR(``, ``AND``, ``*``, ``-b`` or ``title:x`` search for their words.
How a string becomes terms is FTS5's tokenizer, which :mod:`venom_mem_core.fts` mirrors.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["fts_match_expression"]


def fts_match_expression(tokens: Sequence[str]) -> str:
    """Each token an FTS5 string with ``"`` doubled, joined with OR."""
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)
