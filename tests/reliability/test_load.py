"""Load: 8 CLI processes, 4 socket clients and 2 MCP adapters (the official SDK's stdio
client), each its own durable client, in a mixed workload on one daemon for a bounded time.

What must hold (RFC-0020 section 8, "Concurrent writers are concurrent clients"): no lost
update (every acknowledged revision is in memory.history, made by the client it was
acknowledged to), no "database is locked" or busy error reaching a client, and the daemon's
resident memory bounded.
"""

from __future__ import annotations

import pytest

from tests.reliability.load_harness import LoadRun, run_load
from tests.reliability.support import record
from tests.support.daemon_env import make_world

SECONDS = 20
SLOW_SECONDS = 180
RSS_GROWTH_LIMIT_KIB = 64 * 1024


def report(name: str, run: LoadRun) -> None:
    record(
        "reliability",
        name,
        seconds=round(run.seconds, 1),
        clients=len(run.actors),
        requests=run.requests(),
        cli_requests=run.requests("cli"),
        socket_requests=run.requests("socket"),
        mcp_requests=run.requests("mcp"),
        acknowledged_changes=run.acknowledged,
        revision_conflicts=run.conflicts,
        history_entries_checked=run.history_checked,
        lost_updates=len(run.lost),
        busy_or_locked_errors=len(run.forbidden),
        daemon_rss_kib_before=run.rss_before_kib,
        daemon_rss_kib_peak=run.rss_peak_kib,
        daemon_rss_kib_after=run.rss_after_kib,
    )


def check(run: LoadRun) -> None:
    assert run.forbidden == []
    assert run.lost == []
    for kind in ("cli", "socket", "mcp"):
        assert run.requests(kind) > 0, f"no {kind} request ran"
    assert run.conflicts > 0, "the shared memories were never contended"
    growth = run.rss_peak_kib - run.rss_before_kib
    assert growth < RSS_GROWTH_LIMIT_KIB, f"daemon RSS grew by {growth} KiB"


def test_mixed_load_loses_no_update_and_never_reports_busy() -> None:
    with make_world() as world:
        run = run_load(world, seconds=SECONDS)
    report("load_mixed_clients", run)
    check(run)


@pytest.mark.slow
def test_soak_mixed_load() -> None:
    with make_world() as world:
        run = run_load(world, seconds=SLOW_SECONDS)
    report("load_mixed_clients_soak", run)
    check(run)
