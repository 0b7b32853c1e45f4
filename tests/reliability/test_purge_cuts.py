"""A purge cut between its commit and its checkpoint leaves its text in no file after the next
start (issue 13, item 1; RFC-0020 section 2). See purge_cut_harness.py for how each round
cuts; four worlds run side by side so the campaign fits in the suite's time."""

from __future__ import annotations

import concurrent.futures
from collections import Counter

from tests.reliability.purge_cut_harness import PurgeCutRun, run_rounds
from tests.reliability.support import record
from tests.support.daemon_env import make_world

WORLDS = 4
ROUNDS_PER_WORLD = 30
SEED = 20261201


def _campaign(seed: int) -> PurgeCutRun:
    with make_world() as world:
        return run_rounds(world, seed, ROUNDS_PER_WORLD)


def test_a_purge_cut_by_kill_9_leaves_no_text_after_the_next_start() -> None:
    with concurrent.futures.ThreadPoolExecutor(WORLDS) as pool:
        runs = list(pool.map(_campaign, [SEED + n for n in range(WORLDS)]))
    figures: Counter[str] = Counter()
    problems: list[str] = []
    for run in runs:
        figures.update(run.figures)
        problems.extend(run.problems)
    record(
        "reliability",
        "purge_cuts",
        purges_cut=figures["rounds"],
        with_a_reader=figures["rounds_reader"],
        without=figures["rounds_no_reader"],
        committed=figures["committed"],
        committed_with_a_reader=figures["committed_reader"],
        committed_without=figures["committed_no_reader"],
        committed_but_never_answered=figures["committed_unacknowledged"],
        acknowledged=figures["acknowledged"],
        not_committed=figures["not_committed"],
        with_text_left=figures["committed_with_text_left"],
    )
    assert figures["rounds"] == WORLDS * ROUNDS_PER_WORLD
    assert problems == []
    assert figures["committed_with_text_left"] == 0
    # The campaign must actually cut purges after their commit, or it shows nothing.
    assert figures["committed_unacknowledged"] >= WORLDS * ROUNDS_PER_WORLD // 3
