"""What runs after a commit runs in commit order, when several writers commit at once.

A store that runs write transactions on several threads (PostgreSQL, docs/adr/0031) commits
them concurrently, but what a use case does after its commit (append its events, whose
``seq`` orders them within a source; update the principal registry) must keep the order of
the commits, as it did behind one writer: two updates of one memory must not reach the event
log as revision 3, then 2.

So each commit of a writer job takes a *ticket* just before COMMIT is sent, and once it is
committed waits for its *turn*: every earlier ticket released. The thread then holds its
turn while the job goes on, and releases it when the job ends (or at its next write).
Tickets follow the order in which COMMITs were sent, which is the commit order of any two
transactions that touched the same rows: the later one could only reach its COMMIT after
the earlier one's locks were let go at its commit, which came after its ticket. A commit
that fails releases its ticket at once (nothing follows it). A thread holding its turn holds
no database lock and no connection, and a transaction never waits for a turn before its
commit, so a turn can't deadlock with the locks.

A write outside a job (the embedding worker's vectors, a start-up sweep) takes no ticket:
nothing after it needs ordering, and no job end would release it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["CommitOrder"]


class CommitOrder:
    """Tickets before COMMIT, turns after it. Thread-safe; one per store."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._next = 0  # the next ticket to hand out
        self._head = 0  # the lowest ticket not yet released
        self._released: set[int] = set()  # released tickets above the head
        self._thread = threading.local()  # in_job: bool; held: int | None

    @contextmanager
    def job(self) -> Iterator[None]:
        """One writer job: its commits take tickets, and its last turn ends with it."""
        self._thread.in_job = True
        try:
            yield
        finally:
            self._thread.in_job = False
            self.end_turn()

    def end_turn(self) -> None:
        """Release the turn this thread holds, if any (the next write of a job does this)."""
        held = getattr(self._thread, "held", None)
        if held is not None:
            self._thread.held = None
            self._release(held)

    def take(self) -> int | None:
        """Just before COMMIT is sent: this commit's ticket, or ``None`` outside a job."""
        if not getattr(self._thread, "in_job", False):
            return None
        with self._changed:
            ticket = self._next
            self._next += 1
        return ticket

    def give_back(self, ticket: int) -> None:
        """The commit failed: nothing follows it, so later turns need not wait for it."""
        self._release(ticket)

    def wait_turn(self, ticket: int) -> None:
        """The commit succeeded: wait until every earlier ticket is released, then hold the
        turn until :meth:`end_turn` (called at the job's end or its next write)."""
        with self._changed:
            self._changed.wait_for(lambda: self._head == ticket)
        self._thread.held = ticket

    def _release(self, ticket: int) -> None:
        with self._changed:
            self._released.add(ticket)
            while self._head in self._released:
                self._released.remove(self._head)
                self._head += 1
            self._changed.notify_all()
