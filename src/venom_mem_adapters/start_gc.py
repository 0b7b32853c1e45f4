"""No cyclic garbage collection while a process starts (docs/adr/0038).

A daemon's or a relay's start is mostly imports: modules, classes and the manifest's
objects, made once and kept for the whole process. The collector, run every 700
allocations, walks them again and again and finds nothing to free; on a cold ``venom-mem
mcp`` that was several percent of the CPU to the first result. :func:`pause` stops it at
the entry point; :func:`resume`, once the process serves, moves what the start made to
the permanent generation (so no later collection walks it) and starts it again.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused: set[str] = set()  # "start" while this module paused the collector


def pause() -> None:
    if gc.isenabled():
        gc.disable()
        _paused.add("start")


def resume() -> None:
    """Collect as usual from here on; only undoes :func:`pause` (a test's process, or one
    that never paused, keeps its collector as it was)."""
    if _paused:
        _paused.clear()
        gc.freeze()
        gc.enable()
