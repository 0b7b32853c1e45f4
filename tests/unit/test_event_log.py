"""The daemon's event log: sequence, retention, and reading after a cursor."""

from __future__ import annotations

from venom_mem_adapters.daemon.event_log import EventLog
from venom_mem_core.clock import FixedClock


def test_after_returns_exactly_the_newer_events_oldest_first() -> None:
    log = EventLog(FixedClock(), retention=5)
    for n in range(1, 9):
        log.emit("memory.added", "space:user", {"memory": f"m{n}"})
    assert log.last_seq == 8
    assert [e["seq"] for e in log.after(0)] == [4, 5, 6, 7, 8]  # only what is retained
    assert [e["seq"] for e in log.after(5)] == [6, 7, 8]
    assert log.after(8) == []
    assert log.after(99) == []
    assert [e["seq"] for e in log.after(-3)] == [4, 5, 6, 7, 8]
    assert {e["source"] for e in log.after(0)} == {log.source}
