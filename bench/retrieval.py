"""Retrieval quality on LoCoMo through the real daemon: R@5, R@10, hit@5 and MRR by mode.

LoCoMo (snap-research/locomo) holds long conversations with questions and the turns that
answer them. Five of its ten conversations are in ``../shared/data/locomo-dev`` (SOURCE.md
there); this bench uses those five and nothing else. One memory per turn (``speaker: text``,
and the shared image's caption when there is one), one space per conversation, the question
as the query, ``spaces`` set to its conversation, limit 10.

For each embedding model (bench/embed_server.py, a loopback OpenAI-compatible endpoint with
a real small model from PyPI, installed by ``make bench-retrieval``), a fresh daemon loads
the turns over its socket, embeds them, and answers every question in every mode:

- ``fts`` (RFC-0020 ranking, ``query_mode = "rfc"``) and ``natural`` (``query_mode =
  "natural"``, docs/adr/0015, 0023);
- ablations of ``natural``, ranked by the store itself (its ``rank_text_scored``, the
  daemon's own function) with other terms or bm25 weights: each change of ADR 0023 taken
  back alone, other stopword lists, and query terms dropped above a document frequency;
  and ``bench bm25`` rows: FTS5's bm25 computed here with another k1 and b, which the
  built-in can't do (at k1 0.3, b 0.75 it reproduces natural fts);
- ``vector`` only;
- ``hybrid`` under each shipped ``fusion`` (docs/adr/0016), with natural queries, plus the
  RFC's own hybrid (``rrf`` over RFC-mode queries) and the default fusion over RFC-mode
  queries (a store's behaviour with embeddings on and ``query_mode`` left alone);
- more fusion candidates computed here from the daemon's two lists (natural fts and vector,
  100 deep each) with venom_mem_core.fusion, side by side with the shipped ones: other
  weights, ADR 0016's convex (BM25 over its best), a fallback to full text when the vector
  list's best similarity is low, z-score normalisation;
- ``textbook BM25``: Okapi BM25 (k1 1.2, b 0.75, Lucene's idf) over the same texts with
  FTS5's tokenizer, no field weights, no stopwords, in this process;
- RFC-0020's own knob, ``search.min_similarity`` (section 5 step 3), at each of
  MIN_SIMILARITIES before ``rrf``, over natural and over RFC-mode queries: computed from the
  daemon's lists, and checked against the daemon itself (``config.set`` of the key on the
  running daemon, then the same searches on every SIMILARITY_CHECK_EVERY-th question).
  Beside each, how many vector hits the floor leaves, and whether the row is at least
  natural fts on every category (docs/search.md).

Embeddings are cached per model in bench/out/embed-cache (bench/embed_server.py): a second
run embeds nothing again, so the daemon's searches get their query vector from the cache;
the latency target adds the live embedding, timed with the cache bypassed.

R@k is the share of a question's evidence turns in the first k; hit@5 whether any is; MRR
the mean of 1 / rank of the first evidence turn within 10. "1-4" is categories 1 (multi-hop),
2 (temporal), 3 (open-domain) and 4 (single-hop); 5 (adversarial) has no answer in the
conversation, and its evidence is the nearest turn. The interval beside a mode is a paired
bootstrap (2,000 resamples of the 1-4 questions) of its R@5 minus natural fts's.

Run: ``make bench-retrieval`` (``--models minilm`` for one model, ``--json`` to also write
the figures to bench/out/retrieval.json or ``--out``; ``--focus`` asks the daemon only the
full-text, ``rrf`` and ``convex`` modes and the vector list, on a loaded machine).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import VENOM_MEM, World, make_world

from venom_mem_adapters.client import Connection, connect
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_core.fts import tokenize
from venom_mem_core.fusion import FUSIONS, Fusion
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.ranking import natural_terms, search_terms, with_irregular_forms
from venom_mem_core.search_options import DEFAULT_FUSION, NATURAL_WEIGHTS, RFC_WEIGHTS, Weights
from venom_mem_core.stopwords import ENGLISH_STOPWORDS

ROOT = Path(__file__).resolve().parents[1]
# ../shared beside the checkout, or beside the directory of worktrees it is one of.
DATA = next(
    (d for d in (p / "shared" / "data" / "locomo-dev" for p in ROOT.parents[:2]) if d.exists()),
    ROOT.parent / "shared" / "data" / "locomo-dev",
)
CONVERSATIONS = ("26", "30", "41", "42", "43")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODELS = {"minilm": "all-MiniLM-L6-v2", "e5": "multilingual-e5-small-q4"}
DIMENSIONS = 384
LIMIT = 10
DEPTH = 100
BOOTSTRAP = 2000
SEED = 20261201

# Lucene's (and Elasticsearch's) default English stopword set, for the comparison in ADR 0015.
LUCENE_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
_SEPARATORS = re.compile(r"[\W_]+")
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")

# Fusion candidates computed from the daemon's lists, beside the shipped ones.
CANDIDATES: dict[str, Fusion] = {
    "weighted 0.25": Fusion(vector_weight=0.25),
    "weighted 0.5": Fusion(vector_weight=0.5),
    "margin 0.05": Fusion(margin=0.05),
    "margin 0.15": Fusion(margin=0.15),
    "margin 0.1, weighted 0.5": Fusion(margin=0.1, vector_weight=0.5),
    "rerank, weighted 0.5": Fusion(within_fts=True, vector_weight=0.5),
    "convex 0.5": Fusion(blend=0.5),
    "convex 0.6": Fusion(blend=0.6),
    "convex 0.7": Fusion(blend=0.7),
    "convex 0.8": Fusion(blend=0.8),
    "convex 0.9": Fusion(blend=0.9),
    "convex 0.8, BM25 over its best (ADR 0016)": Fusion(blend=0.8, bm25_min_max=False),
    "convex 0.7, BM25 over its best (ADR 0016)": Fusion(blend=0.7, bm25_min_max=False),
}
# RFC-0020 section 5 step 3's floor before rrf. MiniLM's similarities spread over about
# [-0.1, 0.8] and E5's sit in about [0.7, 0.95], so the list runs past 0.6 for E5's sake.
MIN_SIMILARITIES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9)
SIMILARITY_CHECK_EVERY = 10
# "convex 0.8 only if best similarity >= x": the vector list is used only when its best hit
# is at least x similar to the query (a fallback to full text for a query the model can't
# place); z-score: both lists standardised (mean 0, sd 1 over each list) instead of min-max.
GATES = {"convex 0.8, vectors if best similarity >= 0.5": 0.5}
Z_SCORE = {"z-score 0.7": 0.7, "z-score 0.8": 0.8}

# Ablations of the natural mode, ranked by the store itself (the daemon's own function) with
# other terms or bm25 weights: every change of ADR 0023 taken back one at a time, and the
# candidates that were not kept.
_NLTK_179 = ENGLISH_STOPWORDS - {"would", "could", "might", "must", "shall", "whose"}
_X2: Weights = (10.0, 2.0, 6.0)
_X8: Weights = (40.0, 8.0, 24.0)


@attrs.frozen
class Turn:
    dia_id: str
    content: str


@attrs.frozen
class Question:
    conversation: str
    text: str
    category: int
    evidence: frozenset[str]


def load_conversation(name: str) -> tuple[list[Turn], list[Question]]:
    data = json.loads((DATA / f"{name}.json").read_text())
    turns = []
    sessions = sorted(
        (k for k in data if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    for key in sessions:
        for turn in data[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            turns.append(Turn(dia_id=turn["dia_id"], content=text))
    known = {t.dia_id for t in turns}
    questions = []
    for qa in data["qa"]:
        evidence = frozenset(
            f"D{a}:{int(b)}" for a, b in _EVIDENCE.findall(" ".join(map(str, qa["evidence"])))
        )
        evidence &= known
        if evidence and qa.get("question"):
            questions.append(Question(name, qa["question"], int(qa["category"]), evidence))
    return turns, questions


# -- the embedding server ---------------------------------------------------------------------


@contextmanager
def embed_server(python: str, model: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cache = ROOT / "bench" / "out" / "embed-cache" / f"{model}.npz"
    proc = subprocess.Popen(
        [python, str(ROOT / "bench" / "embed_server.py"), model, str(cache)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("port "):
            raise SystemExit(f"the {model} embedding server did not start")
        yield int(line.split()[1]), proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=60)  # it saves its cache first
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_stats(port: int) -> list[float]:
    return list(httpx.get(f"http://127.0.0.1:{port}/stats", timeout=10).json()["single_ms"])


def embedding_round_trips(port: int, questions: Sequence[Question]) -> list[float]:
    """Each question embedded once as a client of the endpoint sees it (keep-alive, JSON
    both ways), by the model, not the cache: the part of a hybrid search's time that the
    daemon can't shorten."""
    samples = []
    live = {"X-No-Cache": "1"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}/v1", timeout=30, headers=live) as client:
        for q in questions:
            started = time.perf_counter()
            client.post("/embeddings", json={"model": "bench", "input": [q.text]}).json()
            samples.append((time.perf_counter() - started) * 1000)
    return samples


