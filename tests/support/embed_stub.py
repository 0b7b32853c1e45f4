"""A real OpenAI-compatible embeddings server on 127.0.0.1 for tests: no account, no network.

``POST /v1/embeddings`` with ``{"model", "input": [...]}`` answers
``{"data": [{"index": i, "embedding": [...]}]}``. Each input gets the vector registered for
that exact text (:meth:`EmbedStub.set`), else a fixed pseudo-random one derived from its
SHA-256, so answers are the same on every run. It can be told to fail (HTTP 500), to hang
(hold the answer until released or ``hang_s`` passes), or to answer vectors of the wrong
length; it records every request's headers and body.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import attrs

Mode = Literal["ok", "fail", "hang", "wrong_length"]


@attrs.frozen
class Recorded:
    path: str
    headers: tuple[tuple[str, str], ...]
    body: Any

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]


def hashed_vector(text: str, dimensions: int) -> list[float]:
    """A fixed vector for a text: bytes of its SHA-256 chain mapped to [-1, 1]."""
    out: list[float] = []
    seed = text.encode("utf-8")
    while len(out) < dimensions:
        seed = hashlib.sha256(seed).digest()
        out.extend((b - 127.5) / 127.5 for b in struct.unpack("32B", seed))
    return out[:dimensions]


class EmbedStub:
    """The server and its controls; use :func:`embed_stub` to run one."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.mode: Mode = "ok"
        self.hang_s = 30.0
        self.requests: list[Recorded] = []
        self._vectors: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def set(self, text: str, vector: Sequence[float]) -> None:
        with self._lock:
            self._vectors[text] = list(vector)

    def vector(self, text: str) -> list[float]:
        with self._lock:
            found = self._vectors.get(text)
        return list(found) if found is not None else hashed_vector(text, self.dimensions)

    def release(self) -> None:
        """Let hung requests answer."""
        self._release.set()

    def recorded(self) -> list[Recorded]:
        with self._lock:
            return list(self.requests)

    def inputs(self) -> list[list[str]]:
        """The ``input`` array of every recorded request, in order."""
        return [list(r.body.get("input", [])) for r in self.recorded() if isinstance(r.body, dict)]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _answer(self, body: Any) -> tuple[int, bytes]:
        if self.mode == "fail":
            return 500, b'{"error":"stub told to fail"}'
        if self.mode == "hang":
            self._release.wait(self.hang_s)
        texts = body.get("input", []) if isinstance(body, dict) else []
        data = []
        for index, text in enumerate(texts):
            vector = self.vector(str(text))
            if self.mode == "wrong_length":
                vector = [*vector, 0.5]
            data.append({"object": "embedding", "index": index, "embedding": vector})
        data.reverse()  # the client must order by index, not by position
        document = {"object": "list", "model": body.get("model"), "data": data}
        return 200, json.dumps(document).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with stub._lock:
                    stub.requests.append(
                        Recorded(path=self.path, headers=tuple(self.headers.items()), body=body)
                    )
                if self.path != "/v1/embeddings":
                    status, payload = 404, b"{}"
                else:
                    status, payload = stub._answer(body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("Set-Cookie", "session=stub-cookie; Path=/")
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler


@contextmanager
def embed_stub(dimensions: int = 4) -> Iterator[EmbedStub]:
    stub = EmbedStub(dimensions)
    stub.start()
    try:
        yield stub
    finally:
        stub.stop()
