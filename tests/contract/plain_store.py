"""A deliberately plain store: the port over dicts, with a ranking of its own.

It stands for a third party's store (docs/store-contract.md). It shares no code with the
stores in src/ beyond the port's records: one lock, a copied state per write, and a naive
full-text search. Words are runs of letters and digits, lowercased (no stemming, no folding
of accents); a query token is the phrase of its words; a row's score is its phrase hits
weighted by column (title 5, content 1, tags 3), with no IDF and no length normalization;
the snippet is the words around the first hit. It doesn't declare
:class:`~venom_mem_core.ports.RanksLikeFts5`, so the contract's FTS5-exact cases skip.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import attrs

from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, SessionFilter, SpaceSummary, StoreCounts
from venom_mem_core.records import (
    IMPORTANCES,
    Client,
    ContextEntry,
    InactiveSpace,
    Link,
    Memory,
    Provenance,
    Session,
    SpaceDescription,
    Version,
)
from venom_mem_core.search_options import RFC_WEIGHTS, Weights

if TYPE_CHECKING:
    from venom_mem_core.ports import ReadTx, Store, WriteTx

__all__ = ["PlainStore"]

_WORD = re.compile(r"[^\W_]+")
_SNIPPET_WORDS = 30  # either side of the first hit


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _hits(words: Sequence[str], phrase: Sequence[str]) -> list[int]:
    size = len(phrase)
    return [i for i in range(len(words) - size + 1) if list(words[i : i + size]) == phrase]


def _columns(memory: Memory) -> list[tuple[float, list[str]]]:
    return [
        (5.0, _words(memory.title or "")),
        (1.0, _words(memory.content)),
        (3.0, _words(" ".join(memory.tags))),
    ]


@attrs.define
class _Rows:
    memories: dict[int, Memory] = attrs.field(factory=dict)
    versions: dict[tuple[int, int], Version] = attrs.field(factory=dict)
    sessions: dict[int, Session] = attrs.field(factory=dict)
    clients: dict[str, Client] = attrs.field(factory=dict)
    spaces: dict[str, SpaceDescription] = attrs.field(factory=dict)
    meta: dict[str, str] = attrs.field(factory=lambda: {"next_principal": "1"})
    last_memory: int = 0
    last_session: int = 0
    links: list[Link] = attrs.field(factory=list)
    inactive: dict[str, InactiveSpace] = attrs.field(factory=dict)

    def copy(self) -> _Rows:
        return _Rows(
            dict(self.memories),
            dict(self.versions),
            dict(self.sessions),
            dict(self.clients),
            dict(self.spaces),
            dict(self.meta),
            self.last_memory,
            self.last_session,
            list(self.links),
            dict(self.inactive),
        )


class _Tx:
    """Reads and writes over one copy of the rows."""

    def __init__(self, rows: _Rows) -> None:
        self.rows = rows

    # -- reads ---------------------------------------------------------------------------------

    def get_memory(self, id: int) -> Memory | None:
        return self.rows.memories.get(id)

    def find_live_by_content(self, space: str, content_sha256: bytes) -> Memory | None:
        for memory in self.rows.memories.values():
            if (memory.space, memory.content_sha256, memory.deleted) == (
                space,
                content_sha256,
                None,
            ):
                return memory
        return None

    def get_version(self, memory: int, revision: int) -> Version | None:
        return self.rows.versions.get((memory, revision))

    def list_versions(self, memory: int) -> list[Version]:
        kept = [v for (m, _), v in self.rows.versions.items() if m == memory]
        return sorted(kept, key=lambda v: v.revision, reverse=True)

    def rank_text(self, tokens: Sequence[str], where: MemoryFilter, limit: int) -> list[int]:
        return [id_ for id_, _ in self.rank_text_scored(tokens, where, limit)]

    def rank_text_scored(
        self,
        tokens: Sequence[str],
        where: MemoryFilter,
        limit: int,
        weights: Weights = RFC_WEIGHTS,  # bm25's; this store ranks its own way, so unused
    ) -> list[tuple[int, float]]:
        phrases = [_words(token) for token in tokens]
        scored = []
        for memory in self.rows.memories.values():
            if memory.deleted is not None or not where.matches(memory):
                continue
            score = sum(
                weight * len(_hits(words, phrase))
                for phrase in phrases
                if phrase
                for weight, words in _columns(memory)
            )
            if score:
                scored.append((memory.id, score))
        scored.sort(key=lambda hit: (-hit[1], -hit[0]))
        return scored[: max(limit, 0)]

    def text_snippets(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, str]:
        phrases = [_words(token) for token in tokens if _words(token)]
        snippets = {}
        for id_ in ids:
            memory = self.rows.memories.get(id_)
            if memory is None:
                continue
            spans = [match.span() for match in _WORD.finditer(memory.content)]
            words = _words(memory.content)
            first = min((h for p in phrases for h in _hits(words, p)[:1]), default=0)
            start, end = max(0, first - _SNIPPET_WORDS), first + _SNIPPET_WORDS
            begin = 0 if start == 0 else spans[start][0]
            stop = len(memory.content) if end >= len(spans) else spans[end - 1][1]
            snippets[id_] = memory.content[begin:stop]
        return snippets

    def list_memories(self, where: MemoryFilter, after: int | None, limit: int) -> list[Memory]:
        found = [
            m
            for m in self.rows.memories.values()
            if (after is None or m.id < after) and where.matches(m)
        ]
        return sorted(found, key=lambda m: m.id, reverse=True)[:limit]

    def space_summaries(self, access: Access) -> list[SpaceSummary]:
        summaries: dict[str, SpaceSummary] = {}
        for m in self.rows.memories.values():
            if m.deleted is None and access.allows(
                id=m.id, owner=m.author.principal, space=m.space
            ):
                old = summaries.get(m.space, SpaceSummary(space=m.space, memories=0, updated=""))
                summaries[m.space] = attrs.evolve(
                    old, memories=old.memories + 1, updated=max(old.updated, m.updated)
                )
        for space, d in self.rows.spaces.items():
            if access.everything or space in access.spaces:
                old = summaries.get(space, SpaceSummary(space=space, memories=0, updated=""))
                summaries[space] = attrs.evolve(
                    old, updated=max(old.updated, d.updated), description=d.description
                )
        return [summaries[space] for space in sorted(summaries)]

    def space_descriptions(self, spaces: Sequence[str]) -> dict[str, SpaceDescription]:
        return {s: self.rows.spaces[s] for s in spaces if s in self.rows.spaces}

    def _live(self, where: MemoryFilter) -> list[Memory]:
        return [m for m in self.rows.memories.values() if m.deleted is None and where.matches(m)]

    def context_entries(self, where: MemoryFilter, offset: int, limit: int) -> list[ContextEntry]:
        def key(m: Memory) -> tuple[int, str, int]:
            return (-IMPORTANCES.index(m.importance), m.updated, m.id)

        rows = sorted(self._live(where), key=key, reverse=True)
        return [ContextEntry.of(m) for m in rows[offset : offset + limit]]

    def count_memories(self, where: MemoryFilter) -> int:
        return len(self._live(where))

    def get_session(self, id: int) -> Session | None:
        return self.rows.sessions.get(id)

    def find_session(self, harness: str, harness_session: str) -> Session | None:
        for s in self.rows.sessions.values():
            if (s.harness, s.harness_session) == (harness, harness_session):
                return s
        return None

    def list_sessions(self, where: SessionFilter, after: int | None, limit: int) -> list[Session]:
        found = [
            s
            for s in self.rows.sessions.values()
            if (after is None or s.id < after)
            and where.access.allows(id=s.id, owner=s.reported_by.principal)
            and where.harness in (None, s.harness)
            and where.harness_session in (None, s.harness_session)
            and where.parent in (None, s.parent)
        ]
        return sorted(found, key=lambda s: s.id, reverse=True)[:limit]

    def get_client(self, name: str) -> Client | None:
        return self.rows.clients.get(name)

    def get_client_by_principal(self, principal: str) -> Client | None:
        return next((c for c in self.rows.clients.values() if c.principal == principal), None)

    def list_clients(self) -> list[Client]:
        return [self.rows.clients[name] for name in sorted(self.rows.clients)]

    def get_meta(self, key: str) -> str | None:
        return self.rows.meta.get(key)

    def counts(self) -> StoreCounts:
        live = sum(1 for m in self.rows.memories.values() if m.deleted is None)
        return StoreCounts(
            memories=live,
            deleted=len(self.rows.memories) - live,
            versions=len(self.rows.versions),
            sessions=len(self.rows.sessions),
            vectors=0,
            pending=live,
        )

    def links_of(self, memory: int, include_removed: bool = False) -> list[Link]:
        return [
            link
            for link in self.rows.links
            if memory in (link.source, link.target) and (include_removed or not link.removed)
        ]

    def find_link(self, source: int, target: int, relation: str) -> Link | None:
        found = [
            link
            for link in self.links_of(source)
            if link.target == target and link.relation == relation
        ]
        return found[0] if found else None

    def superseded_ids(self) -> frozenset[int]:
        return frozenset(
            link.target
            for link in self.rows.links
            if link.relation == "supersedes"
            and not link.removed
            and not self.rows.memories[link.source].deleted
        )

    def inactive_spaces(self) -> dict[str, InactiveSpace]:
        return dict(self.rows.inactive)

    # -- writes --------------------------------------------------------------------------------

    def _keep_unique(self, memory: Memory) -> None:
        same = self.find_live_by_content(memory.space, memory.content_sha256)
        if memory.deleted is None and same is not None and same.id != memory.id:
            raise VenomError("conflict.memory_duplicate", "duplicate", {"id": f"m{same.id}"})

    def insert_memory(self, memory: Memory) -> int:
        self._keep_unique(memory)
        self.rows.last_memory += 1
        self.rows.memories[self.rows.last_memory] = attrs.evolve(memory, id=self.rows.last_memory)
        return self.rows.last_memory

    def replace_memory(self, memory: Memory) -> None:
        self._keep_unique(memory)
        self.rows.memories[memory.id] = memory

    def delete_memory(self, id: int) -> None:
        self.rows.memories.pop(id, None)
        self.prune_versions(id, 0)
        self.rows.links = [link for link in self.rows.links if id not in (link.source, link.target)]

    def insert_link(self, link: Link) -> int:
        number = max((old.id for old in self.rows.links), default=0) + 1
        self.rows.links.append(attrs.evolve(link, id=number))
        return number

    def remove_link(self, id: int, removed: str, by: Provenance) -> None:
        self.rows.links = [
            attrs.evolve(link, removed=removed, removed_by=by) if link.id == id else link
            for link in self.rows.links
        ]

    def set_space_inactive(self, inactive: InactiveSpace) -> None:
        self.rows.inactive.setdefault(inactive.space, inactive)

    def set_space_active(self, space: str) -> None:
        self.rows.inactive.pop(space, None)

    def insert_version(self, version: Version) -> None:
        self.rows.versions[(version.memory, version.revision)] = version

    def prune_versions(self, memory: int, keep: int) -> None:
        for version in self.list_versions(memory)[max(keep, 0) :]:
            del self.rows.versions[(memory, version.revision)]

    def expired_tombstones(self, deleted_before: str) -> list[Memory]:
        old = [m for m in self.rows.memories.values() if m.deleted and m.deleted < deleted_before]
        return sorted(old, key=lambda m: m.id)

    def insert_session(self, session: Session) -> int:
        self.rows.last_session += 1
        self.rows.sessions[self.rows.last_session] = attrs.evolve(
            session, id=self.rows.last_session
        )
        return self.rows.last_session

    def replace_session(self, session: Session) -> None:
        self.rows.sessions[session.id] = session

    def delete_session(self, id: int) -> None:
        self.rows.sessions.pop(id, None)
        for s in list(self.rows.sessions.values()):
            if s.parent == id:
                self.rows.sessions[s.id] = attrs.evolve(s, parent=None)
        for m in list(self.rows.memories.values()):
            if m.session == id:
                self.rows.memories[m.id] = attrs.evolve(m, session=None)

    def insert_client(self, client: Client) -> None:
        if client.name in self.rows.clients:
            raise VenomError("conflict.client_exists", f"a client named {client.name} exists")
        self.rows.clients[client.name] = client

    def delete_client(self, name: str) -> None:
        self.rows.clients.pop(name, None)

    def set_meta(self, key: str, value: str) -> None:
        self.rows.meta[key] = value

    def set_space_description(self, description: SpaceDescription) -> None:
        self.rows.spaces[description.space] = description

    def delete_space_description(self, space: str) -> None:
        self.rows.spaces.pop(space, None)


class PlainStore:
    """The store port over dicts: one writer at a time, a copy of the rows per write."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows = _Rows()

    @contextmanager
    def read(self) -> Iterator[ReadTx]:
        yield _Tx(self._rows)  # a write replaces the rows, never changes them

    @contextmanager
    def write(self) -> Iterator[WriteTx]:
        with self._lock:
            tx = _Tx(self._rows.copy())
            yield tx
            self._rows = tx.rows

    def erase_traces(self) -> None:
        with self.write() as tx:
            assert isinstance(tx, _Tx)
            tx.rows.meta.pop("erase_pending", None)

    def erase_pending_traces(self) -> None:
        self.erase_traces()

    def describe(self) -> dict[str, Any]:
        return {"path": ":plain:", "schema_version": 1, "sqlite_version": "none", "bytes": 0}

    def close(self) -> None:
        self._rows = _Rows()


if TYPE_CHECKING:
    _check: Store = PlainStore()
