"""The one embeddings provider: an OpenAI-compatible ``POST <base_url>/embeddings`` over httpx.

RFC-0020 section 5 and threats T7/T8. The request is ``{"model": ..., "input": [...]}`` and the
answer ``{"data": [{"index": i, "embedding": [...]}, ...]}``, put back in ``index`` order.

Credentials: ``Authorization: Bearer <embeddings.api_key>`` when that key is nonempty, and
nothing else, ever. The client is built with ``trust_env=False`` (no ``.netrc``, no proxy or
certificate settings from the environment), refuses a base URL with userinfo, follows no
redirect (one to another host would carry the key there) and keeps no cookies (a cookie the
server sets is a credential we did not configure).

Failures. Every failure is :class:`EmbeddingError`, an ``unavailable.embeddings``
:class:`VenomError` with empty ``data`` (section 9) and a ``reason`` attribute for doctor::

    unavailable.embeddings  (EmbeddingError.reason)
    ├── timeout      no complete answer within the call's timeout
    ├── transport    connection refused, reset, TLS, DNS ...
    ├── status       a non-2xx answer (redirects included)
    ├── malformed    not JSON, not the documented shape, a non-finite number, too large
    ├── count        not exactly one vector per input
    └── dimensions   a vector whose length is not ``embeddings.dimensions``

:attr:`HttpEmbedder.last_health` records the outcome of the latest call, which doctor's
``embeddings.health`` reports without reaching the endpoint itself. httpx is imported only
by this module, and only the daemon imports this module.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Sequence
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, Literal
from urllib.parse import urlsplit

import attrs
import httpx

from venom_mem_core.clock import SystemClock
from venom_mem_core.config import check_embeddings_url
from venom_mem_core.errors import VenomError
from venom_mem_core.ports import Clock

__all__ = ["EmbedHealth", "EmbeddingError", "FailureReason", "HttpEmbedder"]

FailureReason = Literal["timeout", "transport", "status", "malformed", "count", "dimensions"]

USER_AGENT = "venom-mem"
# A JSON number in an embedding is rarely longer than 24 bytes; allow generously more, so a
# runaway answer can't fill memory.
_BYTES_PER_NUMBER = 48
_MIN_BODY_LIMIT = 4 << 20


class EmbeddingError(VenomError):
    """``unavailable.embeddings`` with why, for the worker and doctor; ``data`` stays empty."""

    def __init__(self, reason: FailureReason, message: str) -> None:
        super().__init__("unavailable.embeddings", message)
        self.reason: FailureReason = reason


@attrs.frozen(kw_only=True)
class EmbedHealth:
    """The outcome of the latest call: ``ok``, or the failure's reason and message."""

    ok: bool
    at: str
    message: str
    reason: FailureReason | None = None
    inputs: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "at": self.at, "message": self.message}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def _refusing_cookie_jar() -> CookieJar:
    """A jar whose policy accepts no cookie from any domain."""
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


