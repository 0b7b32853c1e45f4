"""memory.add's near-duplicates on PostgreSQL rank only the rows that can reach the threshold
(ADR 0031, third round) and give the answers of the whole ranking: the same IDs, the same
scores to the last bit, for every memory of a corpus whose rows share common words, for an
all-seeing caller and a restricted one, at several thresholds."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from tests.support.postgres_server import PostgresServer, postgres_server
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, RanksAmong, Store
from venom_mem_core.similarity import (
    CONTENT_ONLY,
    content_words,
    normalized_scores,
    similar_memories,
)
from venom_mem_core.testing.support import Env

__all__ = ["postgres_server"]  # the fixture, imported for pytest

WORDS = [
    "deploy",
    "staging",
    "schema",
    "index",
    "token",
    "grant",
    "cache",
    "build",
    "socket",
    "daemon",
    "vector",
    "alpha",
]
ACCESSES = [Access(everything=True), Access(spaces=frozenset({"team", "ops"}))]
THRESHOLDS = [0.3, 0.65, 0.9, 1.0]


@pytest.fixture
def store(postgres_server: PostgresServer) -> Iterator[Store]:
    from venom_mem_adapters.postgres import PostgresStore

    opened = PostgresStore.open(postgres_server.fresh_url())
    try:
        yield opened
    finally:
        opened.close()


def _fill(env: Env) -> None:
    """Notes like the load bench's: ``note`` and ``detail`` in every row, a few rarer words,
    restatements of earlier notes, a title and tags now and then."""
    rng = random.Random(24)
    written: list[str] = []
    for n in range(240):
        if written and rng.random() < 0.2:
            content = rng.choice(written) + f" again {rng.choice(WORDS)}"
        else:
            picked = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
            content = f"note {n % 17}: {picked} detail {rng.randint(0, 40)}"
        written.append(content)
        title = rng.choice(["", "deploy note", "schema"])
        params: dict[str, object] = {
            "space": rng.choice(["team", "ops", "user"]),
            "content": content,
        }
        if title:
            params["title"] = title
        if rng.random() < 0.3:
            params["tags"] = [rng.choice(["ops", "db"])]
        env.owner.call("memory.add", params)
    for n in range(5, 241, 13):
        env.owner.call("memory.delete", {"id": f"m{n}", "revision": 1})


def test_near_duplicates_are_those_of_the_whole_ranking(store: Store) -> None:
    env = Env.on(store)
    _fill(env)
    compared = found = 0
    with store.read() as tx:
        assert isinstance(tx, RanksAmong)
        for access in ACCESSES:
            for id_ in range(1, 241):
                memory = tx.get_memory(id_)
                if memory is None or memory.deleted is not None:
                    continue
                whole = normalized_scores(tx, memory, access)
                for threshold in THRESHOLDS:
                    got = similar_memories(tx, memory, access, threshold=threshold)
                    close = sorted(
                        ((i, s) for i, s in whole.items() if s >= threshold),
                        key=lambda hit: (-hit[1], -hit[0]),
                    )[:3]
                    assert [(s.memory.id, s.score) for s in got] == close, (id_, threshold)
                    compared += 1
                    found += len(got)
    assert compared > 1000
    assert found > 100


def test_ranking_among_few_rows_keeps_every_score(store: Store) -> None:
    """rank_text_among scores each row it ranks as the whole ranking does, bit for bit, and
    ranks only the rows holding a required word that the filter admits."""
    env = Env.on(store)
    _fill(env)
    with store.read() as tx:
        assert isinstance(tx, RanksAmong)
        for access in ACCESSES:
            where = MemoryFilter(access=access, spaces=frozenset({"team"}))
            words = content_words("note 3: vector socket detail 12")
            stats = tx.text_stats(words, access)
            assert stats is not None
            whole = dict(tx.rank_text_scored(words, where, 1000, CONTENT_ONLY))
            few = tx.rank_text_among(
                words, where, 1000, CONTENT_ONLY, stats=stats, among=["vector", "socket"]
            )
            assert few
            assert all(whole[i] == score for i, score in few)
            holding = {
                m.id
                for i in whole
                if (m := tx.get_memory(i)) is not None
                and {"vector", "socket"} & set(m.content.split())
            }
            assert {i for i, _ in few} == holding
            assert len(holding) < len(whole)
