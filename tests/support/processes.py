"""What /proc says of a venom-mem process: its argv, environment, children, and whether it
is a standby still waiting (client/_launcher.py: launched as a daemon is, it binds no socket
until it is told to go)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

STANDBY_FLAG = "--standby-fd"


def argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []


def environ(pid: int) -> dict[str, str]:
    """Its environment (``OSError`` once it is gone)."""
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that still run, read from each of its threads."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def bound_unix_paths(pid: int) -> set[str]:
    """The paths of the unix sockets ``pid`` holds that are bound to one."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
    paths = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[6] in inodes:
            paths.add(fields[7])
    return paths


def waiting_standby(pid: int) -> bool:
    """A standby that no call has told to go yet: launched as a daemon, serving nothing."""
    return STANDBY_FLAG in argv(pid) and not bound_unix_paths(pid)


def _state_and_cpu(pid: int) -> tuple[str, int]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return fields[0], int(fields[11]) + int(fields[12])


def settled(pid: int, timeout_s: float) -> bool:
    """Whether ``pid`` comes to sleep without spending CPU for 0.2 s within ``timeout_s``
    (a standby that has loaded the daemon's modules and waits for its word)."""
    deadline = time.monotonic() + timeout_s
    still = 0
    last = None
    while time.monotonic() < deadline:
        try:
            state, cpu = _state_and_cpu(pid)
        except OSError:
            return False
        still = still + 1 if state == "S" and cpu == last else 0
        if still >= 4:
            return True
        last = cpu
        time.sleep(0.05)
    return False