class HttpEmbedder:
    """The core ``Embedder`` port over HTTP. Thread-safe: one httpx client, shared."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimensions: int,
        api_key: str = "",
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
    ) -> None:
        check_embeddings_url(base_url)  # https, or http to loopback; no userinfo (T7, T8)
        parts = urlsplit(base_url)
        if dimensions < 1:
            raise ValueError("dimensions must be at least 1")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._host = parts.hostname or ""
        self._model = model
        self._dimensions = dimensions
        self._clock: Clock = clock or SystemClock()
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            headers=headers,
            cookies=_refusing_cookie_jar(),
            trust_env=False,
            follow_redirects=False,
            transport=transport,
        )
        self._health_lock = threading.Lock()
        self._last_health: EmbedHealth | None = None
        self._last_ok: str | None = None

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def url(self) -> str:
        """The endpoint, ``<base_url>/embeddings``; it never holds a credential."""
        return self._url

    @property
    def last_health(self) -> EmbedHealth | None:
        """The latest call's outcome, or ``None`` before the first call."""
        with self._health_lock:
            return self._last_health

    @property
    def last_ok(self) -> str | None:
        """When a call last succeeded (RFC 3339), or ``None``."""
        with self._health_lock:
            return self._last_ok

    def close(self) -> None:
        self._client.close()

    # -- the call ------------------------------------------------------------------------

    def embed(self, texts: Sequence[str], *, timeout_s: float) -> list[list[float]]:
        """One vector of ``dimensions`` numbers per text, in order.

        Raises :class:`EmbeddingError` on any failure, after recording it in
        :attr:`last_health`. ``timeout_s`` bounds each network step (connect, send, every
        read) and the arrival of the whole body; a caller that needs one hard deadline
        (a query) also stops waiting after it.
        """
        if not texts:
            return []
        try:
            vectors = self._call(list(texts), timeout_s)
        except EmbeddingError as error:
            self._record(
                EmbedHealth(
                    ok=False,
                    at=self._clock.now(),
                    message=error.message,
                    reason=error.reason,
                    inputs=len(texts),
                )
            )
            raise
        self._record(
            EmbedHealth(
                ok=True,
                at=self._clock.now(),
                message=f"{len(texts)} input(s) embedded by {self._model} at {self._host}",
                inputs=len(texts),
            )
        )
        return vectors

    def _record(self, health: EmbedHealth) -> None:
        with self._health_lock:
            self._last_health = health
            if health.ok:
                self._last_ok = health.at

    def _call(self, texts: list[str], timeout_s: float) -> list[list[float]]:
        deadline = time.monotonic() + timeout_s
        limit = max(_MIN_BODY_LIMIT, _BYTES_PER_NUMBER * len(texts) * self._dimensions)
        try:
            with self._client.stream(
                "POST",
                self._url,
                json={"model": self._model, "input": texts},
                timeout=httpx.Timeout(timeout_s),
            ) as response:
                if not 200 <= response.status_code < 300:
                    raise EmbeddingError(
                        "status",
                        f"{self._host} answered HTTP {response.status_code}"
                        f" {response.reason_phrase}".rstrip(),
                    )
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise EmbeddingError(
                            "malformed", f"{self._host} sent more than {limit} bytes"
                        )
                    if time.monotonic() > deadline:
                        raise EmbeddingError(
                            "timeout", f"{self._host} did not answer within {timeout_s:g} s"
                        )
        except httpx.TimeoutException:
            raise EmbeddingError(
                "timeout", f"{self._host} did not answer within {timeout_s:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise EmbeddingError(
                "transport", f"cannot reach {self._host}: {type(exc).__name__}"
            ) from None
        return self._parse(bytes(body), len(texts))

    def _parse(self, body: bytes, count: int) -> list[list[float]]:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            raise EmbeddingError("malformed", f"{self._host} did not answer JSON") from None
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, list):
            raise EmbeddingError("malformed", f"{self._host} answered without a data array")
        if len(data) != count:
            raise EmbeddingError(
                "count", f"{self._host} returned {len(data)} vector(s) for {count} input(s)"
            )
        ordered: list[list[float] | None] = [None] * count
        for position, item in enumerate(data):
            index = item.get("index", position) if isinstance(item, dict) else None
            embedding = item.get("embedding") if isinstance(item, dict) else None
            if (
                not isinstance(index, int)
                or isinstance(index, bool)
                or not 0 <= index < count
                or ordered[index] is not None
            ):
                raise EmbeddingError("malformed", f"{self._host} returned a bad or repeated index")
            if not isinstance(embedding, list) or not all(
                type(x) is float or type(x) is int for x in embedding
            ):
                raise EmbeddingError("malformed", f"{self._host} returned a non-numeric embedding")
            if len(embedding) != self._dimensions:
                raise EmbeddingError(
                    "dimensions",
                    f"{self._model} returned a vector of length {len(embedding)};"
                    f" embeddings.dimensions is {self._dimensions}",
                )
            try:
                vector = [float(x) for x in embedding]
            except OverflowError:
                vector = [math.inf]
            if not all(math.isfinite(x) for x in vector):
                raise EmbeddingError("malformed", f"{self._host} returned a non-finite number")
            ordered[index] = vector
        return [v for v in ordered if v is not None]
