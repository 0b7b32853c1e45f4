"""Where config.zon is (CONTRACT section 1), without reading it.

Standard library only, and no pathlib: a client that finds no file there knows every key is
at its default without loading the config's records (``_locator.DaemonLocator``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["config_file_path", "config_file_present"]


def config_file_path(environ: Mapping[str, str] | None = None) -> str:
    """``$VENOM_MEM_CONFIG``, else ``$XDG_CONFIG_HOME/venom-mem/config.zon`` when that is an
    absolute path, else ``~/.config/venom-mem/config.zon``. A relative override is taken
    against the working directory, as the caller meant it."""
    env = os.environ if environ is None else environ
    override = env.get("VENOM_MEM_CONFIG", "")
    if override:
        return os.path.abspath(override)
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "venom-mem", "config.zon")
    home = env.get("HOME", "")
    if not (home and os.path.isabs(home)):
        from pathlib import Path  # rare: the password database's home, as pathlib finds it

        home = str(Path.home())
    return os.path.join(home, ".config", "venom-mem", "config.zon")


def config_file_present(path: str) -> bool:
    """False only when there is no file at ``path`` (as reading it would find: a dangling
    link is no file); any other failure is for the read to report, so it is True."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True
