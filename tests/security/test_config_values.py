"""Config values an admin can set over the socket, checked before they reach the file.

RFC-0020 section 6: "The root MUST be absolute" for the store; CONTRACT section 9: a file
that doesn't validate stops serve with ``invalid_params.config``. A relative ``store.path``
written by ``config set`` would make the next on-demand daemon (whose cwd is ``/``) open or
create a store relative to ``/``.
"""

from __future__ import annotations

from tests.support.daemon_env import make_world


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