# -- loading ---------------------------------------------------------------------------------


def configure(world: World, port: int, model: str) -> None:
    world.write_config(
        ".{\n"
        "    .embeddings = .{\n"
        '        .provider = "http",\n'
        f'        .base_url = "http://127.0.0.1:{port}/v1",\n'
        f'        .model = "{model}",\n'
        f"        .dimensions = {DIMENSIONS},\n"
        "        .query_timeout_ms = 10000,\n"
        "        .batch_timeout_ms = 120000,\n"
        "    },\n"
        "}\n"
    )


@contextmanager
def daemon(world: World) -> Iterator[Path]:
    """``venom-mem serve`` in the foreground, its log kept for a failure's post-mortem."""
    log = world.root / "daemon.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [VENOM_MEM, "serve"], env=world.environ(), stdin=subprocess.DEVNULL, stderr=sink
        )
    try:
        deadline = time.monotonic() + 30
        # The socket's file comes a moment before it answers; on a loaded machine, long enough
        # for a connection to find nobody.
        while world.daemon_pid() is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield log
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        if proc.returncode not in (0, -15):
            print(f"daemon exited {proc.returncode}:\n{log.read_text()}", file=sys.stderr)


def load(conn: Connection, conversations: dict[str, list[Turn]]) -> tuple[dict[str, int], float]:
    """Add every turn; return (conversation, dia_id) -> memory number, and the adds/s."""
    ids: dict[str, int] = {}
    count = 0
    started = time.perf_counter()
    for name, turns in conversations.items():
        for turn in turns:
            out = conn.call("memory.add", {"space": f"locomo/{name}", "content": turn.content})
            ids[f"{name}/{turn.dia_id}"] = int(out["id"][1:])
            count += 1
    return ids, count / (time.perf_counter() - started)


