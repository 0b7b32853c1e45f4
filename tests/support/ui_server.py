"""``venom-mem ui`` as a person runs it: a real subprocess on loopback, against a test world's
daemon, with the one URL it printed parsed into its parts."""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import attrs
import httpx

from tests.support.daemon_env import VENOM_MEM, World

URL_RE = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)$")


@attrs.define
class UI:
    url: str
    port: int
    secret: str
    proc: subprocess.Popen[str]
    log: Path

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cookie_name(self) -> str:
        return f"venom_mem_ui_{self.port}"

    @contextlib.contextmanager
    def client(self, *, signed_in: bool = True) -> Iterator[httpx.Client]:
        """An HTTP client for this page; signed in the way a browser is, through the URL."""
        with httpx.Client(base_url=self.origin, timeout=30, follow_redirects=False) as client:
            if signed_in:
                reply = client.get(self.url)
                assert reply.status_code == 303, reply.text
                assert client.cookies.get(self.cookie_name) == self.secret
            yield client

    def csrf(self, client: httpx.Client) -> str:
        page = client.get("/").text
        match = re.search(r'name="csrf" value="([0-9a-f]+)"|"X-CSRF-Token": "([0-9a-f]+)"', page)
        assert match, page
        return match.group(1) or match.group(2)

    def output(self) -> str:
        return self.log.read_text()


@contextlib.contextmanager
def run_ui(world: World, token: str | None = None, timeout: float = 30) -> Iterator[UI]:
    env = world.environ(token)
    if token is None:
        env.pop("VENOM_MEM_TOKEN", None)
    log = world.root / f"ui-{time.monotonic_ns()}.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [VENOM_MEM, "ui"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    assert proc.stdout is not None
    try:
        line = _first_line(proc, timeout)
        match = URL_RE.match(line)
        assert match, f"unexpected first line {line!r}; stderr: {log.read_text()}"
        secret = parse_qs(urlsplit(line).query)["token"][0]
        yield UI(url=line, port=int(match.group(1)), secret=secret, proc=proc, log=log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        rest = proc.stdout.read()
        proc.stdout.close()
        with log.open("a") as out:
            out.write(rest)


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise AssertionError(f"venom-mem ui printed nothing within {timeout} s")
    line = proc.stdout.readline().strip()
    if not line:
        raise AssertionError(f"venom-mem ui exited with {proc.wait(5)} before printing a URL")
    return line


def env_without_token(world: World) -> dict[str, str]:
    env = dict(world.env)
    env.pop("VENOM_MEM_TOKEN", None)
    return {
        k: v for k, v in env.items() if k in os.environ or k.startswith(("XDG", "VENOM", "HOME"))
    }
