"""Purges cut by kill -9 between their commit and their checkpoint (issue 13, item 1).

Each round adds a memory whose text carries a fresh marker (and updates it, so a kept version
holds the text too), then sends ``memory.purge`` and kills the real ``venom-mem serve`` with
SIGKILL a random moment later. In half the rounds a reader holds an old snapshot, as a
``sqlite3 .backup`` does, so the purge's checkpoint waits on it and the kill lands between the
commit and the checkpoint; in the others the WAL holds a few hundred KiB of other memories, so
the checkpoint takes long enough to be cut too. After the kill the reader lets go and the
daemon is started again; once it answers, the database, its ``-wal`` and its ``-shm`` are
searched byte by byte for the marker. A purge that committed (the memory is gone) must have
left it in no file; one that didn't commit must have left the memory whole, and an
acknowledged one must have committed.
"""

from __future__ import annotations

import contextlib
import json
import random
import select
import signal
import socket
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import apsw
import attrs

from tests.support.daemon_env import VENOM_MEM, World

READY_TIMEOUT_S = 20.0


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


class Owner:
    """A raw owner connection to the daemon: frames and nothing more."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.settimeout(30)
        self._reader = sock.makefile("rb")
        self._ids = 1
        assert "ok" in self.call("hello", {"auth": {"token": "@owner"}})

    def send(self, verb: str, params: dict[str, Any]) -> None:
        self._ids += 1
        frame = {"id": self._ids, "verb": verb, "params": params}
        self.sock.sendall(json.dumps(frame).encode() + b"\n")

    def reply(self) -> Any:
        line = self._reader.readline()
        return json.loads(line) if line else None

    def call(self, verb: str, params: dict[str, Any]) -> Any:
        self.send(verb, params)
        return self.reply()

    def ok(self, verb: str, params: dict[str, Any]) -> Any:
        reply = self.call(verb, params)
        assert reply is not None, (verb, reply)
        assert "ok" in reply, (verb, reply)
        return reply["ok"]

    def ready_reply(self) -> Any:
        """A reply already sent, or None (the daemon was killed before it answered)."""
        readable, _, _ = select.select([self.sock], [], [], 0)
        if not readable:
            return None
        with contextlib.suppress(OSError, ValueError):
            return self.reply()
        return None

    def close(self) -> None:
        self._reader.close()
        self.sock.close()


@attrs.define
class PurgeCutRun:
    world: World
    rng: random.Random
    figures: Counter[str] = attrs.field(factory=Counter)
    problems: list[str] = attrs.field(factory=list)
    _daemon: subprocess.Popen[bytes] | None = None

    def start(self) -> Owner:
        self._daemon = subprocess.Popen(
            [VENOM_MEM, "serve"],
            env=self.world.environ(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self._daemon.poll() is None, "venom-mem serve exited at start"
            sock = _connect(self.world.socket)
            if sock is not None:
                return Owner(sock)
            time.sleep(0.01)
        raise AssertionError("venom-mem serve did not come up")

    def kill(self) -> None:
        if self._daemon is not None:
            self._daemon.send_signal(signal.SIGKILL)
            self._daemon.wait(timeout=30)
            self._daemon = None

    def stop(self) -> None:
        if self._daemon is not None:
            self._daemon.terminate()
            self._daemon.wait(timeout=30)
            self._daemon = None

    def _hold_reader(self) -> apsw.Connection:
        reader = apsw.Connection(str(self.world.store), flags=apsw.SQLITE_OPEN_READONLY)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchall()  # pins this snapshot
        return reader

    def traces(self, marker: bytes) -> list[str]:
        found = []
        for suffix in ("", "-wal", "-shm"):
            path = Path(f"{self.world.store}{suffix}")
            with contextlib.suppress(FileNotFoundError):
                if marker in path.read_bytes():
                    found.append(path.name)
        return found

    def round(self, owner: Owner, *, with_reader: bool) -> Owner:
        """One cut purge on a serving daemon; returns the next serve's connection."""
        marker = f"purgecut{self.rng.getrandbits(64):016x}"
        added = owner.ok(
            "memory.add", {"space": "cuts", "content": f"secret {marker} text", "title": marker}
        )
        owner.ok(
            "memory.update",
            {"id": added["id"], "revision": 1, "content": f"still {marker} secret"},
        )
        reader = None
        if with_reader:
            reader = self._hold_reader()
            delay = self.rng.uniform(0.05, 2.0)  # busy_timeout is 5 s: the checkpoint waits
        else:
            for n in range(self.rng.randrange(4, 12)):  # a WAL worth checkpointing for a while
                filler = f"filler {n} {self.rng.getrandbits(32)} " + "words " * 6000
                owner.ok("memory.add", {"space": "filler", "content": filler})
            delay = self.rng.uniform(0.0, 0.03)
        owner.send("memory.purge", {"id": added["id"]})
        time.sleep(delay)
        self.kill()
        answered = owner.ready_reply()
        owner.close()
        if reader is not None:
            reader.execute("COMMIT")
            reader.close()
        return self._check(marker, added["id"], answered, with_reader)

    def _check(self, marker: str, id: str, answered: Any, with_reader: bool) -> Owner:
        owner = self.start()  # the next serve: the erase happens before the socket exists
        text = self.traces(marker.encode())  # as soon as the socket answers
        got = owner.call("memory.get", {"id": id})
        text = self.traces(marker.encode())
        mode = "reader" if with_reader else "no_reader"
        self.figures["rounds"] += 1
        self.figures[f"rounds_{mode}"] += 1
        acknowledged = answered is not None and "ok" in answered
        busy = answered is not None and answered.get("error", {}).get("code", "").endswith("busy")
        self.figures["acknowledged"] += acknowledged
        self.figures["answered_busy"] += busy
        if "error" in got and got["error"]["code"] == "not_found.memory":
            self.figures["committed"] += 1
            self.figures[f"committed_{mode}"] += 1
            self.figures["committed_unacknowledged"] += not acknowledged
            if text:
                self.figures["committed_with_text_left"] += 1
                self.problems.append(f"{id}: purged, but {marker} is still in {text}")
        else:
            self.figures["not_committed"] += 1
            if acknowledged:
                self.problems.append(f"{id}: purge acknowledged, but the memory is back")
            elif "ok" not in got or marker not in got["ok"]["content"]:
                self.problems.append(f"{id}: purge not committed, but the memory is {got}")
        return owner


def run_rounds(world: World, seed: int, rounds: int) -> PurgeCutRun:
    run = PurgeCutRun(world, random.Random(seed))
    try:
        owner = run.start()
        for n in range(rounds):
            owner = run.round(owner, with_reader=n % 2 == 0)
        owner.close()
    finally:
        run.stop()
    return run