def wait_embedded(conn: Connection, timeout_s: float = 3600) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        status = conn.call("store.status", {})
        pending = _find(status, "pending")
        if pending == 0:
            return time.perf_counter() - started
        time.sleep(0.5)
    raise SystemExit("embedding did not finish in time")


def _find(tree: Any, key: str) -> Any:
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        for value in tree.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None


# -- searching -------------------------------------------------------------------------------


@attrs.define
class Run:
    """Each question's ranked memory numbers and each call's latency, for one mode."""

    ranked: list[list[int]] = attrs.field(factory=list)
    seconds: list[float] = attrs.field(factory=list)


Terms = Callable[[str], list[str]]


def _words(text: str) -> list[str]:
    """The natural split: words at punctuation, repeats (case-folded) dropped."""
    words = [w for t in text.split() for w in _SEPARATORS.split(t) if w]
    first: dict[str, str] = {}
    for word in words:
        first.setdefault(word.casefold(), word)
    return list(first.values())


def _without(stopwords: frozenset[str], irregular: bool = True) -> Terms:
    def terms(text: str) -> list[str]:
        words = _words(text)
        kept = [w for w in words if w.casefold() not in stopwords]
        if not kept:
            return words or text.split()
        return with_irregular_forms(kept) if irregular else kept

    return terms


NATURAL_VARIANTS: dict[str, tuple[Terms, Weights]] = {
    "natural as in ADR 0015 (NLTK 179, RFC weights)": (_without(_NLTK_179, False), RFC_WEIGHTS),
    "natural, RFC weights (k1 1.2)": (natural_terms, RFC_WEIGHTS),
    "natural, weights x2 (k1 0.6)": (natural_terms, _X2),
    "natural, weights x8 (k1 0.15)": (natural_terms, _X8),
    "natural without irregular forms": (_without(ENGLISH_STOPWORDS, False), NATURAL_WEIGHTS),
    "natural, NLTK's 179 stopwords only": (_without(_NLTK_179), NATURAL_WEIGHTS),
    "natural, Lucene's 33 stopwords": (_without(LUCENE_STOPWORDS), NATURAL_WEIGHTS),
}
DF_CUTS = (0.05, 0.1)  # drop terms in more than this share of the searchable memories
B_VALUES = ((0.3, 0.75), (1.2, 0.3), (0.3, 0.3), (1.2, 0.0))  # (k1, b), bench bm25


def search(conn: Connection, run: Run, params: dict[str, Any]) -> list[dict[str, Any]]:
    started = time.perf_counter()
    try:
        out = conn.call("memory.search", params)
    except Exception:
        print(f"memory.search failed: {params!r}", file=sys.stderr)
        raise
    run.seconds.append(time.perf_counter() - started)
    hits: list[dict[str, Any]] = out["results"]
    run.ranked.append([int(h["id"][1:]) for h in hits])
    return hits


FOCUS_FUSIONS = ("rrf", "convex")


def daemon_modes(*, focus: bool = False) -> dict[str, dict[str, Any]]:
    """Every mode the daemon answers; with ``focus`` (``--focus``), only the RFC's and the
    two fusions docs/search.md compares, for a loaded machine: the floors and every other
    candidate are computed from the same lists either way."""
    modes: dict[str, dict[str, Any]] = {
        "fts (RFC-0020)": {"mode": "fts", "query_mode": "rfc"},
        "natural fts": {"mode": "fts", "query_mode": "natural"},
        "hybrid rrf, RFC queries (RFC-0020)": {
            "mode": "auto",
            "query_mode": "rfc",
            "fusion": "rrf",
        },
        "hybrid convex, RFC queries": {"mode": "auto", "query_mode": "rfc", "fusion": "convex"},
    }
    if focus:
        del modes["hybrid convex, RFC queries"]
    for name in FOCUS_FUSIONS if focus else FUSIONS:
        modes[f"hybrid {name}"] = {"mode": "auto", "query_mode": "natural", "fusion": name}
    return modes


