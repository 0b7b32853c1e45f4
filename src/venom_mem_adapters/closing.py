"""``with resource:`` closes it: the one ``__enter__``/``__exit__`` pair of the adapters'
resources (the stores, a daemon connection, the store lock), each supplying ``close``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType

TYPE_CHECKING = False  # typing costs the --json path milliseconds (client/_client.py); mypy sees it
if TYPE_CHECKING:
    from typing import Self

__all__ = ["ClosesOnExit"]


class ClosesOnExit(ABC):
    """A context manager that is its own value and calls :meth:`close` on the way out,
    whether the block ended cleanly or raised (the exception goes on)."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
