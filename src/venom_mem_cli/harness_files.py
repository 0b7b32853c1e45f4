"""A harness's user files as ``setup --apply`` and ``--remove`` touch them (ADR 0036).

- Where each harness keeps its user configuration (honouring ``CLAUDE_CONFIG_DIR``,
  ``CODEX_HOME`` and ``XDG_CONFIG_HOME`` as the harnesses do).
- The refusal to touch one that is a symlink into a repository: a dotfiles clone would
  then carry a token into a commit.
- A timestamped backup beside each file before its first change, atomic writes that keep
  the file's mode, and the record of what ``--apply`` changed (the bytes before, the digest
  after) that ``--remove`` reads to put every file back as it was.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from venom_mem_core.errors import VenomError

__all__ = [
    "BACKUP_INFIX",
    "ChangeRecord",
    "config_paths",
    "digest",
    "read_bytes",
    "refuse_repository_link",
    "write_atomic",
]

BACKUP_INFIX = ".venom-mem-backup-"


def _home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME", "")
    return Path(home) if os.path.isabs(home) else Path.home()


def _config_home(environ: Mapping[str, str]) -> Path:
    xdg = environ.get("XDG_CONFIG_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else _home(environ) / ".config"


def config_paths(harness: str, environ: Mapping[str, str]) -> dict[str, Path]:
    """The user files of ``harness`` by role: ``registration`` (where its ``mcp add``
    writes), and ``hooks`` / ``ignore`` / ``plugin`` where there are such."""
    home = _home(environ)
    if harness == "claude-code":
        claude_dir = environ.get("CLAUDE_CONFIG_DIR", "")
        if os.path.isabs(claude_dir):
            return {
                "registration": Path(claude_dir) / ".claude.json",
                "hooks": Path(claude_dir) / "settings.json",
            }
        return {"registration": home / ".claude.json", "hooks": home / ".claude" / "settings.json"}
    if harness == "codex":
        codex_home = environ.get("CODEX_HOME", "")
        root = Path(codex_home) if os.path.isabs(codex_home) else home / ".codex"
        return {"registration": root / "config.toml", "hooks": root / "hooks.json"}
    if harness == "opencode":
        root = _config_home(environ) / "opencode"
        # opencode 1.18 writes opencode.jsonc unless an opencode.json is there already; its
        # first run also writes a .gitignore beside it.
        plain = root / "opencode.json"
        config = plain if plain.exists() else root / "opencode.jsonc"
        return {
            "registration": config,
            "ignore": root / ".gitignore",
            "plugin": root / "plugins" / "venom-mem.js",
        }
    raise VenomError.param("type", "harnesses", f"unknown harness {harness!r}")


def _in_repository(path: Path) -> Path | None:
    for parent in [path, *path.parents]:
        if (parent / ".git").exists():
            return parent
    return None


def refuse_repository_link(path: Path, environ: Mapping[str, str]) -> None:
    """Refuse ``path`` when it, or a directory between it and HOME, is a symlink that
    resolves into a git work tree: the token written there would be one commit away from
    being published (RFC-0020 T4)."""
    home = _home(environ)
    candidates = [path, *[p for p in path.parents if p != home and home in p.parents]]
    for candidate in candidates:
        if not candidate.is_symlink():
            continue
        target = candidate.resolve()
        repository = _in_repository(target)
        if repository is not None:
            raise VenomError(
                "denied.config_in_repository",
                f"{candidate} is a symlink into the repository {repository}; a token written "
                "there could be committed. Nothing was changed",
                {
                    "path": str(candidate),
                    "repository": str(repository),
                    "fix": "make it a file of its own (not a link into the clone), or run the "
                    "printed steps by hand with venom-mem setup <harness>",
                },
            )


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its mode (or ``mode`` for a
    new file, 0600 by default: these files hold tokens)."""
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o600
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.venom-mem-tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _stamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")


class ChangeRecord:
    """What ``--apply`` changed for one harness: per file, whether it existed, where its
    backup is, the digest it was left with. Kept beside the store, mode 0600; the backups
    stay where they are, beside each file."""

    def __init__(self, harness: str, environ: Mapping[str, str]) -> None:
        from venom_mem_adapters.client import default_store_path

        store_dir = Path(default_store_path(environ)).parent
        self.path = store_dir / "setup" / f"{harness}.json"
        loaded = read_bytes(self.path)
        saved = json.loads(loaded) if loaded is not None else {}
        self.files: dict[str, dict[str, Any]] = saved.get("files", {})
        # What --apply did inside a file that --remove must find again: the keys of the
        # Codex hooks whose trust it recorded (ADR 0044).
        self.trusted: list[str] = saved.get("trusted", [])
        # What opencode's own npm install writes beside its config (node_modules/,
        # package.json, ...) that was not there before --apply installed its plugin.
        self.absent: list[str] = saved.get("absent", [])

    def before_change(
        self, path: Path, before: bytes | None, mode: int | None, *, dir_existed: bool = True
    ) -> str | None:
        """Back ``path`` up (the first time this record sees it) and return the backup's
        path; a file that didn't exist has none. ``dir_existed``: whether its directory was
        there before the change, so that ``--remove`` takes out one setup made."""
        key = str(path)
        if key in self.files:
            known: str | None = self.files[key]["backup"]
            return known
        backup = None
        if before is not None:
            target = path.with_name(path.name + BACKUP_INFIX + _stamp())
            write_atomic(target, before, 0o600)
            backup = str(target)
        self.files[key] = {
            "existed": before is not None,
            "dir_existed": dir_existed,
            "backup": backup,
            "mode": mode,
            "after": None,
        }
        return backup

    def after_change(self, path: Path) -> None:
        self.files[str(path)]["after"] = digest(read_bytes(path))

    def before_bytes(self, key: str) -> bytes | None:
        entry = self.files[key]
        if not entry["existed"]:
            return None
        return Path(entry["backup"]).read_bytes()

    def save(self) -> None:
        if not self.files:
            self.path.unlink(missing_ok=True)
            return
        saved: dict[str, Any] = {"files": self.files}
        saved.update({k: v for k, v in (("trusted", self.trusted), ("absent", self.absent)) if v})
        text = json.dumps(saved, indent=2, sort_keys=True) + "\n"
        write_atomic(self.path, text.encode(), 0o600)

    def forget(self) -> None:
        self.files, self.trusted, self.absent = {}, [], []
        self.path.unlink(missing_ok=True)
