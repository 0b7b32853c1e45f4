"""The audit log's file: an entry after a line a crash tore still reads back (ADR 0009)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from venom_mem_adapters.daemon.ops.audit import _append, read_entries


def _line(principal: str) -> str:
    return json.dumps({"type": "principal.issued", "principal": principal}) + "\n"


def test_an_entry_after_a_torn_line_stands_on_its_own(tmp_path: Path) -> None:
    path = tmp_path / "store.db.audit.jsonl"
    _append(path, [_line("g1")])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "principal.iss')  # the crash cut this one short
    _append(path, [_line("g2"), _line("g3")])
    assert [e["principal"] for e in read_entries(path, 10)] == ["g1", "g2", "g3"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_appends_to_an_intact_file_add_no_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _append(path, [_line("g1")])
    _append(path, [_line("g2")])
    assert path.read_text(encoding="utf-8").count("\n") == 2
