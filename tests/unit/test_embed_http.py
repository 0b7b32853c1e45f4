"""HttpEmbedder against a real loopback server, and against malformed answers (T7, T8)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.embed_stub import EmbedStub, embed_stub, hashed_vector
from venom_mem_adapters.embeddings.http_embedder import EmbeddingError, HttpEmbedder
from venom_mem_core.errors import VenomError

KEY = "sk-test-0123456789"


@pytest.fixture
def stub() -> Iterator[EmbedStub]:
    with embed_stub(dimensions=4) as s:
        yield s


def embedder(stub: EmbedStub, *, api_key: str = "", dimensions: int = 4) -> HttpEmbedder:
    return HttpEmbedder(
        base_url=stub.base_url, model="stub-model", dimensions=dimensions, api_key=api_key
    )


def test_posts_the_documented_body_and_orders_by_index(stub: EmbedStub) -> None:
    stub.set("b", [0.0, 1.0, 0.0, 0.0])
    e = embedder(stub)
    got = e.embed(["a", "b", "c"], timeout_s=5)
    assert got == [hashed_vector("a", 4), [0.0, 1.0, 0.0, 0.0], hashed_vector("c", 4)]
    (request,) = stub.recorded()
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "stub-model", "input": ["a", "b", "c"]}
    assert request.header("Content-Type") == ["application/json"]
    assert e.last_health is not None
    assert e.last_health.ok
    assert e.embed([], timeout_s=5) == []
    e.close()


def test_no_key_means_no_authorization_header_and_no_cookie_is_sent_back(
    stub: EmbedStub,
) -> None:
    e = embedder(stub)
    e.embed(["a"], timeout_s=5)
    e.embed(["b"], timeout_s=5)  # the stub set a cookie on the first answer
    for request in stub.recorded():
        names = {k.lower() for k, _ in request.headers}
        assert "authorization" not in names
        assert "cookie" not in names
        assert "proxy-authorization" not in names
    e.close()


def test_the_configured_key_is_the_only_credential(stub: EmbedStub) -> None:
    e = embedder(stub, api_key=KEY)
    e.embed(["a"], timeout_s=5)
    e.embed(["b"], timeout_s=5)
    for request in stub.recorded():
        assert request.header("Authorization") == [f"Bearer {KEY}"]
        assert request.header("Cookie") == []
    assert KEY not in repr(e.last_health)
    e.close()


def test_the_environment_gives_no_credential_or_proxy(stub: EmbedStub, tmp_path: Path) -> None:
    """trust_env=False: a .netrc for the host and proxy variables change nothing."""
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login harness password from-netrc\n")
    netrc.chmod(0o600)
    dead = "http://127.0.0.1:9"
    env = {
        "HOME": str(tmp_path),
        "NETRC": str(netrc),
        "HTTP_PROXY": dead,
        "HTTPS_PROXY": dead,
        "ALL_PROXY": dead,
        "http_proxy": dead,
        "all_proxy": dead,
        "OPENAI_API_KEY": "sk-harness-key",
        "PATH": "/usr/bin:/bin",
    }
    code = (
        "from venom_mem_adapters.embeddings.http_embedder import HttpEmbedder\n"
        f"e = HttpEmbedder(base_url={stub.base_url!r}, model='m', dimensions=4)\n"
        "print(len(e.embed(['x'], timeout_s=5)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (request,) = stub.recorded()
    names = {k.lower() for k, _ in request.headers}
    assert "authorization" not in names
    assert "proxy-authorization" not in names


def test_a_failing_server_is_unavailable(stub: EmbedStub) -> None:
    stub.mode = "fail"
    e = embedder(stub)
    with pytest.raises(EmbeddingError) as err:
        e.embed(["a"], timeout_s=5)
    assert err.value.code == "unavailable.embeddings"
    assert err.value.reason == "status"
    assert err.value.data == {}
    assert "500" in err.value.message
    assert e.last_health is not None
    assert not e.last_health.ok
    assert e.last_health.reason == "status"


def test_a_hung_server_times_out_on_time(stub: EmbedStub) -> None:
    stub.mode = "hang"
    e = embedder(stub)
    started = time.monotonic()
    with pytest.raises(EmbeddingError) as err:
        e.embed(["a"], timeout_s=0.3)
    assert err.value.reason == "timeout"
    assert time.monotonic() - started < 2.0


def test_a_wrong_length_is_reported_as_such(stub: EmbedStub) -> None:
    stub.mode = "wrong_length"
    e = embedder(stub)
    with pytest.raises(EmbeddingError) as err:
        e.embed(["a", "b"], timeout_s=5)
    assert err.value.reason == "dimensions"
    assert "length 5" in err.value.message
    assert "dimensions is 4" in err.value.message
    assert e.last_health is not None
    assert e.last_health.reason == "dimensions"


def test_nobody_listening_is_a_transport_failure() -> None:
    e = HttpEmbedder(base_url="http://127.0.0.1:9/v1", model="m", dimensions=2)
    with pytest.raises(EmbeddingError) as err:
        e.embed(["a"], timeout_s=2)
    assert err.value.reason == "transport"


def answering(status: int, body: bytes | str) -> HttpEmbedder:
    raw = body.encode() if isinstance(body, str) else body

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=raw, headers={"Location": "https://elsewhere/"})

    return HttpEmbedder(
        base_url="https://embed.example/v1",
        model="m",
        dimensions=2,
        transport=httpx.MockTransport(handle),
    )


def doc(*items: object) -> str:
    return json.dumps({"data": list(items)})


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (307, "", "status"),
        (401, '{"error":"bad key"}', "status"),
        (200, "not json", "malformed"),
        (200, "[]", "malformed"),
        (200, '{"data": {}}', "malformed"),
        (200, doc(), "count"),
        (200, doc({"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}), "count"),
        (200, doc({"index": 3, "embedding": [1, 0]}), "malformed"),
        (200, doc({"index": True, "embedding": [1, 0]}), "malformed"),
        (200, doc({"index": 0, "embedding": ["1", 0]}), "malformed"),
        (200, doc({"index": 0, "embedding": [True, 0]}), "malformed"),
        (200, doc({"index": 0, "embedding": [1, 0, 0]}), "dimensions"),
        (200, '{"data": [{"index": 0, "embedding": [NaN, 0]}]}', "malformed"),
        (200, '{"data": [{"index": 0, "embedding": [1e999, 0]}]}', "malformed"),
        (200, doc({"index": 0, "embedding": [10**400, 0]}), "malformed"),
    ],
)
def test_malformed_answers_are_unavailable(status: int, body: str, reason: str) -> None:
    with pytest.raises(EmbeddingError) as err:
        answering(status, body).embed(["a"], timeout_s=5)
    assert err.value.code == "unavailable.embeddings"
    assert err.value.reason == reason


def test_a_repeated_index_is_malformed() -> None:
    body = doc({"index": 0, "embedding": [1, 0]}, {"index": 0, "embedding": [0, 1]})
    with pytest.raises(EmbeddingError) as err:
        answering(200, body).embed(["a", "b"], timeout_s=5)
    assert err.value.reason == "malformed"


def test_an_oversized_answer_is_cut_off() -> None:
    huge = b'{"data": [' + b" " * (5 << 20) + b"]}"
    with pytest.raises(EmbeddingError) as err:
        answering(200, huge).embed(["a"], timeout_s=5)
    assert err.value.reason == "malformed"


@pytest.mark.parametrize(
    "url", ["https://user:pw@embed.example/v1", "http://10.0.0.1/v1", "ftp://127.0.0.1/v1"]
)
def test_a_refused_url_is_refused_by_the_adapter_too(url: str) -> None:
    with pytest.raises(VenomError) as err:
        HttpEmbedder(base_url=url, model="m", dimensions=2)
    assert err.value.code == "invalid_params.embeddings_url"
    assert "pw" not in err.value.message