@attrs.define
class Lists:
    """A question's two 100-deep lists: the vector list from the daemon, the natural
    full-text list with BM25 scores from the store itself (the daemon's own function)."""

    vector: list[tuple[int, float]]
    fts: list[tuple[int, float]] = attrs.field(factory=list)
    fts_rfc: list[tuple[int, float]] = attrs.field(factory=list)
    """The RFC-mode full-text list, 100 deep: what ``query_mode = "rfc"`` fuses."""


@attrs.define
class DocFreq:
    """Each term's number of memories (the owner's searchable set: all of them)."""

    memories: int
    counts: Counter[str]

    @classmethod
    def of(cls, conversations: dict[str, list[Turn]]) -> DocFreq:
        counts: Counter[str] = Counter()
        turns = [t for ts in conversations.values() for t in ts]
        for turn in turns:
            counts.update(set(tokenize(turn.content)))
        return cls(len(turns), counts)

    def dropping(self, cut: float) -> Terms:
        def terms(text: str) -> list[str]:
            kept = natural_terms(text)
            limit = cut * self.memories
            rare = [t for t in kept if all(self.counts[x] <= limit for x in tokenize(t))]
            return rare or kept

        return terms


def fts_lists(
    store_path: Path, questions: Sequence[Question], lists: Sequence[Lists], df: DocFreq
) -> dict[str, Run]:
    """Each question's 100-deep natural list with scores, as the daemon ranks it; and the
    natural ablations (NATURAL_VARIANTS, DF_CUTS), ranked by the same store."""
    variants = dict(NATURAL_VARIANTS)
    for cut in DF_CUTS:
        name = f"natural, terms in > {100 * cut:.0f} % of memories dropped"
        variants[name] = (df.dropping(cut), NATURAL_WEIGHTS)
    runs = {f"ablation: {name}": Run() for name in variants}
    with SqliteStore.open(store_path) as store, store.read() as tx:
        for q, found in zip(questions, lists, strict=True):
            where = MemoryFilter(
                access=Access(everything=True), spaces=frozenset({f"locomo/{q.conversation}"})
            )
            found.fts = tx.rank_text_scored(natural_terms(q.text), where, DEPTH, NATURAL_WEIGHTS)
            rfc_terms = search_terms(q.text, "rfc")
            found.fts_rfc = tx.rank_text_scored(rfc_terms, where, DEPTH, RFC_WEIGHTS)
            for name, (terms, weights) in variants.items():
                ranked = tx.rank_text_scored(terms(q.text), where, LIMIT, weights)
                runs[f"ablation: {name}"].ranked.append([i for i, _ in ranked])
    return runs


def measure(
    conn: Connection, questions: Sequence[Question], *, focus: bool = False
) -> tuple[dict[str, Run], list[Lists]]:
    """Every daemon mode for every question, and each question's vector list."""
    modes = daemon_modes(focus=focus)
    runs = {name: Run() for name in modes}
    extra = {"vector": Run()}
    lists: list[Lists] = []
    for n, q in enumerate(questions):
        base = {"query": q.text, "spaces": [f"locomo/{q.conversation}"], "limit": LIMIT}
        for name, params in modes.items():
            search(conn, runs[name], {**base, **params})
        vector_hits = search(conn, extra["vector"], {**base, "mode": "vector", "limit": DEPTH})
        extra["vector"].ranked[-1] = extra["vector"].ranked[-1][:LIMIT]
        lists.append(
            Lists(vector=[(int(h["id"][1:]), float(h["similarity"])) for h in vector_hits])
        )
        if (n + 1) % 200 == 0:
            print(f"  {n + 1}/{len(questions)} questions", file=sys.stderr, flush=True)
    runs.update(extra)
    return runs, lists


def offline(lists: Sequence[Lists]) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    for name, fusion in CANDIDATES.items():
        run = runs[f"candidate: {name}"] = Run()
        for found in lists:
            fts = [i for i, _ in found.fts]
            fused = fusion.apply(fts, found.vector, limit=LIMIT, fts_scores=dict(found.fts))
            run.ranked.append([f.id for f in fused])
    for name, best in GATES.items():
        run = runs[f"candidate: {name}"] = Run()
        for found in lists:
            confident = bool(found.vector) and found.vector[0][1] >= best
            fts = [i for i, _ in found.fts]
            vector = found.vector if confident else []
            fused = FUSIONS["convex"].apply(fts, vector, limit=LIMIT, fts_scores=dict(found.fts))
            run.ranked.append([f.id for f in fused])
    for name, blend in Z_SCORE.items():
        runs[f"candidate: {name}"] = Run(ranked=[z_score(f, blend) for f in lists])
    return runs


