"""The reliability suite: figures printed at the end of the run.

Its long soak variants are marked ``slow`` and run with ``--run-slow`` or
``VENOM_MEM_RUN_SLOW=1`` (tests/conftest.py); ``bench/soak.py`` runs the same harnesses for
longer still.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.support import print_figures

SUITE = "reliability"
_BASETEMP: list[Path] = []


@pytest.fixture(scope="session", autouse=True)
def _figures_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    _BASETEMP.append(tmp_path_factory.getbasetemp())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    print_figures(terminalreporter, SUITE, _BASETEMP[0] if _BASETEMP else None)
