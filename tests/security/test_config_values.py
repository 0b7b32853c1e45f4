"""Config values an admin can set over the socket, checked before they reach the file.

RFC-0020 section 6: "The root MUST be absolute" for the store; CONTRACT section 9: a file
that doesn't validate stops serve with ``invalid_params.config``. A relative ``store.path``
written by ``config set`` would make the next on-demand daemon (whose cwd is ``/``) open or
create a store relative to ``/``.
"""

from __future__ import annotations

import pytest

from tests.support.daemon_env import make_world


@pytest.mark.xfail(
    strict=True,
    reason='config.set accepts store.path = "relative/store.db" and writes it to config.zon; '
    "the next serve then creates /relative/store.db (the daemon's cwd is /). The store.path "
    "leaf in src/venom_mem_core/config.py needs the absolute-path check that "
    "venom_mem_adapters.sqlite.paths.default_store_path makes only at serve",
)
def test_config_set_refuses_a_relative_store_path() -> None:
    with make_world() as world:
        world.write_config(".{ .daemon = .{ .idle_timeout_ms = 60000 } }")
        world.ok("whoami")
        result = world.run(
            "config", "set", "--key", "store.path", "--value", '"relative/store.db"', "--json",
            token="@owner",
        )  # fmt: skip
        before = world.config.read_text()
        world.stop_daemon()  # never serve with what may have been written
        assert result.code == 2, result
        assert result.json["error"]["code"] == "invalid_params.config"
        assert "relative" not in before
