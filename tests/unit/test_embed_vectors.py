"""memory_vectors on a real store: encoding, the pending set, the guarded upsert, serve-time
cleanup, loading, the stale trigger; and the text a memory is embedded as."""

from __future__ import annotations

import hashlib
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import attrs
import numpy as np
import pytest

from tests.support.records import OWNER, TS, draft_memory
from venom_mem_adapters.embeddings import vector_rows as vx
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_adapters.sqlite.vectors import SqliteVectors
from venom_mem_core.embedding_text import embedding_input
from venom_mem_core.records import Provenance

G1 = Provenance(principal="g1")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore.open(tmp_path / "store.db") as s:
        yield s


def add(
    store: SqliteStore,
    content: str,
    *,
    title: str = "",
    tags: tuple[str, ...] = (),
    author: Provenance = OWNER,
    space: str = "user",
    updated: str = TS,
) -> int:
    draft = draft_memory(
        content, space=space, title=title, tags=tags, author=author, updated=updated
    )
    with store.write() as tx:
        return tx.insert_memory(draft)


def conn(tx: object) -> apsw.Connection:
    connection = getattr(tx, "connection", None) or tx._connection  # type: ignore[attr-defined]
    assert isinstance(connection, apsw.Connection)
    return connection


def pending(store: SqliteStore) -> list[vx.PendingText]:
    with store.read() as tx:
        return SqliteVectors(conn(tx)).pending_memories(limit=100)


def put(store: SqliteStore, item: vx.PendingText, vector: list[float], model: str = "m") -> bool:
    with store.write() as tx:
        return SqliteVectors(conn(tx)).upsert_vector(item, model, vector) is not None


# -- the text --------------------------------------------------------------------------------


def test_embedding_input_is_title_two_newlines_content() -> None:
    assert embedding_input("Zig pin", "pins Zig.", 100) == "Zig pin\n\npins Zig."
    assert embedding_input("", "no title", 100) == "no title"


def test_embedding_input_cuts_at_a_utf8_boundary() -> None:
    text = embedding_input("é", "ééé", 6)  # "é\n\nééé" is 2 + 2 + 6 bytes
    assert text == "é\n\né"
    assert len(text.encode()) <= 6
    assert embedding_input("", "aé", 2) == "a"


# -- encoding --------------------------------------------------------------------------------


def test_vectors_are_little_endian_f32_of_length_one() -> None:
    blob = vx.encode_vector([3.0, 4.0])
    assert blob == struct.pack("<2f", 0.6, 0.8)
    assert np.allclose(vx.decode_vector(blob, 2), [0.6, 0.8])
    with pytest.raises(ValueError, match="nonzero"):
        vx.encode_vector([0.0, 0.0])
    with pytest.raises(ValueError, match="float32"):
        vx.decode_vector(blob, 3)


# -- the table -------------------------------------------------------------------------------


def test_pending_is_live_without_a_vector_newest_first(store: SqliteStore) -> None:
    a = add(store, "alpha", title="A")
    b = add(store, "beta")
    assert [p.id for p in pending(store)] == [b, a]
    first = pending(store)[1]
    assert (first.title, first.content) == ("A", "alpha")
    assert put(store, first, [1.0, 0.0])
    assert [p.id for p in pending(store)] == [b]
    with store.read() as tx:
        c = conn(tx)
        reads = SqliteVectors(c)
        assert reads.count_pending() == 1
        assert reads.count_vectors() == 1
        assert reads.count_vectors("m") == 1
        assert reads.count_vectors("other") == 0
        assert reads.stored_vector(a, "m", 2) is not None
        assert reads.stored_vector(b, "m", 2) is None
        row = c.execute("SELECT model, embedding FROM memory_vectors").fetchall()
    assert row == [("m", struct.pack("<2f", 1.0, 0.0))]


def test_upsert_refuses_text_that_changed_meanwhile(store: SqliteStore) -> None:
    mid = add(store, "old text", title="T")
    (item,) = pending(store)
    with store.write() as tx:
        memory = tx.get_memory(mid)
        assert memory is not None
        digest = hashlib.sha256(b"new text").digest()
        tx.replace_memory(attrs.evolve(memory, content="new text", content_sha256=digest))
    assert not put(store, item, [1.0, 0.0])
    assert [p.content for p in pending(store)] == ["new text"]


def test_the_stale_trigger_drops_a_vector_when_text_changes(store: SqliteStore) -> None:
    mid = add(store, "text", title="T", tags=("zig",))
    (item,) = pending(store)
    assert put(store, item, [1.0, 0.0])
    with store.write() as tx:
        conn(tx).execute("UPDATE memories SET tags = 'zig build' WHERE id = ?", (mid,))
    assert pending(store) == []  # tags only: the vector stays
    with store.write() as tx:
        conn(tx).execute("UPDATE memories SET title = 'New' WHERE id = ?", (mid,))
    assert [p.id for p in pending(store)] == [mid]


def test_serve_deletes_other_models_and_wrong_lengths(store: SqliteStore) -> None:
    ids = [add(store, f"text {n}") for n in range(4)]
    items = {p.id: p for p in pending(store)}
    put(store, items[ids[0]], [1.0, 0.0], model="old")
    put(store, items[ids[1]], [1.0, 0.0], model="new")
    put(store, items[ids[2]], [1.0, 0.0, 0.0], model="new")  # a dimensions change
    with store.write() as tx:
        assert SqliteVectors(conn(tx)).delete_stale_vectors("new", 2) == 2
    assert sorted(p.id for p in pending(store)) == sorted([ids[0], ids[2], ids[3]])


def test_load_reads_live_vectors_with_their_facets(store: SqliteStore) -> None:
    a = add(store, "a", tags=("zig", "build"), author=G1, space="project/x")
    b = add(store, "b")
    c = add(store, "c")
    items = {p.id: p for p in pending(store)}
    put(store, items[a], [0.0, 2.0])
    put(store, items[b], [3.0, 4.0])
    put(store, items[c], [1.0, 0.0], model="other")
    with store.read() as tx:
        rows = SqliteVectors(conn(tx)).load_vectors("m", 2, spare_fraction=1.0, min_spare=5)
    assert sorted(rows.ids.tolist()) == [a, b]
    assert rows.stale == [c]
    assert rows.matrix.dtype == np.float32
    assert rows.matrix.shape == (3 + 5, 2)
    at = {int(i): r for r, i in enumerate(rows.ids)}
    assert np.allclose(rows.matrix[at[a]], [0.0, 1.0])
    assert np.allclose(rows.matrix[at[b]], [0.6, 0.8])
    assert rows.spaces[at[a]] == "project/x"
    assert rows.authors[at[a]] == "g1"
    assert rows.tags[at[a]] == "zig build"
    assert rows.sessions[at[a]] is None
    with store.read() as tx:
        stored = SqliteVectors(conn(tx)).stored_vector(a, "m", 2)
        assert SqliteVectors(conn(tx)).stored_vector(c, "m", 2) is None
    assert stored is not None
    assert stored.facets.tags == ("zig", "build")


def test_the_store_package_does_not_import_numpy_or_httpx() -> None:
    """Only the daemon's embeddings path pays for numpy and httpx (the CLI never does)."""
    probe = (
        "import sys, venom_mem_adapters.sqlite, venom_mem_core.embedding_text\n"
        "print(sorted(m for m in ('numpy', 'httpx') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
