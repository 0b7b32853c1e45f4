"""Start a daemon on demand (RFC-0020 section 8) and wait for it to answer.

Each client launches at most one candidate. Candidates race for the socket lock; the loser
reports ``lost`` on its status pipe and exits, and every client then connects to the winner.
The child gets its own session (setsid), stdio on the null device, ``/`` as its cwd, and an
environment without tokens or other secrets. Standard library only.

A standby (docs/adr/0038) is such a candidate spawned ahead of need by ``venom-mem mcp``:
the same process, launched the same way, that loads the daemon's modules and then waits on
a pipe. It holds no lock, opens no store and binds no socket, so no daemon exists until the
first call that needs one sends it ``go`` (RFC-0020 section 8); it spares that call the
interpreter's start and the imports. The relay holds at most one and lets it go at its
first connection to a daemon or by exiting (the pipe's end is the standby's end); the
standby leaves by itself after ``daemon.idle_timeout_ms``, as an idle daemon would, and at
once when the config says ``daemon.mcp_standby = "off"`` or ``daemon.startup =
"explicit"``. A standby gone by the time it is told to go says nothing: the launch is then
made anew.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping

from venom_mem_core.errors import VenomError

__all__ = [
    "FORWARDED_ENV",
    "Going",
    "daemon_environment",
    "dismiss_standby",
    "launch",
    "standby_go",
    "start_standby",
]

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


def _spawn(environ: Mapping[str, str], *, standby_fd: int | None = None) -> tuple[int, int]:
    """A candidate (RFC-0020 section 8's launcher rules), its pid and the read end of its
    status pipe; with ``standby_fd``, one that waits for ``go`` on that pipe first."""
    read_fd, write_fd = os.pipe()
    argv = [sys.executable, "-m", "venom_mem_cli", "serve", "--on-demand"]
    argv += ["--status-fd", str(write_fd)]
    passed = [write_fd]
    if standby_fd is not None:
        argv += ["--standby-fd", str(standby_fd)]
        passed.append(standby_fd)
    try:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=daemon_environment(environ),
            start_new_session=True,
            pass_fds=passed,
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
    return child.pid, read_fd


def _await_word(read_fd: int, timeout_s: float) -> str:
    """The candidate's first line on its status pipe (``""`` if it closed it unsaid)."""
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
    return buffer.split(b"\n", 1)[0].decode("utf-8", "replace").strip()


def launch(environ: Mapping[str, str], timeout_s: float, going: Going | None = None) -> str:
    """Launch one candidate and wait for its word: ``ready`` or ``lost`` (another daemon
    won). ``going``: a standby already told to go (:func:`standby_go`), whose word counts
    instead, unless it left without one. A candidate that fails says why, and that error is
    raised here."""
    word = going.word(timeout_s) if going is not None else ""
    if not word:
        _pid, read_fd = _spawn(environ)
        word = _await_word(read_fd, timeout_s)
    if word in ("ready", "lost"):
        return word
    if word.startswith("{"):
        import json

        try:
            raise VenomError.from_json(json.loads(word))
        except ValueError:
            pass
    raise VenomError(
        "unavailable.startup_result",
        "the daemon exited before it was ready",
        {"fix": "venom-mem serve  # run it in the foreground to see why"},
    )


class Going:
    """A standby told to go: its status pipe, read once."""

    def __init__(self, status_fd: int) -> None:
        self._status_fd: int | None = status_fd

    def word(self, timeout_s: float) -> str:
        """Its first line (``""``: it left without one, and a launch is made anew)."""
        fd, self._status_fd = self._status_fd, None
        return "" if fd is None else _await_word(fd, timeout_s)

    def abandon(self) -> None:
        """Not waited for: it leaves by itself (the config made starts explicit)."""
        fd, self._status_fd = self._status_fd, None
        if fd is not None:
            os.close(fd)


class _Standby:
    """A spawned candidate waiting for ``go``: the write end of its pipe, and its status
    pipe's read end."""

    def __init__(self, go_fd: int, status_fd: int) -> None:
        self.go_fd = go_fd
        self.status_fd = status_fd

    def close(self) -> None:
        """Its end: it reads the end of the pipe and exits."""
        for fd in (self.go_fd, self.status_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


_held: list[_Standby] = []  # at most one: this process's, for its next launch
_held_lock = threading.Lock()


def start_standby(environ: Mapping[str, str]) -> int | None:
    """For ``venom-mem mcp`` at its start: when no daemon serves this caller's socket and
    this caller may start one, spawn a standby for its first call's launch and hold it. The
    standby reads the config itself (``daemon.mcp_standby``, ``daemon.startup``), so this
    process reads none for it. Its pid, or ``None`` (one is held already, or it could not be
    spawned); anything amiss is left for the first call to report."""
    from venom_mem_core.token_text import well_formed

    from ._locator import DaemonLocator, check_startup_context

    token = environ.get("VENOM_MEM_TOKEN", "")
    if token and not well_formed(token):
        return None  # initialize fails for it: nothing is started (mcp/link.py)
    try:
        check_startup_context(environ, token)
        if os.path.lexists(DaemonLocator(environ).socket()):
            return None  # served (or a stale socket: the first call launches as it always did)
    except VenomError:
        return None
    with _held_lock:
        if _held:
            return None
    # A standby only saves time: nothing that goes wrong here may fail the relay's start.
    try:
        go_read, go_write = os.pipe()
    except OSError:
        return None
    try:
        pid, status_fd = _spawn(environ, standby_fd=go_read)
    except (VenomError, OSError, RuntimeError):
        os.close(go_write)
        return None
    finally:
        os.close(go_read)
    with _held_lock:
        _held.append(_Standby(go_write, status_fd))
    return pid


def _take_standby() -> _Standby | None:
    with _held_lock:
        return _held.pop() if _held else None


def dismiss_standby() -> None:
    """No launch will need the standby (a daemon answered): let it go."""
    standby = _take_standby()
    if standby is not None:
        standby.close()


def standby_go() -> Going | None:
    """Tell the held standby to go; ``None`` when there is none or it can't be told (it
    left on its own: the launch is made anew)."""
    standby = _take_standby()
    if standby is None:
        return None
    try:
        os.write(standby.go_fd, b"go\n")
    except OSError:
        standby.close()
        return None
    with contextlib.suppress(OSError):
        os.close(standby.go_fd)
    return Going(standby.status_fd)
