"""A psycopg connection that waits for the server a bounded time (docs/adr/0030).

``statement_timeout`` is the server's: it can't end a wait for a server that no longer gets
our bytes, or whose replies no longer reach us (a partition, a stalled link, a host gone
without a FIN), and libpq waits for a reply forever. :class:`AnsweringConnection` gives every
exchange with the server (a statement, a pipeline's sync, a COMMIT) at most
``answer_within`` seconds; past that the connection is closed and :class:`NoAnswer` raised,
a lost connection to everything above (errors.py), so the caller gets ``unavailable.store``
within the verb's budget and the pool replaces the connection. Python's own work between
exchanges (a search's snippets) is not counted: only waiting for the server is.
"""

from __future__ import annotations

from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg
from psycopg.abc import PQGen

__all__ = ["ANSWER_WITHIN_S", "AnsweringConnection", "NoAnswer"]

RV = TypeVar("RV")
# Above the server's statement_timeout (store.py), so a slow statement is the server's
# 57014 first; below a read's 10 s budget.
ANSWER_WITHIN_S = 8.0


class NoAnswer(psycopg.OperationalError):
    """The server did not answer within the connection's ``answer_within``."""


class AnsweringConnection(psycopg.Connection[tuple[Any, ...]]):
    answer_within: float = ANSWER_WITHIN_S

    def wait(self, gen: PQGen[RV], interval: float = 0.1, timeout: float | None = None) -> RV:
        if timeout is not None:  # the caller's own (notifies): its timeout is no failure
            return super().wait(gen, interval, timeout)
        try:
            return super().wait(gen, interval, self.answer_within)
        except pg._WaitTimeout:  # psycopg's own signal that its timeout ran out
            self.pgconn.finish()  # mid-exchange: nothing more can be read from it
            raise NoAnswer(f"the server did not answer within {self.answer_within:g} s") from None
