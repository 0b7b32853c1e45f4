"""A scripted model endpoint on 127.0.0.1 for real harness binaries: no account, no network.

It speaks just enough of two wire APIs for a harness to run one agent turn against it:

- the Anthropic Messages API (``POST /v1/messages``, streamed as SSE or not), for Claude
  Code with ``ANTHROPIC_BASE_URL`` pointing here;
- the OpenAI Responses API (``POST /v1/responses``, streamed as SSE), for Codex with a
  ``[model_providers.*]`` entry whose ``base_url`` points here.

Its script is one tool call: when a request offers a tool whose name ends with the scripted
suffix (a harness prefixes MCP tools with its server's name, e.g.
``mcp__venom-mem__memory_dadd``), the model calls it with the scripted arguments; when the
request carries that call's result, it answers with the scripted text and ends the turn.
Every other request (a harness's side requests: titles, quota checks) gets a plain text
answer. It records every request, and every attempt to leave through it as an HTTP proxy
(``CONNECT`` or an absolute URL), which it refuses.

It runs as a process of its own (``python -m tests.support.scripted_model``), so that a test
can put it, and the harness with it, in a network namespace with nothing but loopback. It
prints its port on stdout, appends each request to a JSON-lines log, and stops itself when
its stdin closes or its lifetime passes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs

__all__ = ["Script", "find_tool", "main", "tool_result_texts"]

_ids = itertools.count(1)
_SECRET = re.compile(r"auth|key|token")  # headers not to write to the record


@attrs.frozen
class Script:
    """What the model does: call the tool ending with ``tool_suffix``, then say ``answer``."""

    tool_suffix: str
    arguments: dict[str, Any]
    answer: str

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Script:
        return cls(**json.loads(text))


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for inner in value.values():
            yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner)


def find_tool(body: Any, suffix: str) -> tuple[str | None, str] | None:
    """The offered tool whose name ends with ``suffix``, as (namespace, name): Claude Code
    offers MCP tools flat (``mcp__venom-mem__memory_dadd``), Codex inside a namespace tool
    (``{"type": "namespace", "name": "mcp__venom_mem", "tools": [...]}``)."""
    tools = body.get("tools", []) if isinstance(body, dict) else []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        inner = tool.get("tools") if tool.get("type") == "namespace" else [tool]
        for entry in inner if isinstance(inner, list) else []:
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str) and (name == suffix or name.endswith("__" + suffix)):
                return (tool["name"] if entry is not tool else None), name
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        str(part.get("text", "")) for part in _walk(content) if isinstance(part.get("text"), str)
    )


def tool_result_texts(body: Any) -> dict[str, str]:
    """The tool results a request carries back to the model, by call id, as text
    (Anthropic ``tool_result`` blocks and OpenAI ``function_call_output`` items)."""
    found: dict[str, str] = {}
    for item in _walk(body):
        if item.get("type") == "tool_result" and isinstance(item.get("tool_use_id"), str):
            found[item["tool_use_id"]] = _text_of(item.get("content", ""))
        elif item.get("type") == "function_call_output" and isinstance(item.get("call_id"), str):
            found[item["call_id"]] = _text_of(item.get("output", ""))
    return found


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class _Model:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.call_id = {"anthropic": "toolu_scripted_1", "openai": "call_scripted_1"}

    def decide(self, api: str, body: Any) -> tuple[str, tuple[str | None, str] | None]:
        """("tool", (namespace, name)) to call the tool, ("answer", None) once its result
        is back, or ("text", None) for a request that doesn't offer it."""
        tool = find_tool(body, self.script.tool_suffix)
        if tool is None:
            return "text", None
        if self.call_id[api] in tool_result_texts(body):
            return "answer", None
        return "tool", tool

    # -- Anthropic Messages ---------------------------------------------------------------

    def anthropic(self, body: dict[str, Any]) -> tuple[str, bytes]:
        kind, tool = self.decide("anthropic", body)
        model = str(body.get("model", "scripted"))
        if tool is not None:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": self.call_id["anthropic"],
                "name": tool[1],
                "input": self.script.arguments,
            }
            stop = "tool_use"
        else:
            text = self.script.answer if kind == "answer" else "Scripted reply."
            block, stop = {"type": "text", "text": text}, "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        if not body.get("stream"):
            message = {
                "id": f"msg_{next(_ids)}", "type": "message", "role": "assistant",
                "model": model, "content": [block], "stop_reason": stop,
                "stop_sequence": None, "usage": usage,
            }  # fmt: skip
            return "application/json", json.dumps(message).encode()
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": {
                "id": f"msg_{next(_ids)}", "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            }},
            {"type": "content_block_start", "index": 0, "content_block": start},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": 5}},
            {"type": "message_stop"},
        ]  # fmt: skip
        return "text/event-stream", _sse(events)

    # -- OpenAI Responses -----------------------------------------------------------------

    def openai(self, body: dict[str, Any]) -> tuple[str, bytes]:
        kind, tool = self.decide("openai", body)
        response_id = f"resp_{next(_ids)}"
        if tool is not None:
            namespace, name = tool
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{next(_ids)}",
                "call_id": self.call_id["openai"],
                "name": name,
                "arguments": json.dumps(self.script.arguments),
                "status": "completed",
            }
            if namespace is not None:
                item["namespace"] = namespace
        else:
            text = self.script.answer if kind == "answer" else "Scripted reply."
            item = {
                "type": "message",
                "id": f"msg_{next(_ids)}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        usage = {
            "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }  # fmt: skip
        shell = {"id": response_id, "object": "response", "model": body.get("model")}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {**shell, "status": "in_progress"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {
                **shell, "status": "completed", "output": [item], "usage": usage,
            }},
        ]  # fmt: skip
        return "text/event-stream", _sse(events)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the JSON-lines log is the record

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _outbound(self) -> bool:
        """A request meant for elsewhere (we are set as the proxy): refuse it, on the record."""
        if self.command == "CONNECT" or self.path.startswith(("http://", "https://")):
            self.server.record({"kind": "outbound", "method": self.command, "target": self.path})
            self.close_connection = True
            self._send(403, "text/plain", b"scripted model: no network\n")
            return True
        return False

    def do_CONNECT(self) -> None:
        self._outbound()

    def do_GET(self) -> None:
        if self._outbound():
            return
        self.server.record({"kind": "request", "method": "GET", "path": self.path, "body": None})
        self._send(404, "application/json", b'{"error":{"message":"not scripted"}}')

    def do_HEAD(self) -> None:
        if self._outbound():
            return
        self.server.record({"kind": "request", "method": "HEAD", "path": self.path, "body": None})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        if self._outbound():
            return
        body = self._read_body()
        path = self.path.split("?", 1)[0]
        entry = {"kind": "request", "method": "POST", "path": self.path, "body": body}
        entry["headers"] = {
            k.lower(): v for k, v in self.headers.items() if not _SECRET.search(k.lower())
        }
        model = self.server.model
        if path.endswith("/messages/count_tokens"):
            reply: tuple[int, str, bytes] = (200, "application/json", b'{"input_tokens":10}')
        elif path.endswith("/messages") and isinstance(body, dict):
            reply = (200, *model.anthropic(body))
        elif path.endswith("/responses") and isinstance(body, dict):
            reply = (200, *model.openai(body))
        else:
            reply = (404, "application/json", b'{"error":{"message":"not scripted"}}')
        entry["status"] = reply[0]
        self.server.record(entry)
        self._send(*reply)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Script, log: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.model = _Model(script)
        self._log = log.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._log.write(json.dumps(entry) + "\n")
            self._log.flush()

    def close_log(self) -> None:
        with self._lock:
            self._log.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True, help="a Script as JSON")
    parser.add_argument("--log", required=True, type=Path, help="JSON-lines record to append to")
    parser.add_argument("--lifetime", type=float, default=300.0, help="seconds before it stops")
    args = parser.parse_args(argv)
    server = _Server(Script.from_json(args.script), args.log)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    print(server.server_address[1], flush=True)
    # Stop when the test closes our stdin (or dies), or when the lifetime is over.
    waiter = threading.Thread(target=sys.stdin.read, daemon=True)
    waiter.start()
    waiter.join(args.lifetime)
    server.shutdown()
    server.server_close()
    server.close_log()
    return 0


if __name__ == "__main__":
    sys.exit(main())
