"""An MCP server process driven over its stdio line by line, as a harness drives it, with
no SDK in between: raw JSON-RPC messages, the times they took, the process itself at hand
(its pid for /proc, a signal). The benches and the tests that watch processes use it; the
tests of a session's behaviour use the SDK's own client (mcp_stdio.py)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "venom-mem-tests", "version": "1"}},
}  # fmt: skip


class McpProcess:
    """One server process: ``argv`` run with ``env`` in ``cwd``, stderr dropped."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
        self.began = time.monotonic()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            cwd=cwd,
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self._next = 1

    def send(self, message: Mapping[str, Any]) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        """The answer to ``request_id``, skipping anything else the server says first."""
        while True:
            line = self.stdout.readline()
            if not line:
                raise RuntimeError(f"the server ended before answering request {request_id}")
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        request_id, self._next = self._next, self._next + 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.send(message)
        return self.answer(request_id)

    def start(self) -> tuple[float, float, dict[str, Any]]:
        """Initialize and list: the seconds from the spawn to each answer, and the listing."""
        self.send(INITIALIZE)
        initialized = self.answer(0)
        if "result" not in initialized:
            raise RuntimeError(f"initialize failed: {initialized}")
        took = time.monotonic() - self.began
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listing = self.request("tools/list")
        return took, time.monotonic() - self.began, listing

    def call(self, tool: str, arguments: Mapping[str, Any]) -> tuple[bool, Any]:
        """A tool's outcome as a caller sees it: error or not, and its one text's JSON."""
        answer = self.request("tools/call", {"name": tool, "arguments": dict(arguments)})
        result = answer["result"]
        return bool(result.get("isError")), json.loads(result["content"][0]["text"])

    def close(self) -> None:
        """The end of its input; killed if it hasn't exited 10 s later."""
        self.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stdout.close()
