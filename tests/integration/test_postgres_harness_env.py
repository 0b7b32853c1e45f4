"""A team store reached the way a real harness launches ``venom-mem mcp`` (issue 19, with
issue 12's environments): Codex passes its servers only HOME, LANG, PATH, SHELL, TERM, so no
``PG*`` variable reaches the adapter or the daemon it starts. The database is then found only
through libpq's own files in HOME (docs/team-store.md): ``~/.pg_service.conf`` names the
server, ``~/.pgpass`` holds the password, and config.zon says ``service=team`` and nothing
secret. The server asks this role for a real password (scram-sha-256), so a daemon that didn't
read ``~/.pgpass`` could not connect at all.

Two homes play two machines: Codex's adapter on one stores a memory; the other home's
terminal finds it, through its own daemon. The password appears in no file venom-mem wrote, in
doctor, in store.status, nor in any error.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_harness_environments import Machine, call, ok, run
from tests.support.daemon_env import ALL_RW
from tests.support.mcp_stdio import mcp_session
from tests.support.postgres_server import PostgresServer, running_server

PASSWORD = f"team-{secrets.token_hex(8)}"  # only ~/.pgpass holds it


@pytest.fixture(scope="module")
def password_server() -> Iterator[PostgresServer]:
    """A server of its own whose ``team`` role must give a password on the socket."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
    try:
        server = running_server(hba=["local all team scram-sha-256"])
        started = server.__enter__()
    except RuntimeError as exc:
        print(f"password_server: {exc}")
        pytest.skip(f"no PostgreSQL server for the tests: {exc}")
    try:
        with psycopg.connect(started.url(), autocommit=True) as admin:
            admin.execute(f"CREATE ROLE team LOGIN PASSWORD '{PASSWORD}'")
            admin.execute("CREATE DATABASE teamdb OWNER team")
        yield started
    finally:
        server.__exit__(None, None, None)


def team_machine(server: PostgresServer, *, with_password: bool = True) -> Machine:
    """A home with libpq's service file and password file, and a config naming the service."""
    root = Path(tempfile.mkdtemp(prefix="vm-t-", dir="/tmp"))
    home = root / "home"
    home.mkdir(mode=0o700)
    (root / "xdg-run").mkdir(mode=0o700)
    (home / ".pg_service.conf").write_text(
        f"[team]\nhost={server.socket_dir}\nport={server.port}\nuser=team\ndbname=teamdb\n"
    )
    if with_password:
        passfile = home / ".pgpass"
        passfile.write_text(f"{server.socket_dir}:{server.port}:teamdb:team:{PASSWORD}\n")
        passfile.chmod(0o600)  # libpq ignores a password file others can read
    config = home / ".config" / "venom-mem" / "config.zon"
    config.parent.mkdir(parents=True, mode=0o700)
    config.write_text('.{ .store = .{ .url = "postgresql:///?service=team" } }\n')
    return Machine(root)


@pytest.fixture
def two_homes(password_server: PostgresServer) -> Iterator[tuple[Machine, Machine]]:
    homes = (team_machine(password_server), team_machine(password_server))
    try:
        yield homes
    finally:
        for home in homes:
            home.stop_daemons()
            shutil.rmtree(home.root, ignore_errors=True)


def written_by_us(machine: Machine) -> str:
    """Every file under the home but libpq's own two, as text."""
    texts = []
    for path in machine.home.rglob("*"):
        if path.is_file() and path.name not in (".pgpass", ".pg_service.conf"):
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def test_codex_on_one_home_and_a_terminal_on_another_share_the_team_store(
    two_homes: tuple[Machine, Machine],
) -> None:
    laptop, build_box = two_homes
    added = laptop.cli(
        "client", "add", "--name", "codex", "--grants", ALL_RW, "--json",
        env=laptop.terminal_env("@owner"),
    )  # fmt: skip
    assert added.code == 0, added
    token = str(added.json["token"])
    memory: dict[str, str] = {}

    async def scenario() -> None:
        async with mcp_session(laptop.codex_env(token), laptop.root, exact=True) as codex:
            stored = ok(
                await call(codex, "memory_dadd", space="user", content="The team store is up.")
            )
            memory["id"] = stored["id"]
            status = ok(await call(codex, "store_dstatus"))
            assert status["engine"].startswith("postgresql "), status
            assert PASSWORD not in str(status)

    run(scenario)
    found = build_box.cli(
        "memory", "search", "--query", "team store", "--json", env=build_box.codex_env("@owner")
    )
    assert found.code == 0, found
    [hit] = found.json["results"]
    assert hit["id"] == memory["id"]
    assert hit["author"] == {"principal": "g1", "label": "codex"}  # provenance, machine-wide
    laptop_daemons, build_box_daemons = laptop.daemon_pids(), build_box.daemon_pids()
    assert len(laptop_daemons) == 1  # one daemon on each home, each its own
    assert len(build_box_daemons) == 1
    assert laptop_daemons.isdisjoint(build_box_daemons)

    doctor = build_box.cli("doctor", "--json", env=build_box.codex_env("@owner"))
    checks = {c["id"]: c for c in doctor.json["checks"]}
    assert checks["store.open"]["status"] == "ok", checks["store.open"]
    assert checks["store.postgres"]["status"] == "ok", checks["store.postgres"]
    assert PASSWORD not in doctor.stdout + doctor.stderr
    for home in (laptop, build_box):
        assert PASSWORD not in written_by_us(home)


def test_without_the_password_file_the_store_fails_with_no_secret(
    password_server: PostgresServer,
) -> None:
    machine = team_machine(password_server, with_password=False)
    try:
        result = machine.cli("store", "status", "--json", env=machine.codex_env("@owner"))
        assert result.code != 0, result
        error = result.json["error"]
        assert error["code"] == "failed.store", error
        assert "password" in error["message"].lower(), error  # libpq says what it lacks
        assert PASSWORD not in result.stdout + result.stderr
    finally:
        machine.stop_daemons()
        shutil.rmtree(machine.root, ignore_errors=True)
