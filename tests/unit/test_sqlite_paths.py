"""Store location (CONTRACT section 1), permission checks, and the store lock."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from venom_mem_adapters.sqlite import SqliteStore, StoreLock, default_store_path
from venom_mem_core.errors import VenomError

# -- default_store_path --------------------------------------------------------------------


def test_xdg_data_home_when_absolute() -> None:
    env = {"XDG_DATA_HOME": "/data/x", "HOME": "/home/u"}
    assert default_store_path(env) == Path("/data/x/venom-mem/store.db")


@pytest.mark.parametrize("value", [None, "", "relative/dir", "./x"])
def test_xdg_data_home_unset_empty_or_relative_is_ignored(value: str | None) -> None:
    env = {"HOME": "/home/u"}
    if value is not None:
        env["XDG_DATA_HOME"] = value
    assert default_store_path(env) == Path("/home/u/.local/share/venom-mem/store.db")


def test_store_path_config_wins() -> None:
    env = {"XDG_DATA_HOME": "/data/x", "HOME": "/home/u"}
    assert default_store_path(env, "/srv/mem/store.db") == Path("/srv/mem/store.db")


def test_store_path_must_be_absolute() -> None:
    with pytest.raises(VenomError) as info:
        default_store_path({"HOME": "/home/u"}, "mem/store.db")
    assert info.value.code == "invalid_params.config"
    assert info.value.data == {"param": "store.path"}


def test_home_falls_back_to_the_password_database() -> None:
    home = pwd.getpwuid(os.getuid()).pw_dir
    assert default_store_path({}) == Path(home) / ".local/share/venom-mem/store.db"
    assert default_store_path({"HOME": "rel"}) == Path(home) / ".local/share/venom-mem/store.db"


# -- permissions -----------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return os.lstat(path).st_mode & 0o777


def test_new_store_directory_0700_and_files_0600(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "venom-mem" / "store.db"
    with StoreLock(path), SqliteStore.open(path) as store:
        with store.write() as tx:
            tx.set_meta("k", "v")
        assert _mode(path.parent) == 0o700
        for name in ("store.db", "store.db-wal", "store.db-shm", "store.db.lock"):
            assert _mode(path.parent / name) == 0o600, name


def _refused(path: Path, named: Path) -> None:
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.code == "failed.store"
    assert info.value.data["path"] == str(named)
    assert str(named) in info.value.message


def test_world_readable_database_refused(tmp_path: Path) -> None:
    path = tmp_path / "s" / "store.db"
    SqliteStore.open(path).close()
    path.chmod(0o644)
    _refused(path, path)
    assert _mode(path) == 0o644  # refused, not repaired


def test_group_writable_directory_refused(tmp_path: Path) -> None:
    directory = tmp_path / "s"
    directory.mkdir(mode=0o700)
    directory.chmod(0o770)
    _refused(directory / "store.db", directory)
    assert not (directory / "store.db").exists()


def test_symlinked_directory_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    _refused(link / "store.db", link)
    assert list(real.iterdir()) == []


def test_symlinked_database_refused(tmp_path: Path) -> None:
    directory = tmp_path / "s"
    directory.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.db"
    SqliteStore.open(tmp_path / "t" / "elsewhere.db").close()
    (directory / "store.db").symlink_to(target)
    _refused(directory / "store.db", directory / "store.db")


def test_world_readable_wal_refused(tmp_path: Path) -> None:
    path = tmp_path / "s" / "store.db"
    SqliteStore.open(path).close()
    wal = Path(f"{path}-wal")
    wal.touch(mode=0o644)
    wal.chmod(0o644)
    _refused(path, wal)


def test_refusal_carries_a_fix(tmp_path: Path) -> None:
    path = tmp_path / "s" / "store.db"
    SqliteStore.open(path).close()
    path.chmod(0o640)
    with pytest.raises(VenomError) as info:
        SqliteStore.open(path)
    assert info.value.data["fix"] == f"chmod 0600 '{path}'"


def test_directory_owned_by_another_user_refused(tmp_path: Path) -> None:
    if os.getuid() == 0:
        directory = tmp_path / "s"
        directory.mkdir(mode=0o700)
        os.chown(directory, 65534, 65534)  # nobody
    else:
        directory = Path("/")  # exists, is no symlink, and belongs to root
    _refused(directory / "store.db", directory)


# -- the store lock --------------------------------------------------------------------------


def test_second_lock_on_one_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s" / "store.db"
    with StoreLock(path) as first:
        assert first.held
        second = StoreLock(path)
        with pytest.raises(VenomError) as info:
            second.acquire()
        assert info.value.code == "conflict.store_locked"
        assert info.value.exit_code == 5
        assert info.value.data == {"path": f"{path}.lock"}
        assert not second.held
    with StoreLock(path) as again:  # released on exit
        assert again.held


def test_lock_file_that_is_a_symlink_refused(tmp_path: Path) -> None:
    directory = tmp_path / "s"
    directory.mkdir(mode=0o700)
    (directory / "store.db.lock").symlink_to(tmp_path / "victim")
    with pytest.raises(VenomError) as info:
        StoreLock(directory / "store.db").acquire()
    assert info.value.code == "failed.store"
    assert not (tmp_path / "victim").exists()
