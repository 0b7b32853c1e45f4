"""Writers and searchers against daemons at once, through their sockets (issue 24's load).

Each daemon gets its own client process (so one bench process's GIL never caps several
daemons), running ``writers`` threads that add short memories and ``searchers`` threads that
search, each thread on its own held connection, all starting at one instant and stopping
``seconds`` later. The figures are over that window: adds per second across every daemon,
and add and search p50/p99 over every call, and the CPU seconds (user + system) the named processes
(``meters``: the daemons, the database server) and the client processes used in it.
"""

from __future__ import annotations

import resource
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import attrs

from venom_mem_adapters.client import connect

__all__ = ["LoadFigures", "run_load"]

_WORDS = (
    "zig", "build", "cache", "daemon", "socket", "sqlite", "memory", "search", "vector", "token",
    "grant", "space", "session", "harness", "agent", "review", "commit", "branch", "deploy",
)  # fmt: skip
_QUERIES = ("daemon socket", "deploy", "token grant", "zig build cache", "review commit")
_START_DELAY_S = 2.0  # for every process to connect before the window opens


@attrs.frozen
class LoadFigures:
    adds_per_s: float
    add_p50_ms: float
    add_p99_ms: float
    search_p50_ms: float
    search_p99_ms: float
    adds: int
    searches: int
    errors: int
    # CPU seconds used in the window: each meter's (run_load's ``meters``) and the clients'.
    cpu_s: Mapping[str, float] = attrs.field(factory=dict)

    @property
    def ops(self) -> int:
        return self.adds + self.searches

    def cpu_ms_per_op(self, meter: str) -> float:
        return self.cpu_s[meter] * 1000 / self.ops if self.ops else float("nan")


def _note(daemon: int, writer: int, n: int) -> str:
    words = " ".join(_WORDS[(n * k + writer) % len(_WORDS)] for k in (1, 3, 7))
    return f"d{daemon} w{writer} note {n}: {words}"


Samples = tuple[list[float], list[float], int, float]  # adds, searches, errors, CPU s


def _client_process(
    environ: Mapping[str, str], daemon: int, clients: tuple[int, int], window: tuple[float, float]
) -> Samples:
    """One daemon's clients, in a process of their own: (add and search latencies, errors,
    the CPU seconds this process used from the window's start to its last call's end)."""
    writers, searchers = clients
    start, end = window
    adds: list[float] = []
    searches: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def work(kind: str, number: int) -> None:
        mine: list[float] = []
        failed = 0
        with connect(dict(environ)) as conn:
            time.sleep(max(0.0, start - time.time()))
            n = 0
            while time.time() < end:
                began = time.perf_counter()
                try:
                    if kind == "add":
                        params = {"space": f"project/p{n % 8}", "content": _note(daemon, number, n)}
                        conn.call("memory.add", params)
                    else:
                        query = {"query": _QUERIES[n % len(_QUERIES)], "limit": 10}
                        conn.call("memory.search", query)
                except Exception:  # counted; a bench reports failures, it doesn't stop
                    failed += 1
                else:
                    mine.append(time.perf_counter() - began)
                n += 1
        with lock:
            (adds if kind == "add" else searches).extend(mine)
            errors[0] += failed

    threads = [threading.Thread(target=work, args=("add", w)) for w in range(writers)]
    threads += [threading.Thread(target=work, args=("search", s)) for s in range(searchers)]
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, start - time.time()))
    began = _own_cpu_s()
    for thread in threads:
        thread.join()
    return adds, searches, errors[0], _own_cpu_s() - began


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _quantile_ms(samples: Sequence[float], q: float) -> float:
    if not samples:
        return float("nan")
    if len(samples) == 1:
        return samples[0] * 1000
    return statistics.quantiles(samples, n=100, method="inclusive")[round(q * 100) - 1] * 1000


def run_load(
    environs: Sequence[Mapping[str, str]],
    *,
    writers: int = 4,
    searchers: int = 2,
    seconds: float = 15.0,
    meters: Mapping[str, Callable[[], float]] | None = None,
) -> LoadFigures:
    """``writers`` adders and ``searchers`` searchers on each daemon ``environs`` reach (a
    client environment each, with its socket and token) for ``seconds``; ``meters`` name
    functions returning CPU seconds used so far (cpu_time.py), read as the window opens and
    once its last call has been answered."""
    meters = meters or {}
    start = time.time() + _START_DELAY_S
    end = start + seconds
    with ProcessPoolExecutor(len(environs), mp_context=get_context("spawn")) as pool:
        futures = [
            pool.submit(_client_process, dict(env), i, (writers, searchers), (start, end))
            for i, env in enumerate(environs)
        ]
        time.sleep(max(0.0, start - time.time()))
        before = {name: meter() for name, meter in meters.items()}
        results = [future.result() for future in futures]
        cpu_s = {name: meter() - before[name] for name, meter in meters.items()}
    cpu_s["clients"] = sum(result[3] for result in results)
    adds = [s for result in results for s in result[0]]
    searches = [s for result in results for s in result[1]]
    return LoadFigures(
        adds_per_s=len(adds) / seconds,
        add_p50_ms=statistics.median(adds) * 1000 if adds else float("nan"),
        add_p99_ms=_quantile_ms(adds, 0.99),
        search_p50_ms=statistics.median(searches) * 1000 if searches else float("nan"),
        search_p99_ms=_quantile_ms(searches, 0.99),
        adds=len(adds),
        searches=len(searches),
        errors=sum(result[2] for result in results),
        cpu_s=cpu_s,
    )
