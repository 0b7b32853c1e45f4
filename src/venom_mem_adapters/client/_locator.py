"""Where this caller's store, config and daemon are (CONTRACT section 1), and whether it
may start one (RFC-0020 section 8's launcher rule). No socket, json or subprocess: the MCP
relay asks this before anything else, to spawn its standby (``_launcher``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from venom_mem_core.errors import VenomError
from venom_mem_core.token_text import OWNER_TOKEN

from ._runtime_paths import default_store_path, socket_path

TYPE_CHECKING = False  # typing costs the relay's start milliseconds; mypy still sees it
if TYPE_CHECKING:
    from venom_mem_core.config import Config

__all__ = ["DaemonLocator", "check_startup_context"]


def check_startup_context(environ: Mapping[str, str], token: str) -> None:
    """``@owner`` below a process manager is refused before anything connects or launches."""
    # "Set" as the shell means it: an empty VENOM_MANAGER= is still the marker.
    if token == OWNER_TOKEN and ("VENOM_MANAGER" in environ or "VENOM_MEM_PRINCIPAL" in environ):
        raise VenomError(
            "denied.startup_context",
            "@owner is refused below a process manager",
            {"fix": "set VENOM_MEM_TOKEN to a client token; venom-mem client add creates one"},
        )


class DaemonLocator:
    """Where this caller's store, config and daemon are. The config is read only when an
    answer needs it (a launch, the store path, the runtime directory's last fallback)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self._config: Config | None = None
        self._socket: str | None = None

    def config(self) -> Config:
        """The config's ``store`` and ``daemon`` sections (the others at their defaults):
        the daemon reads the whole file itself."""
        if self._config is None:
            from ..config import default_config_path, load_launch_config

            self._config = load_launch_config(default_config_path(self.environ))
        return self._config

    def store_path(self) -> str:
        if self._config is None and not self._config_file():
            # No file is every key at its default (config/_file.py), and the store's name
            # none: the default location, without loading the config's records (a relay's
            # initialize with no daemon running asks this; tests/unit/test_config.py).
            return default_store_path(self.environ)
        store = self.config().store
        return default_store_path(self.environ, store.path, store.url)

    def _config_file(self) -> bool:
        from ..config import config_file_path, config_file_present

        return config_file_present(config_file_path(self.environ))

    def socket(self) -> str:
        """This caller's own socket path (CONTRACT section 1)."""
        if self._socket is None:
            self._socket = socket_path(self.environ, lambda: os.path.dirname(self.store_path()))
        return self._socket

    def recorded_socket(self) -> str | None:
        """The socket the store's daemon record names, when it isn't our own."""
        from ._daemon_record import read_record

        record = read_record(self.store_path())
        if record is None:
            return None
        recorded = str(record["socket"])
        return None if recorded == self.socket() else recorded
