"""``config.zon`` on disk: where it is, loading it, rewriting one key, and reloading.

No file means the defaults. A file that doesn't parse or validate is ``invalid_params.config``
naming the file and line. ``config set`` rewrites the whole file from its parsed values, so
comments and formatting are not kept (docs/adr/0005-config-zon.md); the write is atomic and
the file is 0600, because it may hold ``embeddings.api_key``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from venom_mem_core.config import Config
from venom_mem_core.errors import VenomError

from . import _zon as zon
from ._path import config_file_path

__all__ = [
    "default_config_path",
    "load_config",
    "load_launch_config",
    "parse_value_text",
    "reload",
    "write_config_value",
]

# --value text that starts like one of these is structured: a parse error is reported,
# not taken as a bare string.
_STRUCTURED_STARTS = (".{", "[", "{", '"', "\\\\")


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$VENOM_MEM_CONFIG``, else ``$XDG_CONFIG_HOME/venom-mem/config.zon`` when that is an
    absolute path, else ``~/.config/venom-mem/config.zon`` (CONTRACT section 1;
    :func:`._path.config_file_path`)."""
    return Path(config_file_path(environ))


def _read(path: Path) -> str | None:
    """The file's text, or None when there is no file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise VenomError.file_error(
            "invalid_params.config", path, "read the config file", err, {"file": str(path)}
        ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise VenomError(
            "invalid_params.config",
            f"{path}:{line}: the file is not valid UTF-8",
            {"file": str(path), "line": line},
        ) from None


def _load(path: Path, *, launch: bool = False) -> tuple[Config, dict[str, Any]]:
    """The validated config and the file's own parsed values (empty with no file); with
    ``launch``, only what the command line reads (:meth:`Config.launch_view`)."""
    text = _read(path)
    if text is None:
        return Config.defaults(), {}
    doc = zon.parse_document(text, filename=str(path))
    if isinstance(doc.value, list) and not doc.value:
        raw: Any = {}
    else:
        raw = doc.value
    build = Config.launch_view if launch else Config.from_mapping
    return build(raw, lines=doc.lines, filename=str(path)), raw


def load_config(path: Path) -> Config:
    """Read and validate the file; no file means :meth:`Config.defaults`."""
    return _load(path)[0]


def load_launch_config(path: Path) -> Config:
    """:func:`load_config` for the command line: the sections it reads to find or launch
    the daemon, checked without loading cattrs (:meth:`Config.launch_view`)."""
    return _load(path, launch=True)[0]


def write_config_value(path: Path, key: str, value: Any) -> Config:
    """Set one leaf key and rewrite the file atomically; return the new config.

    The file must already be valid. Other keys keep their values (keys never written stay
    absent, so they keep following the defaults); comments and layout are not kept.
    """
    current, raw = _load(path)
    new = current.with_value(key, value)
    section, _, leaf = key.partition(".")
    body = raw.get(section)
    if not isinstance(body, dict):
        body = {}
        raw[section] = body
    body[leaf] = value
    # The rewritten text must read back as the same config before it replaces the file.
    text = zon.dumps(raw) + "\n"
    reread = zon.parse(text, filename=str(path))
    if not isinstance(reread, dict) or Config.from_mapping(reread) != new:  # pragma: no cover
        raise VenomError("failed.internal", f"{path}: rewriting {key} would change other keys")
    _atomic_write(path, text)
    return new


def reload(path: Path, current: Config) -> tuple[Config, list[str]]:
    """Read the file again.

    Returns the config to use now — the file's values, except that every restart key keeps
    ``current``'s value — and the changed keys that wait for a restart. A file that doesn't
    parse or validate raises, and ``current`` (immutable) is what the caller still has.
    """
    return current.reloaded(load_config(path))


def parse_value_text(text: str) -> Any:
    """``config set --value``: ZON, else JSON, else a bare word taken as a string.

    ``20``, ``"http"``, ``true``, ``.{ .{ .right = "read", .scope = "*" } }`` and
    ``[{"right":"read","scope":"*"}]`` all parse; ``http`` and ``on-demand`` are strings.
    Text that starts like structured data (``.{``, ``[``, ``{``, ``"``) but parses as neither
    is ``invalid_params.config``.
    """
    stripped = text.strip()
    try:
        return zon.parse(stripped, filename="--value")
    except VenomError as zon_error:
        try:
            return json.loads(stripped)
        except ValueError:
            pass
        if stripped.startswith(_STRUCTURED_STARTS):
            raise VenomError(
                "invalid_params.config",
                f"--value is neither ZON nor JSON: {zon_error.message}",
                {"param": "value"},
            ) from None
        return stripped


# -- atomic write ------------------------------------------------------------------------------


def _atomic_write(path: Path, text: str) -> None:
    # A config.zon that is a link (into a dotfiles repository, say) is written where it
    # points, so the link and the file it names don't part ways.
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        from ..private_files import write_private_file  # only a write needs it

        write_private_file(target, text)
    except OSError as err:
        raise VenomError.file_error("failed.internal", path, "write the config file", err) from None
