"""What Codex itself says of the hooks it would run, through its app server's ``hooks/list``
(ADR 0044): each hook's key, the hash of its content, and whether the person trusted it.

Codex 0.171 runs a user hook only once trusted, and keeps the trust in ``config.toml`` as
``[hooks.state."<hooks.json path>:session_start:<group>:<handler>"] trusted_hash = ...``;
the hash is Codex's to compute, so setup asks Codex for it rather than computing it itself.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from venom_mem_core.errors import VenomError

__all__ = ["listed_hooks", "our_hook"]

ANSWER_TIMEOUT_S = 30.0
_REQUESTS = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"clientInfo": {"name": "venom-mem-setup", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "initialized"},
]  # fmt: skip


def listed_hooks(binary: str, environ: Mapping[str, str]) -> list[dict[str, Any]]:
    """Codex's ``hooks/list`` for the person's HOME; ``failed.harness`` when it doesn't
    answer in ANSWER_TIMEOUT_S."""
    cwd = environ.get("HOME") or os.getcwd()
    ask = {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}}
    try:
        proc = subprocess.Popen(
            [binary, "app-server"],
            env=dict(environ),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError as error:
        raise VenomError("failed.harness", f"{binary} app-server: {error}") from error
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in [*_REQUESTS, ask]))
        proc.stdin.flush()  # stdin stays open: the app server stops when it closes
        answer = _answer(proc.stdout, 2)
    finally:
        proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    if answer is None or "result" not in answer:
        raise VenomError("failed.harness", f"{binary} app-server gave no hooks/list answer")
    return [hook for entry in answer["result"]["data"] for hook in entry.get("hooks", [])]


def _answer(stdout: Any, request_id: int) -> dict[str, Any] | None:
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    buffered = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                break
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                break
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == request_id:
                    return message
    return None


def our_hook(hooks: list[dict[str, Any]], command: str, source: Path) -> dict[str, Any] | None:
    """The session-start hook setup installed, as Codex lists it (key, currentHash,
    trustStatus): the one in ``source`` that runs ``command``."""
    for hook in hooks:
        if hook.get("command") == command and hook.get("sourcePath") == str(source):
            return hook
    return None
