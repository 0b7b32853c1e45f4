"""What both SQL stores do alike above their transactions: closing on ``with``'s exit, and
finishing at the next serve an erase a purge left pending (RFC-0020 section 2)."""

from __future__ import annotations

from abc import abstractmethod
from contextlib import AbstractContextManager

from venom_mem_core.ports import ERASE_PENDING

from ..closing import ClosesOnExit
from ._tx import SqlReadTx

__all__ = ["SqlStore"]


class SqlStore(ClosesOnExit):
    """A base for SqliteStore and PostgresStore; each supplies the abstract methods."""

    @abstractmethod
    def _check_open(self) -> None:
        """``failed.internal`` once the store is closed."""

    @abstractmethod
    def read(self) -> AbstractContextManager[SqlReadTx]: ...

    @abstractmethod
    def erase_traces(self) -> None: ...

    def erase_pending_traces(self) -> None:
        """Finish the erase a busy or cut purge left undone (RFC-0020 section 2: at the next
        serve); nothing when none is pending, so a store is otherwise left as it is."""
        self._check_open()
        if self.erase_pending():
            self.erase_traces()

    def erase_pending(self) -> bool:
        """Whether a purge's text may still be in the store's files (doctor and the daemon
        ask): the :data:`ERASE_PENDING` mark, set in the purge's own transaction."""
        with self.read() as tx:
            return tx.get_meta(ERASE_PENDING) is not None
