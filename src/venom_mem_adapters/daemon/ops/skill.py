"""``skill`` and ``skill.install``: the agent skill generated from the manifest.

``skill`` returns ``{name, content}`` (:func:`venom_mem_core.skill.render_skill`).
``skill.install`` writes the same text where the supported harnesses look for user skills,
under the daemon's ``HOME`` (the launcher forwards it): ``~/.claude/skills/venom-mem/SKILL.md``
(Claude Code) and ``~/.codex/skills/venom-mem/SKILL.md`` (Codex). Missing directories are
created 0700 and the file is written atomically, 0600. Writing files is the ``files`` right,
which only the owner holds (RFC-0020 "Agent-contract impact": a human runs it with
``VENOM_MEM_TOKEN=@owner``); it never registers the MCP server or edits a harness's settings.
"""

from __future__ import annotations

import functools
import os
import pwd
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Resource, check
from venom_mem_core.skill import SKILL_NAME, render_skill

from ..server import Request

__all__ = ["SKILL_DIRS", "install_skill", "skill_install_verb", "skill_targets", "skill_verb"]

# Where each supported harness looks for user skills, relative to the home directory.
SKILL_DIRS = (Path(".claude") / "skills", Path(".codex") / "skills")
SKILL_FILE = "SKILL.md"
_DIR_MODE = 0o700
_FILE_MODE = 0o600


def _home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME", "")
    if os.path.isabs(home):
        return Path(home)
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def skill_targets(home: Path) -> list[Path]:
    return [home / directory / SKILL_NAME / SKILL_FILE for directory in SKILL_DIRS]


def _make_dirs(directory: Path, home: Path) -> None:
    """Create what is missing below ``home``, each new directory 0700; existing ones are left
    as their owner set them."""
    missing: list[Path] = []
    current = directory
    while not current.exists() and current not in (home, current.parent):
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, _DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(path, _DIR_MODE)  # the umask may have taken owner bits


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _FILE_MODE)
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def install_skill(home: Path, text: str) -> list[Path]:
    """Write the skill for every supported harness; returns the files written."""
    written: list[Path] = []
    for target in skill_targets(home):
        try:
            _make_dirs(target.parent, home)
            _write(target, text)
        except OSError as err:
            raise VenomError(
                "failed.internal",
                f"{target}: can't write the skill: {err.strerror or err}",
                {"path": str(target)},
            ) from None
        written.append(target)
    return written


async def skill_verb(request: Request) -> dict[str, Any]:
    return {"name": SKILL_NAME, "content": render_skill()}


async def skill_install_verb(request: Request) -> dict[str, Any]:
    check(request.principal, "files", Resource.store())
    home = _home(os.environ)
    paths = await anyio.to_thread.run_sync(functools.partial(install_skill, home, render_skill()))
    return {"paths": [str(p) for p in paths]}
