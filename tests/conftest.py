"""Options for the whole suite: ``--run-slow`` (or ``VENOM_MEM_RUN_SLOW=1``) runs the tests
marked ``slow``, the long soak variants, which are skipped otherwise. Registered here, at the
root of the tests, so the option works from the repository root as well as from any folder."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="run the tests marked slow (the long soak variants)",
    )


def run_slow(config: pytest.Config) -> bool:
    return bool(config.getoption("--run-slow")) or os.environ.get("VENOM_MEM_RUN_SLOW") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if run_slow(config):
        return
    skip = pytest.mark.skip(reason="soak variant: --run-slow or VENOM_MEM_RUN_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
