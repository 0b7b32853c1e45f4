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


def test_the_newest_relayed_events_are_known_as_relayed() -> None:
    log = EventLog(FixedClock(), retention=3)
    for n in range(1, 7):
        log.emit("memory.added", "space:user", {"memory": f"m{n}"}, relayed=n % 2 == 0)
    assert [log.is_relayed(seq) for seq in range(1, 7)] == [False, True] * 3
    for n in range(7, 12):
        log.emit("memory.added", "space:user", {"memory": f"m{n}"}, relayed=True)
    assert [seq for seq in range(1, 12) if log.is_relayed(seq)] == [9, 10, 11]