def _standard(scores: dict[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    mean_, sd = statistics.fmean(scores.values()), statistics.pstdev(scores.values()) or 1.0
    return {i: (s - mean_) / sd for i, s in scores.items()}


def z_score(found: Lists, blend: float) -> list[int]:
    lexical, dense = _standard(dict(found.fts)), _standard(dict(found.vector))
    fused = {i: blend * lexical.get(i, 0.0) + (1 - blend) * dense.get(i, 0.0)
             for i in lexical.keys() | dense.keys()}  # fmt: skip
    return sorted(fused, key=lambda i: (-fused[i], -i))[:LIMIT]


def fts5_bm25(
    conversations: dict[str, list[Turn]],
    ids: dict[str, int],
    questions: Sequence[Question],
    k1: float,
    b: float,
) -> Run:
    """FTS5's bm25 (its idf, statistics over every memory) with another k1 and b, over
    natural terms: what the built-in can't do (it fixes b at 0.75), to show what b gives.
    At k1 0.3, b 0.75 it is natural fts, ranked here."""
    postings: dict[str, dict[int, int]] = {}
    lengths: dict[int, int] = {}
    space: dict[int, str] = {}
    for name, turns in conversations.items():
        for turn in turns:
            doc_id = ids[f"{name}/{turn.dia_id}"]
            terms = tokenize(turn.content)
            lengths[doc_id], space[doc_id] = len(terms), name
            for term, f in Counter(terms).items():
                postings.setdefault(term, {})[doc_id] = f
    avgdl = statistics.fmean(lengths.values())
    run = Run()
    for q in questions:
        scores: dict[int, float] = {}
        for term in [t for word in natural_terms(q.text) for t in tokenize(word)[:1]]:
            found = postings.get(term, {})
            idf = math.log((len(lengths) - len(found) + 0.5) / (len(found) + 0.5))
            idf = idf if idf > 0 else 1e-6
            for doc_id, f in found.items():
                if space[doc_id] == q.conversation:
                    norm = f + k1 * (1 - b + b * lengths[doc_id] / avgdl)
                    scores[doc_id] = scores.get(doc_id, 0.0) + idf * (f * (k1 + 1.0)) / norm
        run.ranked.append(sorted(scores, key=lambda i: (-scores[i], -i))[:LIMIT])
    return run


def agreement(runs: dict[str, Run], lists: Sequence[Lists]) -> dict[str, float]:
    """Share of questions where the shipped fusion computed here from the two lists gives
    the daemon's own results (a check that the offline candidates are measured fairly)."""
    out = {}
    for name, fusion in FUSIONS.items():
        if f"hybrid {name}" not in runs:  # --focus
            continue
        same = 0
        for found, daemon_ids in zip(lists, runs[f"hybrid {name}"].ranked, strict=True):
            fts = [i for i, _ in found.fts]
            fused = fusion.apply(fts, found.vector, limit=LIMIT, fts_scores=dict(found.fts))
            same += [f.id for f in fused] == daemon_ids
        out[name] = same / len(lists)
    same = 0
    for found, daemon_ids in zip(
        lists, runs["hybrid rrf, RFC queries (RFC-0020)"].ranked, strict=True
    ):
        fused = FUSIONS["rrf"].apply([i for i, _ in found.fts_rfc], found.vector, limit=LIMIT)
        same += [f.id for f in fused] == daemon_ids
    out["rrf, RFC queries"] = same / len(lists)
    return out


def floor_name(floor: float, *, rfc: bool = False) -> str:
    return f"rrf{', RFC queries' if rfc else ''}, min_similarity {floor}"


def floored(lists: Sequence[Lists]) -> tuple[dict[str, Run], dict[float, tuple[float, float]]]:
    """rrf after each of MIN_SIMILARITIES (section 5 step 3), over natural and RFC-mode
    queries, from the daemon's lists; and per floor, the mean number of vector hits kept and
    the share of questions that keep any."""
    runs: dict[str, Run] = {}
    kept_by_floor: dict[float, tuple[float, float]] = {}
    for floor in MIN_SIMILARITIES:
        natural = runs[floor_name(floor)] = Run()
        rfc = runs[floor_name(floor, rfc=True)] = Run()
        counts = []
        for found in lists:
            kept = [h for h in found.vector if h[1] >= floor]
            counts.append(len(kept))
            natural.ranked.append(_rrf([i for i, _ in found.fts], kept))
            rfc.ranked.append(_rrf([i for i, _ in found.fts_rfc], kept))
        kept_by_floor[floor] = (statistics.fmean(counts), sum(c > 0 for c in counts) / len(counts))
    return runs, kept_by_floor


def _rrf(fts: Sequence[int], vector: Sequence[tuple[int, float]]) -> list[int]:
    return [f.id for f in FUSIONS["rrf"].apply(fts, vector, limit=LIMIT)]


def daemon_floors(
    conn: Connection, questions: Sequence[Question], runs: dict[str, Run]
) -> dict[float, float]:
    """Set ``search.min_similarity`` on the running daemon to each floor (``config.set``
    applies it at once) and search every SIMILARITY_CHECK_EVERY-th question with natural
    ``rrf``: the share of them where the daemon answers as the row computed here."""
    agree: dict[float, float] = {}
    picks = range(0, len(questions), SIMILARITY_CHECK_EVERY)
    try:
        for floor in MIN_SIMILARITIES:
            conn.call("config.set", {"key": "search.min_similarity", "value": str(floor)})
            same = 0
            for n in picks:
                q = questions[n]
                params = {"query": q.text, "spaces": [f"locomo/{q.conversation}"],
                          "limit": LIMIT, "query_mode": "natural", "fusion": "rrf"}  # fmt: skip
                hits = conn.call("memory.search", params)["results"]
                same += [int(h["id"][1:]) for h in hits] == runs[floor_name(floor)].ranked[n]
            agree[floor] = same / len(picks)
    finally:
        conn.call("config.set", {"key": "search.min_similarity", "value": "0.0"})
    return agree


# -- textbook BM25 ----------------------------------------------------------------------------


def textbook_bm25(
    conversations: dict[str, list[Turn]], ids: dict[str, int], questions: Sequence[Question]
) -> Run:
    k1, b = 1.2, 0.75
    run = Run()
    index: dict[str, tuple[list[tuple[int, Counter[str], int]], Counter[str], float]] = {}
    for name, turns in conversations.items():
        docs = []
        df: Counter[str] = Counter()
        for turn in turns:
            terms = tokenize(turn.content)
            docs.append((ids[f"{name}/{turn.dia_id}"], Counter(terms), len(terms)))
            df.update(set(terms))
        index[name] = (docs, df, statistics.fmean(d[2] for d in docs))
    for q in questions:
        docs, df, avgdl = index[q.conversation]
        terms = [t for token in q.text.split() for t in tokenize(token)]
        n_docs = len(docs)
        scores = []
        for doc_id, tf, length in docs:
            score = 0.0
            for term in terms:
                f = tf.get(term, 0)
                if f:
                    idf = math.log(1 + (n_docs - df[term] + 0.5) / (df[term] + 0.5))
                    score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avgdl))
            if score > 0:
                scores.append((score, doc_id))
        scores.sort(key=lambda s: (-s[0], -s[1]))
        run.ranked.append([doc_id for _, doc_id in scores[:LIMIT]])
    return run


