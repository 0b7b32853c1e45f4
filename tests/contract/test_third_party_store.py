"""A third party's view of the contract suite, run as one would run it: pytest in a fresh
process on a test module of its own. docs/store-contract.md's snippet runs as written; the
plain store passes all but the FTS5-exact cases, which skip; and those cases are needed: the
plain store fails exactly them when it claims the capability it lacks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "store-contract.md"
# The cases that pin SQLite FTS5's own stemming, order or scores (RanksLikeFts5).
FTS5_EXACT = {
    "test_search_stems_and_folds",
    "test_search_orders_as_fts5_bm25",
    "test_scores_are_fts5_bm25_to_the_last_bit",
    "test_natural_queries_rank_presence_over_shortness",
}
# Cases that run on every store and check FTS5's order besides, on a store that claims it.
FTS5_EXTRA = {
    "test_search_filters_narrow_without_reordering",
    "test_search_ranks_as_if_only_readable_rows_existed",
}


def run_pytest(tmp_path: Path, module: str, *args: str) -> dict[str, str]:
    """Each case's outcome (passed, failed, skipped) from pytest run on ``module``."""
    (tmp_path / "test_module.py").write_text(module)
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    report = tmp_path / "report.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(tmp_path / "pytest.ini"),
            f"--junitxml={report}",
            *args,
            str(tmp_path / "test_module.py"),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        name = case.attrib["name"].split("[")[0]
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        outcome = "failed" if kinds & {"failure", "error"} else kinds.pop() if kinds else "passed"
        if outcomes.get(name) != "failed":  # a parametrized case fails if any of it fails
            outcomes[name] = outcome
    return outcomes


def test_the_guides_snippet_runs(tmp_path: Path) -> None:
    """A few cases of each kind: the whole suite runs on the in-memory store elsewhere."""
    (snippet, *_) = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    cases = ["test_is_a_store", "test_section_1_transcript", *sorted(FTS5_EXACT)]
    outcomes = run_pytest(tmp_path, snippet, "-k", " or ".join(cases))
    assert outcomes == dict.fromkeys(cases, "passed")


PLAIN = """
import pytest

from tests.contract.plain_store import PlainStore
from venom_mem_core.testing import {mixins}, opened_stores


class Claiming(PlainStore):
    ranks_like_fts5 = True


class TestPlain({mixins}):
    @pytest.fixture
    def store_factory(self):
        with opened_stores({store}) as factory:
            yield factory
"""


def test_the_plain_store_skips_exactly_the_fts5_cases(tmp_path: Path) -> None:
    """Unclaimed, they skip (test_plain_store.py runs the rest); claimed, they fail, with the
    two cases that check FTS5's order besides, and every other case passes."""
    mixins = "SearchContract, PortContract"
    for store, outcome in (("PlainStore", "skipped"), ("Claiming", "failed")):
        outcomes = run_pytest(tmp_path, PLAIN.format(mixins=mixins, store=store))
        expected = FTS5_EXACT | FTS5_EXTRA if store == "Claiming" else FTS5_EXACT
        assert {name for name, got in outcomes.items() if got != "passed"} == expected
        assert {outcomes[name] for name in expected} == {outcome}
        assert len(outcomes) > 20
