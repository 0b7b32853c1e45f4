"""``--here``: the spaces and the branch of the caller's working tree, for the CLI only.

The CLI runs in the caller's directory; the daemon never does (it chdirs to /, RFC-0020
section 3), which is why this is a CLI flag and no verb param (ADR 0017). ``--here`` means:

- the project: ``project/<name>``, ``<name>`` being the git top-level directory's name in
  lowercase, or the working directory's outside git (the skill's convention);
- the branch: the current git branch, none at a detached HEAD or outside git.

``memory context --here`` asks for the project's space, then ``user``, on that branch (the
project first: it is the more particular, and a small budget should go to it first);
``memory add --here`` adds to the project's space. Params given explicitly win.
Standard library only: the ``--json`` path uses this.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from venom_mem_core.errors import VenomError

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["HERE_FLAG", "HERE_HELP", "HERE_VERBS", "apply_here", "working_tree"]

HERE_FLAG = "--here"
HERE_HELP = {
    "memory.context": "From this directory: spaces project/<git top-level name> and user, "
    "and the current git branch",
    "memory.add": "From this directory: space project/<git top-level name>",
}
HERE_VERBS = tuple(HERE_HELP)
_GIT_TIMEOUT_S = 5.0
# One segment of RFC-0020's space grammar (venom_mem_core.validation imports attrs, which
# the --json path does without).
_SEGMENT_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*\Z")


def _git(cwd: Path, *args: str) -> str | None:
    """One line of git's output, or ``None`` when git is missing or says no."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    line = done.stdout.strip()
    return line if done.returncode == 0 and line else None


def working_tree(cwd: Path) -> tuple[str, str | None]:
    """The project's name (lowercased directory name) and the current branch, if any."""
    top = _git(cwd, "rev-parse", "--show-toplevel")
    root = Path(top) if top is not None else cwd
    branch = _git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD") if top else None
    return root.name.lower(), branch


def _project_space(name: str) -> str:
    space = f"project/{name}"
    if not _SEGMENT_RE.match(name) or len(space.encode()) > 128:
        raise VenomError(
            "invalid_params.space",
            f"--here: the directory name {name!r} doesn't make a space name",
            {"param": "space", "fix": "pass --space (or --spaces) explicitly"},
        )
    return space


def apply_here(verb_name: str, params: Mapping[str, Any], cwd: str | None = None) -> dict[str, Any]:
    """``params`` with what ``--here`` fills in for ``verb_name``."""
    if verb_name not in HERE_VERBS:
        raise VenomError.param("unknown", "here", f"{verb_name} has no option {HERE_FLAG}")
    name, branch = working_tree(Path(cwd if cwd is not None else os.getcwd()))
    out = dict(params)
    if verb_name == "memory.add":
        if "space" not in out:
            out["space"] = _project_space(name)
        return out
    if "spaces" not in out:
        out["spaces"] = [_project_space(name), "user"]
    if branch is not None:
        out.setdefault("branch", branch)
    return out
