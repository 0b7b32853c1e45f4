"""The web page's pure helpers: the revision diff, the writes chart, which controls to show,
and the guard's secret and CSRF token."""

from __future__ import annotations

import datetime as dt

from venom_mem_adapters.web.chart import count_writes, writes_chart
from venom_mem_adapters.web.daemon import ui_token
from venom_mem_adapters.web.diff import diff_revisions
from venom_mem_adapters.web.guard import Secret, check_csrf
from venom_mem_adapters.web.rights import Rights

G1 = {"principal": "g1", "label": "claude-code"}
G2 = {"principal": "g2", "label": "codex"}


def _version(revision: int, content: str, **extra: object) -> dict[str, object]:
    return {"revision": revision, "content": content, "kind": "note", "tags": [], **extra}


def test_a_one_line_change_is_diffed_word_by_word() -> None:
    diff = diff_revisions(
        _version(1, "pins Zig with .zigversion", updated_by=G1),
        _version(2, "pins Zig 0.17 with .zigversion", updated_by=G2),
    )
    assert [line.op for line in diff.lines] == ["del", "add"]
    added = diff.lines[1].parts
    assert [text for changed, text in added if changed] == ["0.17 "]
    assert "".join(text for _, text in added) == "pins Zig 0.17 with .zigversion"
    assert [(f.name, f.old, f.new) for f in diff.fields] == [("updated_by", "claude-code", "codex")]
    assert not diff.same


def test_added_and_kept_lines_and_field_changes() -> None:
    diff = diff_revisions(
        _version(1, "a\nb", title="T", tags=["x"]), _version(3, "a\nb\nc", title="U", tags=["x"])
    )
    assert [(line.op, line.parts) for line in diff.lines] == [
        ("same", ((False, "a"),)),
        ("same", ((False, "b"),)),
        ("add", ((True, "c"),)),
    ]
    assert [f.name for f in diff.fields] == ["title"]
    assert diff_revisions(_version(1, "x"), _version(2, "x")).same


def test_the_chart_counts_creations_and_latest_changes_per_day_and_principal() -> None:
    memories = [
        {"created": "2026-11-30T10:00:00.000Z", "updated": "2026-12-01T09:00:00.000Z",
         "revision": 2, "author": G1, "updated_by": G2},
        {"created": "2026-12-01T10:00:00.000Z", "updated": "2026-12-01T10:00:00.000Z",
         "revision": 1, "author": G1, "updated_by": G1},
        {"created": "2026-01-01T10:00:00.000Z", "updated": "2026-01-01T10:00:00.000Z",
         "revision": 1, "author": {"principal": "owner"}, "updated_by": {"principal": "owner"}},
    ]  # fmt: skip
    counts = count_writes(memories)
    assert counts == {
        ("2026-11-30", "claude-code"): 1,
        ("2026-12-01", "codex"): 1,
        ("2026-12-01", "claude-code"): 1,
        ("2026-01-01", "owner"): 1,
    }
    chart = writes_chart(counts, dt.date(2026, 12, 1), days=14)
    assert [(s.who, s.total) for s in chart.series] == [("claude-code", 2), ("codex", 1)]
    assert chart.peak == 2
    assert len(chart.bars) == 3  # the owner's January write is outside the fortnight
    assert {bar.title for bar in chart.bars} == {
        "2026-11-30: 1 by claude-code", "2026-12-01: 1 by claude-code", "2026-12-01: 1 by codex"
    }  # fmt: skip
    assert all(bar.y + bar.height <= chart.baseline + 0.01 for bar in chart.bars)
    assert writes_chart(count_writes([]), dt.date(2026, 12, 1)).bars == ()


def test_rights_decide_which_controls_to_draw() -> None:
    memory = {"id": "m3", "space": "project/x", "author": G1}
    reader = Rights.from_whoami({"principal": "g3", "grants": [{"right": "read", "scope": "*"}]})
    assert not reader.admin
    assert not reader.may_write_memory(memory)
    own = Rights.from_whoami({"principal": "g1", "grants": [{"right": "write", "scope": "self"}]})
    assert own.may_write_memory(memory)
    assert not own.may_write_memory({**memory, "author": G2})
    space = Rights.from_whoami(
        {"principal": "g2", "grants": [{"right": "write", "scope": "space:project/x"}]}
    )
    assert space.may_write_memory(memory)
    assert not space.may_write_memory({**memory, "space": "user"})
    owner = Rights.from_whoami({"principal": "owner", "label": "owner", "grants": []})
    assert owner.admin
    assert owner.name == "owner"


def test_the_token_is_the_persons_choice_and_owner_by_default() -> None:
    assert ui_token({}) == "@owner"
    assert ui_token({"VENOM_MEM_TOKEN": ""}) == ""  # set and empty: unknown, as everywhere
    assert ui_token({"VENOM_MEM_TOKEN": "vnt1.x"}) == "vnt1.x"


def test_secrets_are_fresh_and_the_csrf_token_is_not_the_secret() -> None:
    a, b = Secret.fresh(8000), Secret.fresh(8000)
    assert a.value != b.value
    assert len(a.value) >= 43
    assert a.csrf != a.value
    assert a.value not in a.csrf
    assert a.url == f"http://127.0.0.1:8000/?token={a.value}"
    assert a.cookie_name == "venom_mem_ui_8000"
    assert check_csrf(a, a.csrf, None)
    assert check_csrf(a, None, a.csrf)
    assert not check_csrf(a, b.csrf, None)
    assert not check_csrf(a, None, None)
    assert not check_csrf(a, "", a.csrf)  # an empty form field is a wrong token, not absent
    assert a.matches(a.value)
    assert not a.matches(b.value)
    assert not a.matches(None)
