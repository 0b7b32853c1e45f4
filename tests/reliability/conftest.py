"""The reliability suite: figures printed at the end, and the long soak variants.

Long variants are marked ``slow`` and skipped unless asked for, with ``--run-slow`` when
pytest is pointed at this directory (``pytest tests/reliability --run-slow``), or with
``VENOM_MEM_RUN_SLOW=1`` from anywhere (a plain ``pytest`` from the repository root loads
this conftest too late to register a command-line option). ``bench/soak.py`` runs the same
harnesses for longer still.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.support import print_figures

SUITE = "reliability"
_BASETEMP: list[Path] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="run the long soak variants of the reliability tests",
    )


def run_slow(config: pytest.Config) -> bool:
    return bool(config.getoption("--run-slow", default=False)) or (
        os.environ.get("VENOM_MEM_RUN_SLOW") == "1"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if run_slow(config):
        return
    skip = pytest.mark.skip(reason="soak variant: --run-slow or VENOM_MEM_RUN_SLOW=1")
    for item in items:
        if "slow" in item.keywords and f"/{SUITE}/" in str(item.path):
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _figures_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    _BASETEMP.append(tmp_path_factory.getbasetemp())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    print_figures(terminalreporter, SUITE, _BASETEMP[0] if _BASETEMP else None)
