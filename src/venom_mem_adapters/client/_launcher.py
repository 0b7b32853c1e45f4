"""Start a daemon on demand (RFC-0020 section 8) and wait for it to answer.

Each client launches at most one candidate. Candidates race for the socket lock; the loser
reports ``lost`` on its status pipe and exits, and every client then connects to the winner.
The child gets its own session (setsid), stdio on the null device, ``/`` as its cwd, and an
environment without tokens or other secrets. Standard library only.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping

from venom_mem_core.errors import VenomError

__all__ = ["FORWARDED_ENV", "daemon_environment", "launch"]

# What a daemon inherits. Anything else, API keys and tokens included, stays with the caller.
FORWARDED_ENV = (
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "VENOM_MEM_SOCKET",
    "VENOM_MEM_CONFIG",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "COVERAGE_PROCESS_START",
    # libpq's choice of server for a PostgreSQL store (docs/adr/0028). Not PGPASSWORD: a
    # secret stays with the caller; an on-demand daemon finds one in ~/.pgpass or a service
    # file, and one started by hand with `venom-mem serve` has its own environment's.
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGUSER",
    "PGDATABASE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGPASSFILE",
    "PGSSLMODE",
    "PGSSLROOTCERT",
    "PGSSLCERT",
    "PGSSLKEY",
    "PGCONNECT_TIMEOUT",
    "PGTARGETSESSIONATTRS",
)


def daemon_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The allowlisted variables, with the two path overrides made absolute: the daemon
    runs in ``/``, where a relative path would name another file."""
    env = {key: environ[key] for key in FORWARDED_ENV if key in environ}
    for key in ("VENOM_MEM_SOCKET", "VENOM_MEM_CONFIG"):
        if env.get(key):
            env[key] = os.path.abspath(env[key])
    return env


def launch(environ: Mapping[str, str], timeout_s: float) -> str:
    """Launch one candidate and wait for its word: ``ready`` or ``lost`` (another daemon
    won). A candidate that fails says why, and that error is raised here."""
    read_fd, write_fd = os.pipe()
    try:
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "venom_mem_cli",
                "serve",
                "--on-demand",
                "--status-fd",
                str(write_fd),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=daemon_environment(environ),
            start_new_session=True,
            pass_fds=(write_fd,),
        )
    except OSError as exc:
        os.close(read_fd)
        raise VenomError(
            "unavailable.startup_result", f"could not launch the daemon: {exc}"
        ) from None
    finally:
        os.close(write_fd)
    # Reap the child whenever it exits, so a long-lived caller (the MCP adapter) keeps no zombie.
    threading.Thread(target=child.wait, daemon=True).start()
    deadline = time.monotonic() + timeout_s
    buffer = b""
    try:
        while b"\n" not in buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise VenomError(
                    "unavailable.startup_timeout",
                    f"the daemon did not start within {timeout_s * 1000:.0f} ms",
                    {"fix": "venom-mem serve  # run it in the foreground to see why"},
                )
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            buffer += chunk
    finally:
        os.close(read_fd)
    word = buffer.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if word in ("ready", "lost"):
        return word
    if word.startswith("{"):
        try:
            raise VenomError.from_json(json.loads(word))
        except ValueError:
            pass
    raise VenomError(
        "unavailable.startup_result",
        "the daemon exited before it was ready",
        {"fix": "venom-mem serve  # run it in the foreground to see why"},
    )
