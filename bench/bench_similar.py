"""The near-duplicate threshold of memory.add's ``similar`` (ADR 0043): precision and recall
of each threshold, on pairs written down and on LoCoMo's repeated facts.

A pair (a, b) is scored as memory.add scores it when b is added after a:
:func:`venom_mem_core.similarity.normalized_scores` of b, read for a (the store's BM25 of a
for b's content words, over b's own). Predicted "similar" at a threshold t when the score is
at least t; memory.add shows such a memory when at most two others score higher.

- ``written, 2 memories``: tests/fixtures/similar_pairs.json (``same``: restatements and
  newer versions of one fact; ``distinct``: the same topic, another fact), each pair alone
  in a fresh in-memory store (FTS5's BM25, whose IDF is at its floor with two rows).
- ``written, 600 memories``: the same pairs, each in a space of its own, in one SQLite store
  that also holds LoCoMo conversation 30's turns in another space, so the IDF is a used
  store's.
- ``LoCoMo repeated``: one SQLite store per conversation, a memory per turn (``speaker:
  text``), added in order through memory.add. Positives: two turns by the same speaker cited
  together as the evidence of one question of category 1 (multi-hop) or 4 (single-hop):
  the fact said again. Negatives: as many pairs (seed 28) of evidence turns by the same
  speaker of the same conversation, never cited together: near-topic, another fact.
- ``LoCoMo noise``: the share of memory.add calls, over every turn of the five
  conversations added in order, whose result would carry ``similar`` at that threshold
  (any earlier turn scoring at least t). Chat turns are mostly distinct, so this is a
  false-alarm rate an agent would see.

- ``cost``: CPU time (user + sys of this process, so the machine's load doesn't count) of
  memory.add on a SQLite store holding every LoCoMo turn (2,760 memories), with ``similar``
  and with it switched off (``memory.similar_threshold = 0``), over 400 new texts each,
  beside the floor: with ``similar`` at most 1.5 times the add without it.

Run: ``.venv/bin/python bench/bench_similar.py`` (about a minute of CPU).
"""

from __future__ import annotations

import json
import random
import re
import resource
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.clock import FixedClock
from venom_mem_core.grants import Access
from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.local import LocalClient
from venom_mem_core.ports import Store
from venom_mem_core.records import Principal
from venom_mem_core.similarity import SIMILAR_THRESHOLD, normalized_scores
from venom_mem_core.usecases.app import App, MemorySettings

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "tests" / "fixtures" / "similar_pairs.json"
LOCOMO = ROOT.parent.parent / "shared" / "data" / "locomo-dev"
if not LOCOMO.is_dir():
    LOCOMO = Path("/work/shared/data/locomo-dev")
CONVERSATIONS = ("26", "30", "41", "42", "43")
THRESHOLDS = (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9)
EVERYTHING = Access(everything=True)
OWNER = Principal(id="owner", label="owner")
ALL = 100_000  # candidates: every matching row, so each pair's score is exact
COST_ADDS = 400
COST_FLOOR = 1.5  # memory.add with similar over memory.add without, at most
SHOW = 20  # flagged LoCoMo adds printed, to judge by eye
Scored = list[tuple[float, bool]]  # (score, is a duplicate)


def client(store: Store, settings: MemorySettings | None = None) -> LocalClient:
    app = App(store=store, clock=FixedClock(), settings=settings or MemorySettings())
    return LocalClient(app, OWNER)


def add(vm: LocalClient, space: str, content: str) -> int:
    return int(str(vm.call("memory.add", {"space": space, "content": content})["id"])[1:])


def pair_score(store: Store, first: int, second: int) -> float:
    with store.read() as tx:
        memory = tx.get_memory(second)
        assert memory is not None
        return normalized_scores(tx, memory, EVERYTHING, candidates=ALL).get(first, 0.0)


def turns(number: str) -> Iterator[tuple[str, str, str]]:
    """(dia_id, speaker, memory text) of a conversation, in order."""
    data = json.loads((LOCOMO / f"{number}.json").read_text())
    sessions = sorted(
        (int(key.split("_")[1]), value)
        for key, value in data.items()
        if re.fullmatch(r"session_\d+", key)
    )
    for _, session in sessions:
        for turn in session:
            yield turn["dia_id"], turn["speaker"], f"{turn['speaker']}: {turn['text']}"


def written(pairs: dict[str, list[list[str]]], background: bool, directory: Path) -> Scored:
    scored: Scored = []
    labelled = [(pair, True) for pair in pairs["same"]] + [
        (pair, False) for pair in pairs["distinct"]
    ]
    if not background:
        for (first, second), same in labelled:
            alone = InMemoryStore()
            vm = client(alone)
            a, b = add(vm, "pair", first), add(vm, "pair", second)
            scored.append((pair_score(alone, a, b), same))
        return scored
    with SqliteStore.open(directory / "written.db") as store:
        vm = client(store)
        for _, _, text in turns("30"):
            add(vm, "background", text)
        for index, ((first, second), same) in enumerate(labelled):
            a, b = add(vm, f"pair/{index}", first), add(vm, f"pair/{index}", second)
            scored.append((pair_score(store, a, b), same))
    return scored


def _evidence(data: dict[str, object]) -> list[list[str]]:
    groups = []
    for qa in data["qa"]:  # type: ignore[attr-defined]
        if qa.get("category") not in (1, 4):
            continue
        ids = [part for raw in qa.get("evidence", []) for part in re.split(r"[;\s]+", raw)]
        groups.append([i for i in ids if re.fullmatch(r"D\d+:\d+", i)])
    return groups


