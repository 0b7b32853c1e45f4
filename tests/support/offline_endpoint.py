"""Run :mod:`tests.support.scripted_model` for a real harness, with the network out of reach.

As root (the test machine), the endpoint is started in a new network namespace that holds
nothing but loopback, and each harness command is run in that namespace (``nsenter``): the
scripted endpoint is the only address the harness can reach, whatever it tries. Elsewhere
(no ``unshare``/``nsenter``/``ip``, or not root) it falls back to the host's loopback, and
the harness's environment names the endpoint as its HTTP(S) proxy so that any attempt to
leave is refused and recorded. In both cases the endpoint records every request, and every
proxy attempt, for the test to assert on.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import selectors
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from tests.support.scripted_model import Script

START_TIMEOUT_S = 20
LIFETIME_S = 600  # the endpoint stops itself even if a test never closes it


@functools.cache
def _namespace_tools() -> tuple[str, str, str] | None:
    """unshare, nsenter and ip, if this process may make a network namespace with them (as
    root, and where the container allows it)."""
    tools = tuple(shutil.which(name) or "" for name in ("unshare", "nsenter", "ip"))
    if os.geteuid() != 0 or not all(tools):
        return None
    try:
        probe = subprocess.run(
            [tools[0], "--net", tools[2], "link", "set", "lo", "up"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (tools[0], tools[1], tools[2]) if probe.returncode == 0 else None


@attrs.define
class Endpoint:
    port: int
    log: Path
    nsenter: list[str] | None  # the prefix that enters its network namespace, if it has one

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def isolated(self) -> bool:
        """In a network namespace of its own, with only loopback."""
        return self.nsenter is not None

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run where the endpoint is: inside its network namespace, if it has one."""
        return argv if self.nsenter is None else [*self.nsenter, *argv]

    @property
    def proxy_env(self) -> dict[str, str]:
        """Send anything meant for elsewhere to the endpoint, which refuses and records it."""
        proxy = self.url
        return {
            "HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "ALL_PROXY": proxy,
            "https_proxy": proxy, "http_proxy": proxy, "all_proxy": proxy,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        }  # fmt: skip

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def requests(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["kind"] == "request"]

    def outbound(self) -> list[dict[str, Any]]:
        """Every attempt to reach another host through the endpoint as a proxy."""
        return [r for r in self.records() if r["kind"] == "outbound"]


@contextlib.contextmanager
def offline_endpoint(script: Script, directory: Path, name: str) -> Iterator[Endpoint]:
    """A scripted model endpoint for one harness session; stopped on exit."""
    log = directory / f"{name}.requests.jsonl"
    argv = [
        sys.executable, "-m", "tests.support.scripted_model",
        "--script", script.to_json(), "--log", str(log), "--lifetime", str(LIFETIME_S),
    ]  # fmt: skip
    tools = _namespace_tools()
    if tools is not None:
        unshare, _, ip = tools
        # The new namespace's loopback starts down; bring it up, then become the server.
        argv = [unshare, "--net", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh", *argv]
    errors = directory / f"{name}.stderr"
    with errors.open("w") as stderr:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=str(Path(__file__).resolve().parents[2]),
            text=True,
        )
    try:
        line = _read_line(proc, START_TIMEOUT_S)
        assert line.strip().isdigit(), f"scripted endpoint did not start: {errors.read_text()}"
        enter = None if tools is None else [tools[1], f"--net=/proc/{proc.pid}/ns/net", "--"]
        yield Endpoint(int(line), log, enter)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()  # the endpoint stops when its stdin closes
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The endpoint's first line (its port), or "" if it didn't print one in time."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return ""
    return proc.stdout.readline()
