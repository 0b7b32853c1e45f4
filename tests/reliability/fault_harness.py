"""The I/O-fault scenario: one fault in the store's writes or fsyncs under an in-process
daemon on a real unix socket, then a restart. Used by tests/reliability/test_io_faults.py and
bench/soak.py; every check is an assert.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from tests.reliability.support import in_process_daemon, integrity_problems
from tests.support.faulty_vfs import FaultyVFS
from venom_mem_adapters.client import Connection, connect
from venom_mem_core.errors import VenomError

__all__ = ["Kind", "run_fault_case"]

Kind = Literal["write", "sync"]


def owner(env: dict[str, str]) -> Connection:
    return connect({**env, "VENOM_MEM_TOKEN": "@owner"}, may_start=False)


def content(n: int) -> str:
    return f"fault note {n}: " + "the quick brown fox jumps over the lazy dog " * (1 + n % 40)


def expect_failed_store(error: VenomError, store_path: Path) -> None:
    assert error.code == "failed.store", error
    assert error.data.get("path") == str(store_path), error.data
    assert str(store_path) in error.message


def refused_with(conn: Connection, verb: str, params: dict[str, Any]) -> VenomError:
    try:
        conn.call(verb, params)
    except VenomError as error:
        return error
    raise AssertionError(f"{verb} was accepted after a store failure")


def run_fault_case(
    root: Path, vfs: FaultyVFS, kind: Kind, nth: int, restart: str
) -> dict[str, int]:
    """Serve, fail the ``nth`` write or fsync of a stream of adds, check the latch and the
    reads, restart (``clean``, or ``power-cut`` on top), check the store. Returns figures."""
    acknowledged: dict[str, str] = {}
    failed_text: str | None = None
    with in_process_daemon(root, vfs=vfs.vfs_name) as served:
        store_path = served.store_path
        with owner(served.env) as conn:
            for n in range(3):
                acknowledged[
                    conn.call("memory.add", {"space": "user", "content": content(n)})["id"]
                ] = content(n)
            vfs.fail_nth(kind, nth)
            for n in range(3, 400):
                try:
                    out = conn.call("memory.add", {"space": "user", "content": content(n)})
                except VenomError as error:
                    expect_failed_store(error, store_path)
                    failed_text = content(n)
                    break
                acknowledged[out["id"]] = content(n)
            assert failed_text is not None, "the fault never fired"
            assert not vfs.armed
            assert vfs.stats[f"faults_{kind}"] == 1

            # Writes are refused without reaching the store: no write, no fsync, no retry.
            touched = (vfs.stats["write"], vfs.stats["sync"], vfs.stats["truncate"])
            first_id = next(iter(acknowledged))
            refused: list[tuple[str, dict[str, Any]]] = [
                ("memory.add", {"space": "user", "content": "after the fault"}),
                ("memory.add", {"space": "user", "content": failed_text}),
                ("memory.update", {"id": first_id, "revision": 1, "content": "changed"}),
                ("memory.delete", {"id": first_id, "revision": 1}),
                ("session.start", {"harness": "faults"}),
                ("client.add", {"name": "late", "grants": []}),
                ("grant.issue", {"grants": [], "ttl": 60}),
            ]
            for verb, params in refused:
                refusal = refused_with(conn, verb, params)
                expect_failed_store(refusal, store_path)
                assert "restart" in str(refusal.data.get("fix", ""))
            assert (vfs.stats["write"], vfs.stats["sync"], vfs.stats["truncate"]) == touched

            # Reads go on, on this connection and on a new one.
            for id, text in acknowledged.items():
                assert conn.call("memory.get", {"id": id})["content"] == text
        with owner(served.env) as fresh:
            assert fresh.call("ping")["pong"] is True
            hits = fresh.call("memory.search", {"query": "fox", "limit": 100})["results"]
            assert {h["id"] for h in hits} >= set(acknowledged)
            assert fresh.call("store.status")["path"] == str(store_path)
            # doctor says writes stopped, and what to do.
            report = fresh.call("doctor")
            opened = next(c for c in report["checks"] if c["id"] == "store.open")
            assert opened["status"] == "fail", opened
            assert "stopped taking writes" in opened["message"]
            assert "restart" in opened["fix"]
            assert report["status"] == 2

    if restart == "power-cut":
        vfs.cut_power("random")  # the machine goes down too: only synced data is left
        vfs.restore_power()

    with in_process_daemon(root, vfs=vfs.vfs_name) as served:
        assert integrity_problems(store_path, vfs=vfs.vfs_name) == []
        with owner(served.env) as conn:
            for id, text in acknowledged.items():
                assert conn.call("memory.get", {"id": id})["content"] == text
            digest = hashlib.sha256(failed_text.encode()).digest()
            with served.store.read() as tx:
                failed_row = tx.find_live_by_content("user", digest)
            if failed_row is not None:  # complete: row, version and search index agree
                got = conn.call("memory.get", {"id": f"m{failed_row.id}"})
                assert got["content"] == failed_text
                assert got["revision"] == 1
                assert conn.call("memory.history", {"id": f"m{failed_row.id}"})["versions"]
            again = conn.call("memory.add", {"space": "user", "content": "after the restart"})
            assert again["changed"] is True
    return {
        "faults_injected": vfs.stats["faults_write"] + vfs.stats["faults_sync"],
        "write_faults": vfs.stats["faults_write"],
        "fsync_faults": vfs.stats["faults_sync"],
        "acknowledged_before_the_fault": len(acknowledged),
        "writes_refused_after": len(refused),
        "failed_request_found_complete": int(failed_row is not None),
        "failed_request_found_absent": int(failed_row is None),
        "restarts_after_a_power_cut": int(restart == "power-cut"),
    }
