"""Power loss (RFC-0020 section 6: "an ok then means the memory survives power loss as well
as a crash").

The store runs with its real connection settings on :class:`FaultyVFS`, which keeps every
write since the last fsync in a volatile cache, and the power is cut at a random write,
truncate or fsync (or between requests) in each round: the unsynced writes are lost, all of
them or a random subset. After each cut the store is reopened cold and checked: every
acknowledged memory is there with its content, revision and deleted state, the one request
the cut failed is all there or not at all, and ``PRAGMA integrity_check`` and FTS5's
integrity-check pass.

The same harness with ``synchronous = NORMAL`` loses acknowledged commits at the first cut,
which shows the check can fail.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.power_harness import PowerLossRun
from tests.reliability.support import record
from tests.support.faulty_vfs import FaultyVFS
from venom_mem_adapters.sqlite import connection

ROUNDS = 60
SLOW_ROUNDS = 400
_names = itertools.count()


@pytest.fixture
def vfs() -> Iterator[FaultyVFS]:
    shim = FaultyVFS(f"power-{next(_names)}", seed=20261109)
    try:
        yield shim
    finally:
        shim.unregister()


def run(
    tmp_path: Path, vfs: FaultyVFS, rounds: int, seed: int, full_check_every: int = 1
) -> PowerLossRun:
    harness = PowerLossRun(
        tmp_path / "store" / "store.db", vfs, random.Random(seed), full_check_every=full_check_every
    )
    for _ in range(rounds):
        harness.round()
    harness.final_check()
    return harness


def report(name: str, harness: PowerLossRun, vfs: FaultyVFS) -> None:
    figures = harness.figures
    acknowledged = sum(v for k, v in figures.items() if k.startswith("acknowledged_"))
    record(
        "reliability",
        name,
        rounds=figures["rounds"],
        acknowledged_requests=acknowledged,
        acknowledged_adds=figures["acknowledged_add"],
        acknowledged_purges_with_checkpoint=figures["acknowledged_purge"],
        power_cuts=vfs.stats["power_cuts"],
        cuts_at_write=vfs.stats["cut_during_write"],
        cuts_at_fsync=vfs.stats["cut_during_sync"],
        cuts_at_truncate=vfs.stats["cut_during_truncate"],
        cuts_between_requests=figures["cuts_between_requests"],
        unsynced_writes_lost=vfs.stats["changes_lost"],
        unsynced_writes_kept_at_random=vfs.stats["changes_kept_at_cut"],
        inflight_applied=figures["inflight_found_applied"],
        inflight_absent=figures["inflight_found_absent"],
        requests_cut_during_purge_checkpoint=figures["cut_during_purge"],
        memory_checks=figures["memory_checks"],
        losses=len(harness.losses),
    )


def test_every_acknowledged_memory_survives_power_cuts(tmp_path: Path, vfs: FaultyVFS) -> None:
    harness = run(tmp_path, vfs, ROUNDS, seed=1)
    report("power_loss_synchronous_full", harness, vfs)
    assert harness.losses == []
    assert vfs.stats["power_cuts"] == ROUNDS
    assert harness.figures["acknowledged_add"] > 200
    assert vfs.stats["cut_during_sync"] > 0
    assert vfs.stats["cut_during_write"] > 0
    assert vfs.stats["cut_during_truncate"] > 0
    assert vfs.stats["changes_lost"] > 0  # the cuts did throw unsynced writes away


@pytest.mark.slow
def test_soak_every_acknowledged_memory_survives_power_cuts(tmp_path: Path, vfs: FaultyVFS) -> None:
    harness = run(tmp_path, vfs, SLOW_ROUNDS, seed=2, full_check_every=20)
    report("power_loss_synchronous_full_soak", harness, vfs)
    assert harness.losses == []


def test_synchronous_normal_would_lose_acknowledged_memories(
    tmp_path: Path, vfs: FaultyVFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same harness catches the loss when the store doesn't fsync each
    commit. With WAL and synchronous = NORMAL a commit is acknowledged before its frames
    reach the disk, so the first cut takes every commit since the last checkpoint."""
    normal = tuple(
        ("synchronous", "NORMAL") if name == "synchronous" else (name, value)
        for name, value in connection.CONNECTION_PRAGMAS
    )
    monkeypatch.setattr(connection, "CONNECTION_PRAGMAS", normal)
    harness = PowerLossRun(tmp_path / "store" / "store.db", vfs, random.Random(3))
    rounds = 0
    while not harness.losses and rounds < 10:
        harness.round()
        rounds += 1
    monkeypatch.undo()
    report("power_loss_synchronous_normal_control", harness, vfs)
    lost = [line for line in harness.losses if "acknowledged" in line]
    record("reliability", "power_loss_synchronous_normal_control", acknowledged_lost=len(lost))
    assert lost, "synchronous=NORMAL should have lost acknowledged memories"
