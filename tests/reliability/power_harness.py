"""The power-loss harness: a stream of memory verbs through the use cases, on the real store
(:class:`SqliteStore` with its real connection settings) over the :class:`FaultyVFS` shim,
with the power cut at a random point of each round.

One round: power on with a cold cache, open the store, check everything acknowledged so far
(and settle the one request that was in flight at the last cut), arm a cut, then run verbs
until the cut fails one of them. The failed request was never acknowledged, so its change
may be there or not, but whole: the check accepts its "before" or its "after" and nothing
else. Everything acknowledged before it must be there exactly.

Used by tests/reliability/test_power_loss.py and by bench/soak.py.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from pathlib import Path
from typing import Literal

import attrs

from tests.reliability.support import integrity_problems
from tests.support.faulty_vfs import FaultyVFS, Keep
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.clock import SystemClock
from venom_mem_core.errors import VenomError
from venom_mem_core.local import LocalClient
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.principals import OWNER

__all__ = ["Expected", "PowerLossRun"]

Op = Literal["add", "update", "delete", "restore", "purge", "search"]
_OPS: tuple[Op, ...] = ("add", "update", "delete", "restore", "purge", "search")
_WEIGHTS = (50, 20, 9, 9, 6, 6)
SPACES = ("user", "project/power", "project/cut")


@attrs.frozen
class Expected:
    """What an acknowledged memory must look like after any restart."""

    space: str
    content: str
    revision: int
    deleted: bool


@attrs.define
class InFlight:
    """The request the cut failed: its memory may be in either state, never in between."""

    op: Op
    id: str | None
    before: Expected | None
    after: Expected | None


@attrs.define
class PowerLossRun:
    path: Path
    vfs: FaultyVFS
    rng: random.Random
    max_ops: int = 40
    full_check_every: int = 1  # other rounds check what changed since, and a sample
    sample: int = 200
    model: dict[str, Expected] = attrs.field(factory=dict)
    purged: set[str] = attrs.field(factory=set)
    figures: Counter[str] = attrs.field(factory=Counter)
    losses: list[str] = attrs.field(factory=list)
    _inflight: InFlight | None = None
    _serial: int = 0
    _touched: set[str] = attrs.field(factory=set)

    # -- one round ----------------------------------------------------------------------

    def round(self) -> None:
        """Open, check, run until the power goes, close; leaves the power restored."""
        self.figures["rounds"] += 1
        store = SqliteStore.open(self.path, vfs=self.vfs.vfs_name)
        try:
            client = LocalClient(App(store=store, clock=SystemClock()), OWNER)
            self.check(client, store)
            self._arm()
            for _ in range(self.max_ops):
                if not self._step(client):
                    break
            else:
                self.vfs.cut_power(self._keep())
                self.figures["cuts_between_requests"] += 1
        finally:
            store.close()
        self.vfs.restore_power()

    def _keep(self) -> Keep:
        return "random" if self.rng.random() < 0.5 else "none"

    def _arm(self) -> None:
        """A cut at a random write, truncate or fsync; at a random fsync (the commit points,
        and the checkpoint's); or at a truncate (a checkpoint resetting the WAL)."""
        keep, roll = self._keep(), self.rng.random()
        if roll < 0.4:
            self.vfs.cut_power_at(self.rng.randint(1, 1500), keep)
        elif roll < 0.85:
            self.vfs.cut_power_at(self.rng.randint(1, 30), keep, frozenset({"sync"}))
        else:
            self.vfs.cut_power_at(self.rng.randint(1, 2), keep, frozenset({"truncate"}))

    # -- the stream of requests -----------------------------------------------------------

    def _pick(self, *, deleted: bool) -> str | None:
        ids = sorted(i for i, e in self.model.items() if e.deleted == deleted)
        return self.rng.choice(ids) if ids else None

    def _content(self) -> str:
        self._serial += 1
        size = self.rng.choice((20, 300, 3000, 20000))
        filler = "".join(self.rng.choice("abcdefghij klmnop") for _ in range(size))
        return f"marker{self._serial}q power memory, round {self.figures['rounds']}: {filler}"

    def _step(self, client: LocalClient) -> bool:
        """One request; False once the cut has failed it."""
        op: Op = self.rng.choices(_OPS, _WEIGHTS)[0]
        inflight = InFlight(op=op, id=None, before=None, after=None)
        try:
            if op == "add":
                space = self.rng.choice(SPACES)
                content = self._content()
                inflight.after = Expected(space, content, 1, False)
                out = client.call("memory.add", {"space": space, "content": content})
                self.model[out["id"]] = inflight.after
                self._touched.add(out["id"])
            elif op == "search":
                client.call("memory.search", {"query": "power memory", "limit": 5})
            elif not self._change(client, op, inflight):
                return True  # nothing to change yet
        except VenomError as error:
            if error.code != "failed.store":
                raise
            self._inflight = inflight
            self.figures["requests_failed_by_the_cut"] += 1
            self.figures[f"cut_during_{op}"] += 1
            return False
        self.figures[f"acknowledged_{op}"] += 1
        return True

    def _change(self, client: LocalClient, op: Op, inflight: InFlight) -> bool:
        id = self._pick(deleted=op == "restore")
        if id is None:
            return False
        before = self.model[id]
        inflight.id, inflight.before = id, before
        self._touched.add(id)
        if op == "update":
            content = self._content()
            inflight.after = attrs.evolve(before, content=content, revision=before.revision + 1)
            out = client.call(
                "memory.update", {"id": id, "revision": before.revision, "content": content}
            )
            assert out["revision"] == before.revision + 1
            self.model[id] = inflight.after
        elif op == "delete":
            inflight.after = attrs.evolve(before, revision=before.revision + 1, deleted=True)
            client.call("memory.delete", {"id": id, "revision": before.revision})
            self.model[id] = inflight.after
        elif op == "restore":
            inflight.after = attrs.evolve(before, revision=before.revision + 1, deleted=False)
            client.call("memory.restore", {"id": id})
            self.model[id] = inflight.after
        elif op == "purge":  # deletes, then checkpoints the WAL into the database (TRUNCATE)
            client.call("memory.purge", {"id": id})
            del self.model[id]
            self.purged.add(id)
        return True

    # -- what a restart must show -----------------------------------------------------------

    def _actual(self, client: LocalClient, id: str) -> Expected | None:
        try:
            got = client.call("memory.get", {"id": id, "include_deleted": True})
        except VenomError as error:
            if error.code == "not_found.memory":
                return None
            raise
        history = client.call("memory.history", {"id": id})["versions"]
        if history[0]["revision"] != got["revision"]:
            self.losses.append(f"{id}: revision {got['revision']} without its version row")
        deleted = "deleted" in got
        marker = got["content"].split(" ", 1)[0]
        hits = client.call("memory.search", {"query": marker, "limit": 5})["results"]
        if (id in {hit["id"] for hit in hits}) == deleted:
            self.losses.append(f"{id}: the search index disagrees with deleted={deleted}")
        return Expected(got["space"], got["content"], got["revision"], deleted)

    def _find_added(self, store: SqliteStore, expected: Expected) -> str | None:
        digest = hashlib.sha256(expected.content.encode()).digest()
        with store.read() as tx:
            found = tx.find_live_by_content(expected.space, digest)
        return None if found is None else f"m{found.id}"

    def check(self, client: LocalClient, store: SqliteStore) -> None:
        """Everything acknowledged is there exactly; the in-flight request is all or nothing;
        the database and its search index pass their integrity checks."""
        self.figures["restarts_checked"] += 1
        for problem in integrity_problems(self.path, vfs=self.vfs.vfs_name):
            self.losses.append(f"integrity: {problem}")
        inflight, self._inflight = self._inflight, None
        if inflight is not None:
            self._settle(client, store, inflight)
        for id, expected in self._to_check():
            actual = self._actual(client, id)
            if actual != expected:
                self.losses.append(f"{id}: acknowledged {expected}, found {actual}")
                if actual is None:
                    del self.model[id]
                else:
                    self.model[id] = actual  # go on from what is there
            else:
                self.figures["memory_checks"] += 1
        for id in sorted(self.purged):
            if self._actual(client, id) is not None:
                self.losses.append(f"{id}: purged, and back after a restart")

    def _to_check(self) -> list[tuple[str, Expected]]:
        """Every memory on a full round; otherwise those changed since the last check and a
        random sample of the rest (the final check always looks at every one)."""
        ids = sorted(self.model)
        if self.figures["rounds"] % self.full_check_every != 0:
            rest = [i for i in ids if i not in self._touched]
            picked = set(self.rng.sample(rest, min(self.sample, len(rest))))
            ids = [i for i in ids if i in self._touched or i in picked]
        self._touched.clear()
        return [(i, self.model[i]) for i in ids]

    def _settle(self, client: LocalClient, store: SqliteStore, inflight: InFlight) -> None:
        if inflight.op == "add" and inflight.after is not None:
            id = self._find_added(store, inflight.after)
            if id is not None:
                actual = self._actual(client, id)
                if actual != inflight.after:
                    self.losses.append(f"half an add: {id} is {actual}")
                self.model[id] = inflight.after
                self.figures["inflight_found_applied"] += 1
            else:
                self.figures["inflight_found_absent"] += 1
            return
        if inflight.id is None:
            return
        actual = self._actual(client, inflight.id)
        if inflight.op == "purge":
            outcome = actual is None or actual == inflight.before
            if actual is None:
                self.model.pop(inflight.id, None)
                self.purged.add(inflight.id)
        else:
            outcome = actual in (inflight.before, inflight.after)
            if actual is not None:
                self.model[inflight.id] = actual
        if not outcome:
            self.losses.append(f"half a {inflight.op} on {inflight.id}: {actual}")
        applied = actual != inflight.before
        self.figures["inflight_found_applied" if applied else "inflight_found_absent"] += 1

    def final_check(self) -> None:
        """A last cold start on the default VFS: what a restarted machine would read."""
        store = SqliteStore.open(self.path)
        try:
            client = LocalClient(App(store=store, clock=SystemClock()), OWNER)
            self._inflight_final(client, store)
        finally:
            store.close()

    def _inflight_final(self, client: LocalClient, store: SqliteStore) -> None:
        for problem in integrity_problems(self.path):
            self.losses.append(f"integrity: {problem}")
        inflight, self._inflight = self._inflight, None
        if inflight is not None:
            self._settle(client, store, inflight)
        for id, expected in sorted(self.model.items()):
            if self._actual(client, id) != expected:
                self.losses.append(f"{id}: lost at the final cold start")
        self.figures["memories_at_the_end"] = sum(1 for e in self.model.values() if not e.deleted)
