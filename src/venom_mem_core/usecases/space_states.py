"""Active and inactive spaces, as the reads and writes meet them (docs/adr/0042).

A space is active unless space.deactivate marked it. A read that names no space leaves the
inactive ones out; a read that names one is refused, ``conflict.space_inactive``; a write to
one (memory.add, memory.update, space.describe) activates it, in the write's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import VenomError
from ..ports import ReadTx, WriteTx

__all__ = ["activate_on_write", "inactive_left_out", "refuse_inactive"]


def refuse_inactive(tx: ReadTx, spaces: Iterable[str]) -> None:
    """``conflict.space_inactive`` for the first of ``spaces`` that is inactive."""
    inactive = tx.inactive_spaces()
    for space in spaces:
        if space in inactive:
            raise VenomError(
                "conflict.space_inactive",
                f"space {space} is inactive: space.activate it to read it",
                {"space": space, "fix": f"venom-mem space activate --space {space}"},
            )


def inactive_left_out(tx: ReadTx, spaces: Iterable[str] | None) -> frozenset[str]:
    """What a read leaves out: nothing when it names its spaces (each checked active),
    every inactive space when it names none."""
    if spaces is not None:
        refuse_inactive(tx, spaces)
        return frozenset()
    return frozenset(tx.inactive_spaces())


def activate_on_write(tx: WriteTx, space: str) -> bool:
    """Activate ``space`` if it is inactive; whether it was."""
    if space not in tx.inactive_spaces():
        return False
    tx.set_space_active(space)
    return True
