"""The security suite prints its figures (inputs tried, matrix cells) at the end of the run,
beside the reliability suite's (tests/reliability/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.support import print_figures

SUITE = "security"
_BASETEMP: list[Path] = []


@pytest.fixture(scope="session", autouse=True)
def _security_figures_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    _BASETEMP.append(tmp_path_factory.getbasetemp())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    print_figures(terminalreporter, SUITE, _BASETEMP[0] if _BASETEMP else None)
