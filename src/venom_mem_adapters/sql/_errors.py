"""A driver's errors, raised in a block, as VenomErrors: how both SQL stores translate."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from venom_mem_core.errors import VenomError

__all__ = ["translating"]

_E = TypeVar("_E", bound=Exception)


@contextmanager
def translating(
    driver_error: type[_E], convert: Callable[[_E, str], VenomError], where: str
) -> Iterator[None]:
    """Run a block, turning any ``driver_error`` into ``convert(error, where)`` (chained)."""
    try:
        yield
    except driver_error as exc:
        raise convert(exc, where) from exc
