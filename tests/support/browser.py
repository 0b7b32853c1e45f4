"""Headless Chromium from Debian's package, driven by Playwright (the PyPI package's bundled
driver). Nothing downloads a browser: the system one is launched by path, with a fresh
profile, and the flags that keep it from reaching the network on its own."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--no-sandbox",  # root in a container: Chromium's sandbox needs user namespaces
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _skip(reason: str) -> None:
    print(f"skipping browser tests: {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def chromium_context() -> Iterator[Any]:
    """A Playwright browser context on the system Chromium, or a skip saying why not."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _skip("the playwright package is not installed (pip install -e '.[dev]')")
    if shutil.which(CHROMIUM) is None:
        _skip(f"{CHROMIUM} is missing (scripts/test-deps.sh installs Debian's chromium)")
    profile = tempfile.mkdtemp(prefix="vm-chromium-")
    try:
        with sync_playwright() as playwright:
            try:
                context = playwright.chromium.launch_persistent_context(
                    profile,
                    executable_path=CHROMIUM,
                    headless=True,
                    args=list(FLAGS),
                    viewport={"width": 1280, "height": 900},
                )
            except Error as error:
                _skip(f"{CHROMIUM} would not start: {error.message.splitlines()[0]}")
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