# -- figures ---------------------------------------------------------------------------------


@attrs.frozen
class Scores:
    r5: list[float]
    r10: list[float]
    hit5: list[float]
    rr: list[float]


def score(run: Run, questions: Sequence[Question], ids: dict[str, int]) -> Scores:
    r5, r10, hit5, rr = [], [], [], []
    for q, ranked in zip(questions, run.ranked, strict=True):
        wanted = {ids[f"{q.conversation}/{e}"] for e in q.evidence}
        r5.append(len(wanted & set(ranked[:5])) / len(wanted))
        r10.append(len(wanted & set(ranked[:10])) / len(wanted))
        hit5.append(1.0 if wanted & set(ranked[:5]) else 0.0)
        first = next((i for i, m in enumerate(ranked[:10], start=1) if m in wanted), None)
        rr.append(1 / first if first else 0.0)
    return Scores(r5, r10, hit5, rr)


def mean(values: Sequence[float], picks: Sequence[int]) -> float:
    return sum(values[i] for i in picks) / len(picks) if picks else float("nan")


def bootstrap(a: Sequence[float], b: Sequence[float], picks: Sequence[int]) -> tuple[float, float]:
    """95 % interval of mean(a - b) over ``picks``, resampled with replacement."""
    rng = random.Random(SEED)
    diffs = [a[i] - b[i] for i in picks]
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(BOOTSTRAP))
    return means[int(0.025 * BOOTSTRAP)], means[int(0.975 * BOOTSTRAP) - 1]


def p50_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000 if samples else float("nan")


