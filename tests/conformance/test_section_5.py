"""RFC-0020 section 5 on every store with a default config: the fixture venom-mem#5 pins,
with embeddings on (a real embeddings server on loopback, tests/support/embed_stub.py) and
off, and the mode table's rows that a working and a failing provider give.

The fixture: the query matches m2 best and m1 next; the vectors rank m3, then m2, and m1
points away from the query (similarity below the default ``search.min_similarity`` of 0.0).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conformance.harness import Rfc
from tests.integration.test_hybrid_search import DIMS, M1, M2, M3, QUERY, section_5_stub
from tests.support.embed_stub import EmbedStub


@pytest.fixture
def stub() -> Iterator[EmbedStub]:
    with section_5_stub() as s:
        yield s


def add_fixture(rfc: Rfc) -> tuple[str, str, str]:
    ids = []
    for memory in (M1, M2, M3):
        args = [word for key, value in memory.items() for word in (f"--{key}", value)]
        ids.append(str(rfc.ok("memory", "add", *args, token="@owner")["id"]))
    m1, m2, m3 = ids
    assert (m1, m2, m3) == ("m1", "m2", "m3")
    return m1, m2, m3


def ranks(result: dict[str, Any]) -> list[tuple[str, int | None, int | None]]:
    return [(h["id"], h.get("fts_rank"), h.get("vector_rank")) for h in result["results"]]


def test_the_fixture_with_embeddings_on(rfc: Rfc, stub: EmbedStub) -> None:
    rfc.embeddings_on(stub.base_url, "stub-model", DIMS)
    m1, m2, m3 = add_fixture(rfc)
    rfc.wait_embedded(m1, m2, m3)
    result = rfc.ok("memory", "search", "--query", QUERY)
    assert result["mode"] == "hybrid"
    assert "fallback" not in result
    assert ranks(result) == [("m2", 1, 2), ("m3", None, 1), ("m1", 2, None)]
    scores = [h["score"] for h in result["results"]]
    for got, want in zip(scores, (1 / 61 + 1 / 62, 1 / 61, 1 / 62), strict=True):
        assert abs(got - want) < 1e-9, scores
    assert abs(scores[0] - 0.03252247) < 5e-9  # the RFC's table, to its eight places
    assert abs(scores[1] - 0.01639344) < 5e-9
    assert abs(scores[2] - 0.01612903) < 5e-9
    hits = {h["id"]: h for h in result["results"]}
    assert "similarity" not in hits["m1"]  # not in the vector list
    assert hits["m3"]["similarity"] > hits["m2"]["similarity"] > 0
    # The other rows of the mode table with a working provider.
    fts = rfc.ok("memory", "search", "--query", QUERY, "--mode", "fts")
    assert (fts["mode"], ranks(fts)) == ("fts", [("m2", 1, None), ("m1", 2, None)])
    vector = rfc.ok("memory", "search", "--query", QUERY, "--mode", "vector")
    assert (vector["mode"], ranks(vector)) == ("vector", [("m3", None, 1), ("m2", None, 2)])
    assert [h["score"] for h in vector["results"]] == [1 / 61, 1 / 62]


def test_the_fixture_with_embeddings_off(rfc: Rfc) -> None:
    add_fixture(rfc)
    result = rfc.ok("memory", "search", "--query", QUERY)
    assert result["mode"] == "fts"
    assert "fallback" not in result
    assert ranks(result) == [("m2", 1, None), ("m1", 2, None)]
    assert [h["score"] for h in result["results"]] == [1 / 61, 1 / 62]
    assert rfc.ok("memory", "get", "--id", "m2")["embedding"] == "off"
    assert rfc.error("memory", "search", "--query", QUERY, "--mode", "vector") == (
        10,
        {
            "code": "unsupported.embeddings_off",
            "message": "mode vector needs embeddings on",
            "data": {},
        },
    )


def test_a_failing_provider_is_the_fallback_row(rfc: Rfc, stub: EmbedStub) -> None:
    rfc.embeddings_on(stub.base_url, "stub-model", DIMS)
    m1, m2, m3 = add_fixture(rfc)
    rfc.wait_embedded(m1, m2, m3)
    stub.mode = "fail"
    auto = rfc.ok("memory", "search", "--query", QUERY)
    assert (auto["mode"], auto["fallback"]) == ("fts", "embedding_unavailable")
    assert ranks(auto) == [("m2", 1, None), ("m1", 2, None)]
    code, error = rfc.error("memory", "search", "--query", QUERY, "--mode", "vector")
    assert (code, error["code"]) == (6, "unavailable.embeddings")
    fts = rfc.ok("memory", "search", "--query", QUERY, "--mode", "fts")
    assert "fallback" not in fts


def test_a_query_with_no_tokens_is_invalid(rfc: Rfc) -> None:
    code, error = rfc.error("memory", "search", "--query", "   ")
    assert (code, error["code"], error["data"]["param"]) == (2, "invalid_params.query", "query")
