"""How fast ``venom-mem mcp`` is ready, and how much of a harness's context it takes.

- Spawn to the ``initialize`` answer and to the ``tools/list`` answer, over 15 fresh
  adapters with no daemon running (the harness's case at its own start). Target: both
  within 0.3 s (issue 12: ``codex exec`` sends its first model request without waiting).
- The ``tools/list`` answer's size for each principal (owner, client token, no token),
  beside the 23.8 KB every harness got before the catalog was sized to its caller.

Run: ``.venv/bin/python bench/bench_mcp_start.py`` (about 20 s).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon_env import VENOM_MEM

TARGET_S = 0.3
BEFORE_BYTES = 23_800
RUNS = 15
CLIENT_TOKEN = "vnt1.venom-mem.g1." + "A" * 43  # well-formed; no daemon runs to refuse it


def one_start(home: Path, token: str | None) -> tuple[float, float, int]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if token:
        env["VENOM_MEM_TOKEN"] = token
    began = time.monotonic()
    proc = subprocess.Popen(
        [VENOM_MEM, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}},
    }  # fmt: skip
    proc.stdin.write(json.dumps(init).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    initialized = time.monotonic() - began
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    proc.stdin.flush()
    listing = proc.stdout.readline()
    listed = time.monotonic() - began
    proc.stdin.close()
    proc.wait(timeout=10)
    proc.stdout.close()
    return initialized, listed, len(listing)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="vm-bench-mcp-") as root:
        home = Path(root)
        one_start(home, None)  # warm the file cache once, as a harness's second start is
        inits, lists = [], []
        for _ in range(RUNS):
            initialized, listed, _ = one_start(home, CLIENT_TOKEN)
            inits.append(initialized)
            lists.append(listed)
        principals = (("owner", "@owner"), ("client token", CLIENT_TOKEN), ("no token", None))
        sizes = {who: one_start(home, token)[2] for who, token in principals}
    print(f"venom-mem mcp start-up, {RUNS} fresh adapters, no daemon running")
    for name, values in (("initialize answered", inits), ("tools/list answered", lists)):
        p50 = statistics.median(values)
        p90 = sorted(values)[int(len(values) * 0.9) - 1]
        verdict = "ok" if p50 <= TARGET_S else "OVER"
        print(f"  {name:<20} p50 {p50 * 1000:6.0f} ms  p90 {p90 * 1000:6.0f} ms"
              f"   target {TARGET_S * 1000:.0f} ms  {verdict}")  # fmt: skip
    print(
        f"tools/list size by principal (before sizing: every harness {BEFORE_BYTES / 1000:.1f} KB)"
    )
    for who, size in sizes.items():
        print(f"  {who:<13} {size / 1000:5.1f} KB")


if __name__ == "__main__":
    main()
