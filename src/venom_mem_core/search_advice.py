"""Which search settings the retrieval bench measured better than RFC-0020's, per model.

A store ranks as RFC-0020 section 5 says until its owner chooses otherwise (docs/adr/0032).
doctor names the setting to try when the configured ``embeddings.model`` is one that
``make bench-retrieval`` measured (docs/search.md has the tables); for any other model it
says nothing beyond the active settings, because the bench found the better fusion depends
on the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

__all__ = ["ADVICE", "Advice", "advice_for", "model_key"]


@attrs.frozen(kw_only=True)
class Advice:
    """For the models named ``names`` (compared as :func:`model_key` makes them), the
    ``search`` keys to set and what the bench measured with them."""

    names: tuple[str, ...]
    measured: str
    settings: tuple[tuple[str, str], ...]
    why: str

    def missing(self, current: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """The advised settings that ``current`` (key -> value) doesn't have yet."""
        return tuple((k, v) for k, v in self.settings if current.get(k) != v)


ADVICE: tuple[Advice, ...] = (
    Advice(
        names=("all-minilm-l6-v2", "all-minilm", "all-minilm-latest", "all-minilm-l6"),
        measured="all-MiniLM-L6-v2",
        settings=(("search.fusion", "convex"), ("search.query_mode", "natural")),
        why=(
            "LoCoMo R@5 59.4 % against 49.5 % for RFC-0020's default and 56.7 % for natural"
            " full text, at or above full text in every category"
        ),
    ),
    Advice(
        names=("multilingual-e5-small", "multilingual-e5-small-q4"),
        measured="multilingual-e5-small (4-bit)",
        settings=(("search.fusion", "convex"), ("search.query_mode", "natural")),
        why=(
            "LoCoMo R@5 57.9 % against 47.7 % for RFC-0020's default and 56.7 % for natural"
            " full text, 1.5 points below full text on adversarial questions"
        ),
    ),
)

_ORG = re.compile(r"^.*/")
_SEPARATORS = re.compile(r"[\s:_]+")


def model_key(model: str) -> str:
    """``sentence-transformers/all-MiniLM-L6-v2`` and Ollama's ``all-minilm:l6-v2`` alike
    become ``all-minilm-l6-v2``: lower case, no organisation, ``:`` and ``_`` as ``-``."""
    return _SEPARATORS.sub("-", _ORG.sub("", model.strip().casefold()))


def advice_for(model: str) -> Advice | None:
    """The bench's advice for ``model``, or ``None`` for a model it did not measure."""
    key = model_key(model)
    return next((a for a in ADVICE if key in a.names), None)
