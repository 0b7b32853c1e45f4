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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Resource, check
from venom_mem_core.skill import SKILL_NAME, render_skill

from ...private_files import make_private_dirs, write_private_file
from ..context import Request

__all__ = ["SKILL_DIRS", "install_skill", "skill_install_verb", "skill_targets", "skill_verb"]

# Where each supported harness looks for user skills, relative to the home directory.
SKILL_DIRS = (Path(".claude") / "skills", Path(".codex") / "skills")
SKILL_FILE = "SKILL.md"


def _home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME", "")
    if os.path.isabs(home):
        return Path(home)
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def skill_targets(home: Path) -> list[Path]:
    return [home / directory / SKILL_NAME / SKILL_FILE for directory in SKILL_DIRS]


def install_skill(home: Path, text: str) -> list[Path]:
    """Write the skill for every supported harness; returns the files written."""
    written: list[Path] = []
    for target in skill_targets(home):
        try:
            make_private_dirs(target.parent, stop_at=home)
            write_private_file(target, text)
        except OSError as err:
            raise VenomError.file_error(
                "failed.internal", target, "write the skill", err, {"path": str(target)}
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
