"""What the embedding service knows about its own work, for doctor (daemon/ops/doctor.py).

A record with no behaviour, so doctor names it without importing the service (the package's
``__init__`` brings numpy and httpx: name it under ``TYPE_CHECKING`` only).
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["EmbeddingFacts"]


class EmbeddingFacts(TypedDict, total=False):
    """What the embeddings worker knows, for doctor. Every key is optional.

    ``last_error``: the latest call's failure message, or ``None`` if it succeeded.
    ``last_ok``: when a call last succeeded. ``pending_over_hour``: live memories that have
    waited over an hour for a vector. ``vectors``: stored vectors.
    """

    last_error: str | None
    last_ok: str | None
    pending_over_hour: int
    vectors: int
