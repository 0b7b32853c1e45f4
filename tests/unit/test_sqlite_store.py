"""SqliteStore and its transactions: every port method on a real file, errors, concurrency."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import attrs
import pytest

from tests.support.records import OWNER, TS, draft_memory
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, SessionFilter, Store, StoreCounts
from venom_mem_core.records import Client, Grant, Memory, Provenance, Session, Version

G1 = Provenance(principal="g1", label="claude-code")
EVERYTHING = MemoryFilter(access=Access(everything=True))


def version(mid: int, revision: int, content: str) -> Version:
    return Version(
        memory=mid,
        revision=revision,
        action="add" if revision == 1 else "update",
        kind="note",
        title="",
        content=content,
        tags=(),
        by=OWNER,
        ts=TS,
    )


def session(harness: str = "claude-code", **kw: object) -> Session:
    fields: dict[str, object] = {"id": 0, "harness": harness, "reported_by": OWNER, "started": TS}
    fields.update(kw)
    return Session(**fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore.open(tmp_path / "store" / "store.db")
    yield s
    s.close()


def add(store: SqliteStore, *memories: Memory) -> list[int]:
    with store.write() as tx:
        return [tx.insert_memory(m) for m in memories]


def test_is_a_store(store: SqliteStore) -> None:
    assert isinstance(store, Store)


# -- memories --------------------------------------------------------------------------------


def test_memory_round_trip(store: SqliteStore) -> None:
    with store.write() as tx:
        sid = tx.insert_session(session())
    original = draft_memory(
        "Zig 0.17 pinned", title="Zig pin", tags=("zig", "build"), author=G1, session=sid
    )
    (mid,) = add(store, original)
    with store.read() as tx:
        assert tx.get_memory(mid) == attrs.evolve(original, id=mid)
        assert tx.get_memory(999) is None


def test_memory_without_title_label_or_tags(store: SqliteStore) -> None:
    plain = attrs.evolve(draft_memory("plain"), author=Provenance(principal="g2"))
    (mid,) = add(store, plain)
    with store.read() as tx:
        got = tx.get_memory(mid)
    assert got is not None
    assert (got.title, got.tags, got.author.label, got.session) == ("", (), None, None)


def test_ids_are_never_reused_after_a_purge(store: SqliteStore) -> None:
    first, second = add(store, draft_memory("one"), draft_memory("two"))
    with store.write() as tx:
        tx.delete_memory(second)
    (third,) = add(store, draft_memory("three"))
    assert (first, second, third) == (1, 2, 3)


def test_find_live_by_content(store: SqliteStore) -> None:
    m = draft_memory("same text")
    (mid,) = add(store, m)
    with store.read() as tx:
        found = tx.find_live_by_content("user", m.content_sha256)
        assert found is not None
        assert found.id == mid
        assert tx.find_live_by_content("other", m.content_sha256) is None
    with store.write() as tx:
        tx.replace_memory(attrs.evolve(m, id=mid, deleted=TS))
    with store.read() as tx:
        assert tx.find_live_by_content("user", m.content_sha256) is None


def test_duplicate_backstop(store: SqliteStore) -> None:
    (mid,) = add(store, draft_memory("dup"))
    with store.write() as tx:
        with pytest.raises(VenomError) as info:
            tx.insert_memory(draft_memory("dup"))
        assert info.value.code == "conflict.memory_duplicate"
        assert info.value.data == {"id": f"m{mid}"}
        # The transaction survives a refused statement.
        other = tx.insert_memory(draft_memory("dup", space="elsewhere"))
    with store.read() as tx:
        assert tx.get_memory(other) is not None


def test_duplicate_backstop_on_restore(store: SqliteStore) -> None:
    gone, live = add(store, draft_memory("x", deleted=TS), draft_memory("x"))
    with store.write() as tx:
        tombstone = tx.get_memory(gone)
        assert tombstone is not None
        with pytest.raises(VenomError) as info:
            tx.replace_memory(attrs.evolve(tombstone, deleted=None))
    assert info.value.code == "conflict.memory_duplicate"
    assert info.value.data == {"id": f"m{live}"}


def test_replace_missing_memory_is_not_found(store: SqliteStore) -> None:
    with store.write() as tx, pytest.raises(VenomError) as info:
        tx.replace_memory(attrs.evolve(draft_memory("x"), id=42))
    assert info.value.code == "not_found.memory"


def test_versions_and_pruning(store: SqliteStore) -> None:
    (mid,) = add(store, draft_memory("v"))
    with store.write() as tx:
        for revision in range(1, 6):
            tx.insert_version(
                Version(
                    memory=mid,
                    revision=revision,
                    action="add" if revision == 1 else "update",
                    kind="note",
                    title=f"t{revision}",
                    content=f"c{revision}",
                    tags=("a", "b") if revision % 2 else (),
                    by=G1,
                    ts=TS,
                )
            )
        tx.prune_versions(mid, 3)
    with store.read() as tx:
        assert [v.revision for v in tx.list_versions(mid)] == [5, 4, 3]
        v5 = tx.get_version(mid, 5)
        assert v5 is not None
        assert (v5.action, v5.tags, v5.by, v5.content) == ("update", ("a", "b"), G1, "c5")
        assert tx.get_version(mid, 1) is None


def test_purge_cascades_to_versions_and_vectors(store: SqliteStore) -> None:
    (mid,) = add(store, draft_memory("purge me"))
    with store.write() as tx:
        tx.insert_version(version(mid, 1, "purge me"))
        tx._run("INSERT INTO memory_vectors VALUES (?, 'm', x'00')", (mid,))
    with store.read() as tx:
        assert tx.counts() == StoreCounts(
            memories=1, deleted=0, versions=1, sessions=0, vectors=1, pending=0
        )
    with store.write() as tx:
        tx.delete_memory(mid)
    with store.read() as tx:
        assert tx.get_memory(mid) is None
        assert tx.list_versions(mid) == []
        assert tx.counts() == StoreCounts(
            memories=0, deleted=0, versions=0, sessions=0, vectors=0, pending=0
        )
        assert tx.rank_text(["purge"], EVERYTHING, 10) == []


def test_changed_text_or_delete_drops_the_vector(store: SqliteStore) -> None:
    a, b, c = add(store, draft_memory("a"), draft_memory("b"), draft_memory("c"))
    with store.write() as tx:
        for mid in (a, b, c):
            tx._run("INSERT INTO memory_vectors VALUES (?, 'm', x'00')", (mid,))
        tx.replace_memory(attrs.evolve(draft_memory("a2"), id=a))  # content changed
        tx.replace_memory(attrs.evolve(draft_memory("b"), id=b, deleted=TS))  # deleted
        tx.replace_memory(attrs.evolve(draft_memory("c", tags=("x",)), id=c))  # tags only
    with store.read() as tx:
        assert tx._rows("SELECT memory FROM memory_vectors") == [(c,)]
        assert tx.counts().pending == 1


def test_every_kind_of_change_keeps_the_fts_index_consistent(store: SqliteStore) -> None:
    """After each change the index holds exactly the live text (docs/adr/0003)."""
    (mid,) = add(store, draft_memory("first words", title="head", tags=("a",)))
    restricted = MemoryFilter(access=Access(spaces=frozenset({"user"})))
    steps: list[tuple[dict[str, object], str, str | None]] = [
        ({"content": "second words"}, "second", "first"),
        ({"title": "renamed"}, "renamed", "head"),
        ({"tags": ("b", "c")}, "b", "a"),
        ({"deleted": TS}, "", "second"),
        ({"deleted": None, "content": "restored words"}, "restored", "second"),
        ({"title": "", "tags": ()}, "restored", "renamed"),
    ]
    for change, present, absent in steps:
        with store.write() as tx:
            current = tx.get_memory(mid)
            assert current is not None
            changed = attrs.evolve(current, **change)  # type: ignore[arg-type]
            tx.replace_memory(changed)
            if changed.deleted is None:
                # FTS5's own check of the index against the memories table; it only holds
                # while no tombstone is in the table, since the index leaves tombstones out.
                tx._run("INSERT INTO memory_fts (memory_fts, rank) VALUES ('integrity-check', 1)")
        with store.read() as rx:
            for where in (EVERYTHING, restricted):  # both rankings read FTS5's row sizes
                if present:
                    assert rx.rank_text([present], where, 9) == [mid]
                if absent:
                    assert rx.rank_text([absent], where, 9) == []


def test_expired_tombstones(store: SqliteStore) -> None:
    old, new, _live = add(
        store,
        draft_memory("old", deleted="2026-01-01T00:00:00.000Z"),
        draft_memory("new", deleted="2026-06-01T00:00:00.000Z"),
        draft_memory("live"),
    )
    with store.write() as tx:
        assert [m.id for m in tx.expired_tombstones("2026-03-01T00:00:00.000Z")] == [old]
        assert [m.id for m in tx.expired_tombstones("2027-01-01T00:00:00.000Z")] == [old, new]


def test_list_memories_order_paging_and_filters(store: SqliteStore) -> None:
    with store.write() as tx:
        sid = tx.insert_session(session())
    ids = add(
        store,
        draft_memory("a", space="user", kind="fact", tags=("zig", "build")),
        draft_memory("b", space="team", kind="note", tags=("zig",), session=sid),
        draft_memory("c", space="user", kind="note", tags=("build",), author=G1),
        draft_memory("d", space="user", deleted=TS),
    )
    a, b, c, d = ids

    def listed(where: MemoryFilter, after: int | None = None, limit: int = 10) -> list[int]:
        with store.read() as tx:
            return [m.id for m in tx.list_memories(where, after, limit)]

    assert listed(EVERYTHING) == [c, b, a]
    assert listed(EVERYTHING, after=c) == [b, a]
    assert listed(EVERYTHING, limit=1) == [c]
    assert listed(attrs.evolve(EVERYTHING, include_deleted=True)) == [d, c, b, a]
    assert listed(attrs.evolve(EVERYTHING, spaces=frozenset({"team"}))) == [b]
    assert listed(attrs.evolve(EVERYTHING, kinds=frozenset({"fact"}))) == [a]
    assert listed(attrs.evolve(EVERYTHING, tags=frozenset({"zig"}))) == [b, a]
    assert listed(attrs.evolve(EVERYTHING, tags=frozenset({"zig", "build"}))) == [a]
    assert listed(attrs.evolve(EVERYTHING, tags=frozenset({"zi"}))) == []
    assert listed(attrs.evolve(EVERYTHING, sessions=frozenset({sid}))) == [b]
    assert listed(MemoryFilter(access=Access(spaces=frozenset({"team"})))) == [b]
    assert listed(MemoryFilter(access=Access(ids=frozenset({a})))) == [a]
    assert listed(MemoryFilter(access=Access(owner="g1"))) == [c]
    assert listed(MemoryFilter(access=Access(owner="g1", ids=frozenset({b})))) == [c, b]
    assert listed(MemoryFilter(access=Access())) == []


def test_list_filter_agrees_with_the_python_predicate(store: SqliteStore) -> None:
    add(
        store,
        *(
            draft_memory(
                f"text {n}",
                space=("user", "team", "ops")[n % 3],
                kind=("fact", "note")[n % 2],
                tags=(("zig",), ("zig", "build"), ())[n % 3],
                author=(OWNER, G1)[n % 2],
            )
            for n in range(30)
        ),
    )
    filters = [
        MemoryFilter(access=Access(spaces=frozenset({"ops"}), owner="g1")),
        MemoryFilter(access=Access(ids=frozenset({3, 4, 5})), kinds=frozenset({"fact"})),
        MemoryFilter(access=Access(everything=True), tags=frozenset({"build"})),
        MemoryFilter(access=Access(owner="owner"), spaces=frozenset({"user", "team"})),
    ]
    with store.read() as tx:
        everything = tx.list_memories(attrs.evolve(EVERYTHING, include_deleted=True), None, 100)
        for where in filters:
            expected = [m.id for m in everything if where.matches(m)]
            assert [m.id for m in tx.list_memories(where, None, 100)] == expected


def test_space_summaries(store: SqliteStore) -> None:
    add(
        store,
        attrs.evolve(draft_memory("a", space="b-space"), updated="2026-11-09T10:00:01.000Z"),
        attrs.evolve(draft_memory("b", space="b-space"), updated="2026-11-09T10:00:03.000Z"),
        draft_memory("c", space="a-space", author=G1),
        draft_memory("d", space="c-space", deleted=TS),
    )
    with store.read() as tx:
        everything = tx.space_summaries(Access(everything=True))
        mine = tx.space_summaries(Access(owner="g1"))
        nothing = tx.space_summaries(Access())
    assert [(s.space, s.memories, s.updated) for s in everything] == [
        ("a-space", 1, TS),
        ("b-space", 2, "2026-11-09T10:00:03.000Z"),
    ]
    assert [s.space for s in mine] == ["a-space"]
    assert nothing == []


# -- sessions, clients, meta -----------------------------------------------------------------


def test_sessions(store: SqliteStore) -> None:
    with store.write() as tx:
        root = tx.insert_session(session(harness_session="abc", cwd="/src"))
        child = tx.insert_session(
            session(harness="codex", parent=root, relation="fork", reported_by=G1)
        )
        other = tx.insert_session(session())
        (mid,) = [tx.insert_memory(draft_memory("in root", session=root))]
    with store.read() as rx:
        got = rx.get_session(child)
        assert got is not None
        assert (got.parent, got.relation, got.reported_by) == (root, "fork", G1)
        found = rx.find_session("claude-code", "abc")
        assert found is not None
        assert found.id == root
        assert rx.find_session("codex", "abc") is None

        def listed(where: SessionFilter, after: int | None = None) -> list[int]:
            return [s.id for s in rx.list_sessions(where, after, 10)]

        everything = Access(everything=True)
        assert listed(SessionFilter(access=everything)) == [other, child, root]
        assert listed(SessionFilter(access=everything), after=other) == [child, root]
        assert listed(SessionFilter(access=everything, harness="codex")) == [child]
        assert listed(SessionFilter(access=everything, harness_session="abc")) == [root]
        assert listed(SessionFilter(access=everything, parent=root)) == [child]
        assert listed(SessionFilter(access=Access(owner="g1"))) == [child]
        assert listed(SessionFilter(access=Access(ids=frozenset({root})))) == [root]
        assert listed(SessionFilter(access=Access())) == []
    with store.write() as tx:
        started = tx.get_session(root)
        assert started is not None
        tx.replace_session(attrs.evolve(started, ended=TS))
        tx.delete_session(root)
    with store.read() as rx:
        assert rx.get_session(root) is None
        orphan = rx.get_session(child)
        assert orphan is not None
        assert (orphan.parent, orphan.relation) == (None, "fork")
        kept = rx.get_memory(mid)
        assert kept is not None
        assert (kept.session, kept.content) == (None, "in root")


def test_session_replace_missing_is_not_found(store: SqliteStore) -> None:
    with store.write() as tx, pytest.raises(VenomError) as info:
        tx.replace_session(session(id=7))
    assert info.value.code == "not_found.session"


def test_clients_and_meta(store: SqliteStore) -> None:
    client = Client(
        name="claude",
        principal="g1",
        grants=(Grant(right="read", scope="*"), Grant(right="write", scope="space:proj-x")),
        token_hash=b"\x01" * 32,
        created=TS,
    )
    with store.write() as tx:
        tx.insert_client(client)
        tx.insert_client(attrs.evolve(client, name="codex", principal="g2", expires=TS))
        with pytest.raises(VenomError) as info:
            tx.insert_client(attrs.evolve(client, principal="g3"))
        assert info.value.code == "conflict.client_exists"
        assert tx.get_meta("next_principal") == "1"
        tx.set_meta("next_principal", "3")
        tx.set_meta("new_key", "x")
    with store.read() as tx:
        assert tx.get_client("claude") == client
        assert tx.get_client_by_principal("g1") == client
        assert [c.name for c in tx.list_clients()] == ["claude", "codex"]
        assert tx.get_meta("next_principal") == "3"
        assert tx.get_meta("new_key") == "x"
        assert tx.get_meta("missing") is None
    with store.write() as tx:
        tx.delete_client("claude")
    with store.read() as tx:
        assert tx.get_client("claude") is None
        assert tx.get_client_by_principal("g1") is None


# -- transactions ----------------------------------------------------------------------------


def test_write_rolls_back_on_exception(store: SqliteStore) -> None:
    def fail_halfway() -> None:
        with store.write() as tx:
            tx.insert_memory(draft_memory("never"))
            tx.set_meta("k", "v")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail_halfway()
    with store.read() as tx:
        assert tx.counts().memories == 0
        assert tx.get_meta("k") is None
    (mid,) = add(store, draft_memory("after"))  # the writer is usable again
    assert mid == 1  # the rolled-back ID was never committed, so nobody ever saw it


def test_write_is_not_reentrant(store: SqliteStore) -> None:
    with store.write(), pytest.raises(VenomError) as info, store.write():
        pass
    assert info.value.code == "failed.internal"


def test_reads_proceed_while_a_write_is_held_open(store: SqliteStore) -> None:
    (before,) = add(store, draft_memory("committed"))
    inside = threading.Event()
    release = threading.Event()
    written: list[int] = []

    def writer() -> None:
        with store.write() as tx:
            written.append(tx.insert_memory(draft_memory("uncommitted")))
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert inside.wait(5)
        for _ in range(3):  # several readers, while the write transaction is open
            with store.read() as tx:
                assert tx.get_memory(before) is not None
                assert tx.get_memory(written[0]) is None  # not committed yet
                assert tx.counts().memories == 1
    finally:
        release.set()
        thread.join(10)
    with store.read() as tx:
        assert tx.get_memory(written[0]) is not None


def test_read_sees_one_snapshot(store: SqliteStore) -> None:
    add(store, draft_memory("one"))
    with store.read() as tx:
        assert tx.counts().memories == 1
        add(store, draft_memory("two"))  # commits from this same thread meanwhile
        assert tx.counts().memories == 1
    with store.read() as tx:
        assert tx.counts().memories == 2


def test_writes_from_many_threads_are_serialized(store: SqliteStore) -> None:
    with store.write() as tx:
        tx.set_meta("counter", "0")

    def bump() -> None:
        for _ in range(25):
            with store.write() as tx:
                value = int(tx.get_meta("counter") or "0")
                tx.set_meta("counter", str(value + 1))

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    with store.read() as rx:
        assert rx.get_meta("counter") == "200"


def test_a_write_waiting_on_an_outside_writer_blocks_nothing_else(store: SqliteStore) -> None:
    """While our writer waits in busy_timeout, other threads keep running and reading, and the
    write goes through as soon as the outside writer commits (not when the timeout ends)."""
    (before,) = add(store, draft_memory("readable"))
    intruder = apsw.Connection(str(store.path))
    intruder.execute("BEGIN IMMEDIATE")
    finished: list[float] = []

    def write() -> None:
        with store.write() as tx:
            tx.insert_memory(draft_memory("waited"))
        finished.append(time.monotonic())

    thread = threading.Thread(target=write)
    thread.start()
    try:
        started = time.monotonic()
        time.sleep(0.2)
        with store.read() as rx:
            assert rx.rank_text(["readable"], EVERYTHING, 5) == [before]
        assert time.monotonic() - started < 1.0  # not stuck behind the waiting writer
        assert not finished
    finally:
        intruder.execute("COMMIT")
        released = time.monotonic()
        intruder.close()
        thread.join(10)
    assert finished
    assert finished[0] - released < 1.0  # well inside the 5 s busy_timeout


def test_external_writer_is_store_busy(store: SqliteStore) -> None:
    intruder = apsw.Connection(str(store.path))
    intruder.execute("BEGIN IMMEDIATE")
    store._writer.set_busy_timeout(50)  # the spec's 5000 ms, shortened for the test
    try:
        with pytest.raises(VenomError) as info, store.write() as tx:
            tx.set_meta("k", "v")
        assert info.value.code == "unavailable.store_busy"
        assert info.value.exit_code == 6
        assert info.value.data == {"path": str(store.path)}
    finally:
        intruder.execute("ROLLBACK")
        intruder.close()
    with store.write() as tx:  # and recovers once the intruder is gone
        tx.set_meta("k", "v")


def test_erase_traces_busy_while_an_old_snapshot_is_held(store: SqliteStore) -> None:
    add(store, draft_memory("first"))
    reader = apsw.Connection(str(store.path), flags=apsw.SQLITE_OPEN_READONLY)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchall()  # pins a WAL snapshot
    add(store, draft_memory("second"))
    store._writer.set_busy_timeout(50)
    try:
        with pytest.raises(VenomError) as info:
            store.erase_traces()
        assert info.value.code == "unavailable.store_busy"
    finally:
        reader.execute("COMMIT")
        reader.close()
    with store.read() as tx:
        assert tx.get_meta("erase_pending") == "1"  # so the next serve finishes it
    store.erase_pending_traces()
    assert Path(f"{store.path}-wal").stat().st_size == 0
    with store.read() as tx:
        assert tx.get_meta("erase_pending") is None
    before = Path(store.path).read_bytes()
    store.erase_pending_traces()  # nothing pending: nothing written
    assert Path(store.path).read_bytes() == before
    assert Path(f"{store.path}-wal").stat().st_size == 0


def test_describe(store: SqliteStore) -> None:
    facts = store.describe()
    assert facts["path"] == str(store.path)
    assert facts["schema_version"] == 3
    assert facts["sqlite_version"] == apsw.sqlite_lib_version()
    assert facts["engine"] == f"sqlite {apsw.sqlite_lib_version()}"
    assert facts["bytes"] >= store.path.stat().st_size > 0


def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s" / "store.db")
    store.close()
    store.close()  # idempotent
    with pytest.raises(VenomError) as info, store.read():
        pass
    assert info.value.code == "failed.internal"
    assert not Path(f"{store.path}-wal").exists()  # the last close checkpointed and cleaned up
