"""The adapter's front door: ``initialize``, ``tools/list`` and ``ping`` answered from the
manifest while the official SDK loads in the background (ADR 0020).

A harness such as ``codex exec`` sends its first model request without waiting for a slow
MCP server, and ``import mcp`` alone takes about a second. So the adapter reads the first
messages itself, answers the three that need nothing but the manifest, and hands the stream
to the SDK at the first message it can't answer (a tool call, or anything unfamiliar). At
the handover the SDK is sent the harness's own ``initialize`` and ``initialized`` again, so
its session is in the state the harness believes it is in; the SDK's second answer to
``initialize`` is dropped, never written. From then on every message goes to the SDK.

The answers are the SDK's own: the same protocol negotiation (tests compare them with the
SDK's), and the tool JSON the SDK itself serves later (:meth:`.tools.ToolSpec.to_json`).

Standard library only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing costs the relay's start milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, BinaryIO

__all__ = [
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "FrontDoor",
    "Handover",
    "initialize_result",
]

# As mcp_types.version has them (a test keeps the two in step).
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_INITIALIZE_FAILED = -32000


def initialize_result(params: Any, *, name: str, version: str, instructions: str) -> dict[str, Any]:
    """What the SDK answers to ``initialize``: the client's protocol version when it is one
    of ours, else the newest handshake version."""
    requested = params.get("protocolVersion") if isinstance(params, Mapping) else None
    negotiated = (
        requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else HANDSHAKE_PROTOCOL_VERSIONS[-1]
    )
    return {
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": instructions,
        "protocolVersion": negotiated,
        "serverInfo": {"name": name, "version": version},
    }


class Handover:
    """What the SDK gets: the lines to read before the rest of stdin, and the id of the
    replayed ``initialize`` whose answer must not be written."""

    def __init__(self, lines: list[bytes], initialize_id: Any) -> None:
        self.lines = lines
        self.initialize_id = initialize_id


class FrontDoor:
    """Reads JSON-RPC lines from ``reader`` and answers what it can on ``writer``.

    ``check_initialize`` runs once, at ``initialize``: a message there fails the handshake
    (an error answer, then :meth:`run` returns ``None`` and the adapter exits).
    """

    def __init__(
        self,
        reader: BinaryIO,
        writer: BinaryIO,
        *,
        tools: list[dict[str, Any]],
        server_name: str,
        server_version: str,
        instructions: str,
        check_initialize: Callable[[], str | None],
        write_lock: threading.Lock,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._tools = tools
        self._name = server_name
        self._version = server_version
        self._instructions = instructions
        self._check_initialize = check_initialize
        self._lock = write_lock
        self._replay: list[bytes] = []
        self._initialize_id: Any = None
        self.failed = False

    def run(self) -> Handover | None:
        """Answer until a message needs the SDK (returns the handover) or stdin ends or the
        handshake failed (``None``)."""
        while True:
            line = self._reader.readline()
            if not line:
                return None
            if not line.strip():
                continue
            answered = self._answer(line)
            if self.failed:
                return None
            if not answered:
                return Handover([*self._replay, line], self._initialize_id)

    def _answer(self, line: bytes) -> bool:
        """``True`` when the front door dealt with the message itself."""
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        method = message.get("method")
        has_id = "id" in message and message["id"] is not None
        initialized = self._initialize_id is not None
        if method == "initialize" and has_id and not initialized:
            return self._initialize(message, line)
        if method == "notifications/initialized" and not has_id and initialized:
            self._replay.append(line)
            return True
        if method == "tools/list" and has_id and initialized:
            params = message.get("params")
            if isinstance(params, Mapping) and params.get("cursor") is not None:
                return False  # one page: a cursor is for the SDK to refuse
            self._reply(message["id"], {"tools": self._tools})
            return True
        if method == "ping" and has_id:
            self._reply(message["id"], {})
            return True
        return False

    def _initialize(self, message: dict[str, Any], line: bytes) -> bool:
        params = message.get("params")
        if not isinstance(params, Mapping) or not isinstance(params.get("protocolVersion"), str):
            return False  # malformed: the SDK says how
        refusal = self._check_initialize()
        if refusal is not None:
            self._write(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": _INITIALIZE_FAILED, "message": refusal},
                }
            )
            self.failed = True
            return True
        self._initialize_id = message["id"]
        self._replay.append(line)
        self._reply(
            message["id"],
            initialize_result(
                params, name=self._name, version=self._version, instructions=self._instructions
            ),
        )
        return True

    def _reply(self, request_id: Any, result: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._lock:
            self._writer.write(data + b"\n")
            self._writer.flush()
