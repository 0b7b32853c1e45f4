"""CONTRACT section 1: where the runtime directory is, the store's daemon record, and the
checks a client makes on a socket before it sends a byte."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from venom_mem_adapters.client._daemon_record import read_record, remove_record, write_record
from venom_mem_adapters.client._runtime_paths import runtime_dir, socket_path
from venom_mem_adapters.client._socket_trust import check_peer, check_socket_dir
from venom_mem_core.errors import VenomError


def never() -> str:
    raise AssertionError("the store directory was not needed")


def test_xdg_runtime_dir_comes_first(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    assert runtime_dir(env, never, run_user_base=str(tmp_path / "none")) == str(
        tmp_path / "venom-mem"
    )


def test_run_user_when_it_is_ours_and_private(tmp_path: Path) -> None:
    mine = tmp_path / str(os.getuid())
    mine.mkdir(mode=0o700)
    assert runtime_dir({}, never, run_user_base=str(tmp_path)) == str(mine / "venom-mem")


@pytest.mark.parametrize("mode", [0o755, 0o711, 0o777])
def test_run_user_that_others_can_enter_is_passed_over(tmp_path: Path, mode: int) -> None:
    mine = tmp_path / str(os.getuid())
    mine.mkdir()
    os.chmod(mine, mode)
    found = runtime_dir({}, lambda: "/store/dir", run_user_base=str(tmp_path))
    assert found == "/store/dir/run"


def test_otherwise_inside_the_store_directory_never_tmp(tmp_path: Path) -> None:
    for env in ({}, {"XDG_RUNTIME_DIR": "relative"}, {"XDG_RUNTIME_DIR": str(tmp_path / "x")}):
        found = runtime_dir(env, lambda: "/s", run_user_base=str(tmp_path / "none"))
        assert found == "/s/run"
        assert not found.startswith("/tmp")


def test_a_long_socket_path_names_the_fix() -> None:
    with pytest.raises(VenomError) as caught:
        socket_path({"VENOM_MEM_SOCKET": "/" + "x" * 120}, never)
    assert caught.value.code == "failed.socket"
    assert "VENOM_MEM_SOCKET" in caught.value.data["fix"]


def test_the_record_round_trips_and_is_private(tmp_path: Path) -> None:
    store = str(tmp_path / "store.db")
    write_record(store, socket="/run/x/daemon.sock", pid=42, source="abc")
    assert read_record(store) == {"socket": "/run/x/daemon.sock", "pid": 42, "source": "abc"}
    assert os.stat(f"{store}.daemon").st_mode & 0o777 == 0o600
    remove_record(store, pid=41)  # someone else's: left alone
    assert read_record(store) is not None
    remove_record(store, pid=42)
    assert read_record(store) is None


def test_a_record_others_could_have_written_is_no_record(tmp_path: Path) -> None:
    store = str(tmp_path / "store.db")
    path = Path(f"{store}.daemon")
    path.write_text(json.dumps({"socket": "/elsewhere.sock", "pid": 1}))
    os.chmod(path, 0o644)
    assert read_record(store) is None
    os.chmod(path, 0o600)
    assert read_record(store) is not None
    path.write_text(json.dumps({"socket": "relative.sock"}))
    assert read_record(store) is None
    path.unlink()
    path.symlink_to(tmp_path / "target")
    (tmp_path / "target").write_text(json.dumps({"socket": "/x.sock"}))
    os.chmod(tmp_path / "target", 0o600)
    assert read_record(store) is None  # a link is not followed


def test_socket_directory_checks(tmp_path: Path) -> None:
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o755)
    check_socket_dir(str(ours / "d.sock"))  # 0755: nobody else can write
    os.chmod(ours, 0o775)
    with pytest.raises(VenomError, match="group or others"):
        check_socket_dir(str(ours / "d.sock"))
    os.chmod(ours, 0o700)
    link = tmp_path / "link"
    link.symlink_to(ours)
    with pytest.raises(VenomError, match="symbolic link"):
        check_socket_dir(str(link / "d.sock"))


def test_the_peer_of_our_own_socket_passes(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(path)
        assert check_peer(client, path) == os.getpid()
    finally:
        client.close()
        server.close()
