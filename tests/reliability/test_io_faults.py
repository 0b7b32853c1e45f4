"""I/O faults: the Nth ``xWrite`` or ``xSync`` of the store fails, under a daemon serving a
real unix socket (built as the composition root builds it, with the store on the shim VFS).

What must hold (RFC-0020 section 8, "Corruption is failed.store"; the daemon's write latch):

- the request that hit the fault gets ``failed.store`` naming the store path, and was never
  acknowledged;
- the daemon then refuses every write with ``failed.store`` without touching the store (no
  retry of an fsync that may have lied: the shim forgets the unsynced writes when a sync
  fails, as Linux does), while reads, on old and new connections, go on;
- after a restart, clean (the page cache survives) or after a power cut on top (it doesn't),
  the store passes its integrity checks, every acknowledged memory is there, the failed one
  is absent or complete, and writes work again.

The scenario is tests/reliability/fault_harness.py; the cases are drawn from a fixed seed.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.fault_harness import Kind, run_fault_case
from tests.reliability.support import record
from tests.support.faulty_vfs import FaultyVFS

SEED = 20261109
_names = itertools.count()


def cases(count: int, seed: int = SEED) -> list[tuple[Kind, int, str]]:
    """``count`` cases per kind: the fault at a random write (of about 30 per add) or fsync
    (one per add), restarts alternating clean and power-cut."""
    rng = random.Random(seed)
    drawn: list[tuple[Kind, int, str]] = []
    kinds: tuple[tuple[Kind, int], ...] = (("write", 160), ("sync", 6))
    for kind, top in kinds:
        for i in range(count):
            drawn.append((kind, rng.randint(1, top), ("clean", "power-cut")[i % 2]))
    return drawn


CASES = cases(6)


@pytest.fixture
def vfs() -> Iterator[FaultyVFS]:
    shim = FaultyVFS(f"faults-{next(_names)}", seed=SEED)
    try:
        yield shim
    finally:
        shim.unregister()


@pytest.mark.parametrize(
    ("kind", "nth", "restart"), CASES, ids=[f"{k}-{n}-{r}" for k, n, r in CASES]
)
def test_a_failed_write_or_fsync_stops_writes_until_restart(
    tmp_path: Path, vfs: FaultyVFS, kind: Kind, nth: int, restart: str
) -> None:
    figures = run_fault_case(tmp_path, vfs, kind, nth, restart)
    record("reliability", "io_faults", cases=1, **figures)