def locomo(directory: Path) -> tuple[Scored, list[tuple[float, str, str]]]:
    """The repeated-fact pairs' scores, and each add's best score against earlier turns,
    with the two texts."""
    rng = random.Random(28)
    scored: Scored = []
    best: list[tuple[float, str, str]] = []
    for number in CONVERSATIONS:
        data = json.loads((LOCOMO / f"{number}.json").read_text())
        with SqliteStore.open(directory / f"locomo-{number}.db") as store:
            vm = client(store)
            ids: dict[str, int] = {}
            speakers: dict[str, str] = {}
            texts: dict[int, str] = {}
            for dia, speaker, text in turns(number):
                if dia in ids:
                    continue
                result = vm.call("memory.add", {"space": "chat", "content": text})
                if not result["changed"]:
                    continue  # the same words said again: dedup, not near-duplicate
                ids[dia] = int(str(result["id"])[1:])
                speakers[dia] = speaker
                texts[ids[dia]] = text
                score, other = _best_earlier(store, ids[dia])
                best.append((score, texts.get(other, ""), text))
            together: set[frozenset[str]] = set()
            positives: set[tuple[str, str]] = set()
            cited: set[str] = set()
            for group in _evidence(data):
                known = [d for d in dict.fromkeys(group) if d in ids]
                cited.update(known)
                for i, x in enumerate(known):
                    for y in known[i + 1 :]:
                        together.add(frozenset((x, y)))
                        if speakers[x] == speakers[y]:
                            positives.add(tuple(sorted((x, y), key=ids.__getitem__)))  # type: ignore[arg-type]
            pool = sorted(cited)
            negatives: set[tuple[str, str]] = set()
            while len(negatives) < len(positives) and len(pool) > 1:
                x, y = sorted(rng.sample(pool, 2), key=ids.__getitem__)
                if speakers[x] == speakers[y] and frozenset((x, y)) not in together:
                    negatives.add((x, y))
            for pairs, same in ((positives, True), (negatives, False)):
                for x, y in sorted(pairs):
                    scored.append((pair_score(store, ids[x], ids[y]), same))
    return scored, best


def _best_earlier(store: Store, id_: int) -> tuple[float, int]:
    """The best score among earlier memories, and which one (0 when none matched)."""
    with store.read() as tx:
        memory = tx.get_memory(id_)
        assert memory is not None
        scores = normalized_scores(tx, memory, EVERYTHING, candidates=ALL)
    earlier = [(score, other) for other, score in scores.items() if other < id_]
    return max(earlier, default=(0.0, 0))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cost(directory: Path) -> tuple[float, float]:
    """CPU ms per memory.add with similar, and with it off, on a store of every turn."""
    texts = [text for number in CONVERSATIONS for _, _, text in turns(number)]
    fresh = [f"Later, {text}" for text in texts[: COST_ADDS * 2]]
    with SqliteStore.open(directory / "cost.db") as store:
        vm = client(store)
        for text in texts:
            vm.call("memory.add", {"space": "chat", "content": text})
        off = client(store, MemorySettings(similar_threshold=0.0))
        timings = []
        for adder, batch in ((vm, fresh[:COST_ADDS]), (off, fresh[COST_ADDS:])):
            started = _cpu()
            for text in batch:
                adder.call("memory.add", {"space": "chat", "content": text})
            timings.append((_cpu() - started) * 1000 / len(batch))
    return timings[0], timings[1]


def precision_recall(scored: Sequence[tuple[float, bool]], threshold: float) -> tuple[str, str]:
    flagged = [same for score, same in scored if score >= threshold]
    positives = sum(same for _, same in scored)
    hits = sum(flagged)
    precision = f"{hits / len(flagged):.2f}" if flagged else "-"
    recall = f"{hits / positives:.2f}" if positives else "-"
    return precision, recall


def main() -> None:
    started = time.process_time()
    pairs = json.loads(PAIRS.read_text())
    with tempfile.TemporaryDirectory(prefix="vm-bench-similar-") as tmp:
        directory = Path(tmp)
        sets = {
            "written, 2 memories": written(pairs, False, directory),
            "written, 600 memories": written(pairs, True, directory),
        }
        sets["LoCoMo repeated"], best = locomo(directory)
        with_similar, without = cost(directory)
    for name, scored in sets.items():
        same = sum(s for _, s in scored)
        print(f"{name}: {same} duplicates, {len(scored) - same} distinct")
    print(f"LoCoMo noise: {len(best)} adds")
    header = ["threshold", *(f"{name} P / R" for name in sets), "LoCoMo noise"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for threshold in THRESHOLDS:
        cells = [f"{threshold:.2f}" + (" (shipped)" if threshold == SIMILAR_THRESHOLD else "")]
        for scored in sets.values():
            precision, recall = precision_recall(scored, threshold)
            cells.append(f"{precision} / {recall}")
        noisy = sum(score >= threshold for score, _, _ in best) / len(best)
        cells.append(f"{noisy:.3f}")
        print("| " + " | ".join(cells) + " |")
    print(
        f"memory.add on 2,760 memories (SQLite, in process): {with_similar:.2f} ms CPU with "
        f"similar, {without:.2f} ms without ({COST_ADDS} adds each)"
    )
    met = "met" if with_similar <= COST_FLOOR * without else "MISSED"
    print(f"  with / without: {with_similar / without:.2f}, floor {COST_FLOOR:.1f} ({met})")
    print(f"cpu {time.process_time() - started:.1f} s")
    flagged = [item for item in best if item[0] >= SIMILAR_THRESHOLD]
    shown = random.Random(43).sample(flagged, min(SHOW, len(flagged)))
    print(f"\n{len(shown)} of the {len(flagged)} LoCoMo adds flagged at the shipped threshold:")
    for score, earlier, text in sorted(shown, reverse=True):
        print(f"  {score:.2f}  {earlier!r}\n        {text!r}")


if __name__ == "__main__":
    main()
