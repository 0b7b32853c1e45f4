"""``venom-mem ui`` as a command: who it connects as, how it fails, what it binds, and that
nothing of the web stack is imported by any other command."""

from __future__ import annotations

import socket
import subprocess
import sys

from tests.support.daemon_env import World
from tests.support.ui_server import run_ui
from venom_mem_adapters.web.serve import _bind

WEB_MODULES = ("starlette", "uvicorn", "jinja2", "venom_mem_adapters.web")


def test_no_other_command_imports_the_web_stack() -> None:
    code = (
        "import sys\n"
        "from venom_mem_cli.app import build_cli\n"
        "import venom_mem_cli.entry, venom_mem_cli.bootstrap\n"
        "build_cli()\n"
        f"loaded = [m for m in {WEB_MODULES!r} if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_help_names_it(world: World) -> None:
    result = world.run("ui", "--help")
    assert result.code == 0
    assert "web page" in result.stdout
    assert "--port" in result.stdout


def test_a_refused_token_stops_it_before_it_listens(world: World) -> None:
    bad = "vnt1.venom-mem.g9." + "A" * 43
    result = world.run("ui", token=bad)
    assert result.code == 4
    assert result.stderr.startswith("error: denied.token")
    assert "http://" not in result.stdout


def test_owner_below_a_process_manager_is_refused(world: World) -> None:
    assert "VENOM_MEM_TOKEN" not in world.env  # so the page asks for @owner
    result = world.run("ui", VENOM_MANAGER="1")
    assert result.code == 4, result
    assert result.stderr.startswith("error: denied.startup_context")


def test_it_connects_as_the_token_it_is_given(world: World) -> None:
    token = world.add_client("reader", '[{"right":"read","scope":"*"}]')
    with run_ui(world, token=token) as ui, ui.client() as client:
        assert "as <strong>g1 (reader)</strong>" in client.get("/").text
    assert "connected to the daemon as reader" in ui.output()


def test_it_listens_on_loopback_only_without_delaying_small_writes() -> None:
    sock = _bind(0)
    try:
        host, port = sock.getsockname()
        assert host == "127.0.0.1"
        assert port > 0
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        sock.close()
