"""store.url as venom-mem shows and keys it (docs/adr/0028), and the --json path staying free
of the PostgreSQL driver when a config names a PostgreSQL store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from venom_mem_adapters.client import default_store_path
from venom_mem_adapters.config import check_url, public_url, url_key
from venom_mem_core.errors import VenomError


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://team@db.example:5433/mem", "postgresql://db.example:5433/mem"),
        ("postgresql:///mem?user=team&sslmode=require", "postgresql:///mem?sslmode=require"),
        ("postgres://[::1]/mem", "postgres://[::1]/mem"),
        ("postgresql:///?service=team", "postgresql:///?service=team"),
    ],
)
def test_public_url_drops_who_connects(url: str, shown: str) -> None:
    assert public_url(url) == shown


def test_the_key_ignores_the_user_and_differs_per_database() -> None:
    assert url_key("postgresql://ann@db/mem") == url_key("postgresql://bob@db/mem")
    assert url_key("postgresql://db/mem") != url_key("postgresql://db/other")
    assert len(url_key("postgresql://db/mem")) == 16


def test_check_url_refuses_a_password_without_repeating_it() -> None:
    with pytest.raises(VenomError) as caught:
        check_url("postgresql://ann:s3cret@db/mem")
    assert caught.value.code == "invalid_params.store_url"
    assert "s3cret" not in caught.value.message


def test_a_postgres_store_has_a_local_anchor_per_database(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path)}
    one = default_store_path(env, "", "postgresql://db/mem")
    assert one == str(
        tmp_path / "venom-mem" / f"postgres-{url_key('postgresql://db/mem')}" / "store"
    )
    assert default_store_path(env, "", "postgresql://db/other") != one
    assert default_store_path(env) == str(tmp_path / "venom-mem" / "store.db")


def test_the_json_path_does_not_import_psycopg(tmp_path: Path) -> None:
    config = tmp_path / "config.zon"
    config.write_text('.{ .store = .{ .url = "postgresql://db.invalid/mem" } }\n')
    probe = (
        "import json, sys\n"
        "from venom_mem_cli.entry import main\n"
        "sys.argv = ['venom-mem', 'ping', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps([m for m in ('psycopg', 'psycopg_pool') if m in sys.modules]))"
    )
    env = {
        **os.environ,
        "VENOM_MEM_CONFIG": str(config),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "VENOM_MEM_SOCKET": str(tmp_path / "d.sock"),
    }
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert "unavailable.not_running" in result.stdout, result
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_the_setup_guide_config_loads(tmp_path: Path) -> None:
    """docs/team-store.md's config.zon block is a valid config naming a PostgreSQL store."""
    from venom_mem_adapters.config import load_config

    guide = (Path(__file__).parents[2] / "docs" / "team-store.md").read_text()
    block = guide.split("```zig\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "config.zon"
    path.write_text("\n".join(line.strip() for line in block.splitlines()) + "\n")
    url = load_config(path).store.url
    assert url.startswith("postgresql://venom@db.example.com:5432/venom_mem")
    assert public_url(url) == "postgresql://db.example.com:5432/venom_mem?sslmode=verify-full"
