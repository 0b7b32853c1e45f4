"""CPU seconds (user + system) that processes used, read from /proc (issue 24's load figures).

Wall-clock throughput on a shared 2-core machine moves with everyone else's load; the CPU an
operation costs does not, so the load bench divides these by its operation count. A process
tree's figure is its own time, its live descendants' and what its exited children left in
its ``cutime``/``cstime`` (a PostgreSQL server reaps its backends, so a backend that ended
during the window still counts).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["process_tree_cpu_s", "processes_cpu_s"]

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone since it was listed
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    return text[text.rindex(")") + 2 :].split()


def _cpu_s(fields: list[str], *, children: bool) -> float:
    # After the name: state is index 0, so utime (field 14) is index 11, cutime index 13.
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks * _TICK_S


def processes_cpu_s(pids: Iterable[int]) -> float:
    """The CPU seconds these processes have used so far, each its own time only."""
    total = 0.0
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            total += _cpu_s(fields, children=False)
    return total


def process_tree_cpu_s(root: int) -> float:
    """The CPU seconds ``root`` and every process below it have used, the reaped ones too."""
    parents: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            stats[int(entry.name)] = fields
            parents[int(entry.name)] = int(fields[1])
    total = 0.0
    for pid, fields in stats.items():
        ancestor = pid
        while ancestor not in (root, 0, 1) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == root:
            total += _cpu_s(fields, children=pid == root)
    return total