def p95_ms(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[round(0.95 * (len(ordered) - 1))] * 1000 if ordered else float("nan")


def report(
    model: str,
    runs: dict[str, Run],
    questions: Sequence[Question],
    ids: dict[str, int],
    facts: dict[str, float],
) -> dict[str, Any]:
    by_cat = {c: [i for i, q in enumerate(questions) if q.category == c] for c in CATEGORIES}
    core = [i for i, q in enumerate(questions) if q.category <= 4]
    scores = {name: score(run, questions, ids) for name, run in runs.items()}
    base = scores["natural fts"]
    print()
    print(
        f"== {MODELS[model]} ({DIMENSIONS} d): {len(ids):,} memories, {len(questions)} questions"
        f" ({len(core)} in categories 1-4), limit {LIMIT}"
    )
    head = f"{'mode':<56} {'R@5':>6} {'R@10':>6} {'hit@5':>6} {'MRR':>6}  "
    head += " ".join(f"{'c' + str(c):>5}" for c in CATEGORIES)
    head += f"  {'R@5 vs natural, 95 %':>22} {'p50 ms':>7}"
    print(head)
    print("-" * len(head))
    table: dict[str, Any] = {}
    for name, s in scores.items():
        row: dict[str, Any] = {
            "r5": mean(s.r5, core),
            "r10": mean(s.r10, core),
            "hit5": mean(s.hit5, core),
            "mrr": mean(s.rr, core),
            "r5_by_category": {c: mean(s.r5, by_cat[c]) for c in CATEGORIES},
            "p50_ms": p50_ms(runs[name].seconds),
            "p95_ms": p95_ms(runs[name].seconds),
        }
        low, high = bootstrap(s.r5, base.r5, core)
        row["r5_vs_natural"] = (row["r5"] - mean(base.r5, core), low, high)
        table[name] = row
        cats = " ".join(f"{100 * row['r5_by_category'][c]:>5.1f}" for c in CATEGORIES)
        diff = (
            ""
            if s is base
            else f"{100 * row['r5_vs_natural'][0]:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"
        )
        lat = f"{row['p50_ms']:>7.1f}" if runs[name].seconds else f"{'':>7}"
        print(
            f"{name:<56} {100 * row['r5']:>5.1f}% {100 * row['r10']:>5.1f}% "
            f"{100 * row['hit5']:>5.1f}% {row['mrr']:>6.3f}  {cats}  {diff:>22} {lat}"
        )
    print("(R@5 per category: c1 multi-hop, c2 temporal, c3 open-domain, c4 single-hop, "
          "c5 adversarial)")  # fmt: skip
    print()
    nat = table["natural fts"]
    fts_p50 = table["fts (RFC-0020)"]["p50_ms"]
    embed_p50 = facts["query_embed_p50_ms"]
    checks = [
        (
            "natural fts R@5, categories 1-4",
            f"{100 * nat['r5']:.1f} %",
            ">= 56 %",
            nat["r5"] >= 0.56,
        ),
    ]
    # The issue 15 targets, for the default (RFC-0020's rrf) and the measured opt-in convex.
    for chosen in (f"hybrid {DEFAULT_FUSION}", "hybrid convex"):
        hyb = table[chosen]
        worst = min(hyb["r5_by_category"][c] - nat["r5_by_category"][c] for c in CATEGORIES)
        checks += [
            (
                f"{chosen} - natural fts, R@5 1-4",
                f"{100 * (hyb['r5'] - nat['r5']):+.1f} pt",
                ">= +1 pt",
                hyb["r5"] - nat["r5"] >= 0.01,
            ),
            (
                f"{chosen} - natural fts, worst category",
                f"{100 * worst:+.1f} pt",
                ">= 0",
                worst >= 0,
            ),
            (
                # The daemon's query vectors came from the endpoint's cache: add the live
                # embedding to both sides.
                f"{chosen} p50 + live embedding",
                f"{hyb['p50_ms'] + embed_p50:.1f} ms",
                f"< 2 x {fts_p50:.1f} + {embed_p50:.1f} ms",
                hyb["p50_ms"] < 2 * fts_p50,
            ),
        ]
    title = f"target (default fusion: {DEFAULT_FUSION})"
    print(f"{title:<44} {'figure':>12}  {'floor':<24} ok")
    for name, figure, floor, ok in checks:
        print(f"{name:<44} {figure:>12}  {floor:<24} {'yes' if ok else 'NO'}")
    print()
    embed_p95 = facts["query_embed_p95_ms"]
    print(
        f"load: {facts['adds_per_s']:.0f} memory.add/s over the socket (synchronous FULL); "
        f"embedding all of them took {facts['embed_s']:.1f} s; "
        f"query embedding p50 {embed_p50:.1f} ms, p95 {embed_p95:.1f} ms as a client of the "
        f"endpoint sees it ({facts['model_p50_ms']:.1f} ms of it in the model)"
    )
    return {"model": MODELS[model], "modes": table, "facts": facts}


def floor_report(
    table: dict[str, Any], kept: dict[float, tuple[float, float]], agree: dict[float, float]
) -> dict[str, Any]:
    """search.min_similarity before rrf beside natural fts and convex: R@5 over 1-4, the
    worst category against natural fts, how much of the vector list each floor leaves, and
    whether the daemon set to that floor answers as computed here."""
    nat = table["natural fts"]

    def worst(row: dict[str, Any]) -> tuple[float, int]:
        gaps = {c: row["r5_by_category"][c] - nat["r5_by_category"][c] for c in CATEGORIES}
        c = min(gaps, key=lambda k: gaps[k])
        return gaps[c], c

    print()
    print("search.min_similarity before rrf (RFC-0020 section 5 step 3), natural queries:")
    head = (
        f"{'floor':>6} {'R@5 1-4':>8} {'worst category vs natural':>26} {'RFC queries':>12}"
        f" {'vector hits kept':>17} {'questions with any':>19} {'daemon agrees':>14}"
    )
    print(head)
    print("-" * len(head))
    out: dict[str, Any] = {}
    for floor in MIN_SIMILARITIES:
        row, rfc = table[floor_name(floor)], table[floor_name(floor, rfc=True)]
        gap, cat = worst(row)
        mean_kept, share = kept[floor]
        at_least = row["r5"] >= nat["r5"] and gap >= 0
        out[str(floor)] = {
            "r5": row["r5"],
            "rfc_queries_r5": rfc["r5"],
            "worst_category_vs_natural": (cat, gap),
            "vector_hits_kept": mean_kept,
            "questions_with_vector_hits": share,
            "daemon_agrees": agree[floor],
            "at_least_natural_fts_everywhere": at_least,
        }
        print(
            f"{floor:>6} {100 * row['r5']:>7.1f}% {f'c{cat} {100 * gap:+.1f}':>26}"
            f" {100 * rfc['r5']:>11.1f}% {mean_kept:>17.1f} {100 * share:>18.0f}%"
            f" {100 * agree[floor]:>13.0f}%{'  >= natural fts everywhere' if at_least else ''}"
        )
    for name in ("natural fts", "hybrid convex", "hybrid rrf"):
        gap, cat = worst(table[name]) if name != "natural fts" else (0.0, 0)
        where = f"c{cat} {100 * gap:+.1f}" if cat else ""
        print(f"{name:>14} {100 * table[name]['r5']:>6.1f}% {where:>19}")
    return out


def run_model(
    model: str,
    python: str,
    conversations: dict[str, list[Turn]],
    questions: Sequence[Question],
    *,
    focus: bool = False,
) -> dict[str, Any]:
    print(f"{model}: starting the embedding server", file=sys.stderr, flush=True)
    with embed_server(python, model) as (port, _proc), make_world() as world:
        configure(world, port, MODELS[model])
        with daemon(world), connect(world.environ("@owner"), may_start=False) as conn:
            ids, rate = load(conn, conversations)
            print(f"{model}: loaded {len(ids)} memories at {rate:.0f}/s", file=sys.stderr)
            embed_s = wait_embedded(conn)
            print(f"{model}: embedded in {embed_s:.1f} s", file=sys.stderr, flush=True)
            runs, lists = measure(conn, questions, focus=focus)
            before = len(server_stats(port))
            trips = embedding_round_trips(port, questions)
            singles = server_stats(port)[before:]
            runs.update(fts_lists(world.store, questions, lists, DocFreq.of(conversations)))
            floor_runs, kept = floored(lists)
            runs.update(floor_runs)
            floor_agree = daemon_floors(conn, questions, runs)
        runs.update(offline(lists))
        agree = agreement(runs, lists)
        runs["textbook BM25 (Okapi)"] = textbook_bm25(conversations, ids, questions)
        for k1, b in B_VALUES:
            runs[f"bench bm25: natural, k1 {k1}, b {b}"] = fts5_bm25(
                conversations, ids, questions, k1, b
            )
        facts = {
            "adds_per_s": rate,
            "embed_s": embed_s,
            "model_p50_ms": statistics.median(singles),
            "query_embed_p50_ms": statistics.median(trips),
            "query_embed_p95_ms": sorted(trips)[round(0.95 * (len(trips) - 1))],
        }
        out = report(model, runs, questions, ids, facts)
        out["min_similarity"] = floor_report(out["modes"], kept, floor_agree)
        print(
            "offline fusion = the daemon's results: "
            + ", ".join(f"{name} {100 * share:.0f} %" for name, share in agree.items())
        )
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embed-python", default=str(ROOT / ".venv-embed" / "bin" / "python"))
    parser.add_argument("--models", default="minilm,e5")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "retrieval.json"))
    parser.add_argument(
        "--focus",
        action="store_true",
        help="through the daemon only fts, natural fts, hybrid rrf and convex, and vector",
    )
    parser.add_argument("--questions", type=int, default=0, help="only the first N (a smoke run)")
    parser.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    conversations: dict[str, list[Turn]] = {}
    questions: list[Question] = []
    for name in CONVERSATIONS:
        turns, qs = load_conversation(name)
        conversations[name] = turns
        questions.extend(qs)
    if args.questions:
        questions = questions[args.skip : args.skip + args.questions]
    results = [
        run_model(m, args.embed_python, conversations, questions, focus=args.focus)
        for m in args.models.split(",")
    ]
    if args.json:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
