"""``venom-mem setup HARNESS... --apply`` and ``--remove`` (ADR 0036).

``--apply`` does the steps the printed mode shows, in the same words: the registration
through the harness's own ``mcp add`` (its ``mcp remove`` first when a stale one is there),
and only where a harness has no command, an edit of its user file (Codex's two keys, the
mode of opencode's config, the session-start hook). Every file it changes is backed up
beside itself first and recorded (:class:`~.harness_files.ChangeRecord`); a step already
done is left alone, so a second run changes no byte and says so. A harness whose
registration already holds a token of its own client keeps it: no new client, no new token.

``--remove`` undoes it: the registration through the harness's own command where there is
one, the keys and the hook; then each file the record names is put back byte for byte,
when what is left is the file as it was (the harness may have written more of its own
since, which stays).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from venom_mem_core.errors import VenomError

from .harness_edits import (
    Registered,
    codex_keeping_text,
    codex_with_keys,
    load_jsonc,
    registered,
    with_hook,
    without_hook,
)
from .harness_files import ChangeRecord, config_paths, read_bytes, refuse_repository_link
from .harness_setup import CLIENT_GRANTS, SERVER, registration, venom_mem_path

__all__ = [
    "BINARIES",
    "apply_setup",
    "harness_binary",
    "remove_setup",
    "run_harness",
    "token_principal",
]

BINARIES = {"claude-code": "claude", "codex": "codex", "opencode": "opencode"}
HARNESS_TIMEOUT_S = 60.0
# Which sources a session-start hook fires on: every one each harness names.
HOOK_MATCHERS = {"claude-code": "startup|resume|clear|compact", "codex": "startup|resume|clear"}


def harness_binary(harness: str, environ: Mapping[str, str]) -> str | None:
    return shutil.which(BINARIES[harness], path=environ.get("PATH", os.defpath))


def run_harness(argv: list[str], environ: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one of a harness's own commands in the person's HOME, with no stdin and within
    HARNESS_TIMEOUT_S; ``failed.harness`` when it can't be run or doesn't end."""
    try:
        return subprocess.run(
            argv,
            env=dict(environ),
            cwd=environ.get("HOME") or None,
            capture_output=True,
            text=True,
            timeout=HARNESS_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise VenomError("failed.harness", f"{argv[0]}: {error}") from error


def _run(argv: list[str], environ: Mapping[str, str]) -> None:
    done = run_harness(argv, environ)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise VenomError(
            "failed.harness",
            f"{os.path.basename(argv[0])} {' '.join(argv[1:3])} exited {done.returncode}: "
            + " / ".join(said),
            {"command": argv[:4]},
        )


def _text(path: Path) -> str | None:
    data = read_bytes(path)
    return None if data is None else data.decode()


def token_principal(token: str, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """``whoami`` as ``token``: which client a registered token is, ``None`` when the
    store refuses it."""
    from venom_mem_adapters.client import connect

    try:
        with connect(environ, token=token) as conn:
            found: dict[str, Any] = conn.call("whoami", {})
    except VenomError as error:
        if error.code.startswith("denied."):
            return None
        raise
    return found


class _Files:
    """The files of one harness, and the one way this module changes them: snapshot,
    change, record the backup and the digest."""

    def __init__(self, harness: str, environ: Mapping[str, str]) -> None:
        self.paths = config_paths(harness, environ)
        for path in self.paths.values():
            refuse_repository_link(path, environ)
        self.record = ChangeRecord(harness, environ)
        self.changed: list[str] = []

    def change(self, paths: Sequence[Path], act: Callable[[], None]) -> bool:
        before = {p: (read_bytes(p), _mode(p), p.parent.is_dir()) for p in paths}
        act()
        touched = False
        for path, (data, mode, dir_existed) in before.items():
            if (read_bytes(path), _mode(path)) == (data, mode):
                continue
            self.record.before_change(path, data, mode, dir_existed=dir_existed)
            self.record.after_change(path)
            self.changed.append(str(path))
            touched = True
        return touched


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return None


def _client_for(
    conn: Any, harness: str, current: Registered | None, environ: Mapping[str, str], replace: bool
) -> tuple[dict[str, Any], bool]:
    """The client whose token the registration holds, if it is this harness's; else a new
    one (refused over an existing client of that name without ``replace``)."""
    if current is not None and current.token:
        who = token_principal(current.token, environ)
        if who is not None and who.get("label") == harness:
            return {"client": harness, "principal": who["principal"], "token": current.token}, False
    names = {entry["client"] for entry in conn.call("client.list", {})["clients"]}
    if harness in names:
        if not replace:
            raise VenomError(
                "conflict.client_exists",
                f"a client named {harness} exists and {harness}'s registration holds no token "
                "of it; nothing was changed",
                {"fix": f"venom-mem setup {harness} --apply --replace  # old token stops working"},
            )
        conn.call("client.remove", {"name": harness})
    made = conn.call("client.add", {"name": harness, "grants": CLIENT_GRANTS})
    return {"client": made["client"], "principal": made["principal"], "token": made["token"]}, True


def _wanted(command: list[str]) -> Registered:
    launch = command[command.index("--") + 1 :]
    flags = command[command.index(SERVER) + 1 : command.index("--")]
    env = dict(value.split("=", 1) for value in flags[1::2])
    return Registered(launch, env)


def _unregister(harness: str, binary: str, files: _Files, environ: Mapping[str, str]) -> None:
    """The harness's own removal; opencode 1.18 has none, so its entry is taken out of
    its file."""
    config = files.paths["registration"]
    if harness == "claude-code":
        files.change(
            [config], lambda: _run([binary, "mcp", "remove", "--scope", "user", SERVER], environ)
        )
    elif harness == "codex":
        files.change(
            [config], lambda: _codex_command([binary, "mcp", "remove", SERVER], config, environ)
        )
    else:
        files.change([config], lambda: _drop_opencode_entry(config))


def _codex_command(argv: list[str], config: Path, environ: Mapping[str, str]) -> None:
    """Codex's own ``mcp add``/``remove``, with the rest of its config kept as it was
    (:func:`~.harness_edits.codex_keeping_text`)."""
    from .harness_files import write_atomic

    before = _text(config)
    _run(argv, environ)
    after = _text(config)
    if before is not None and after is not None:
        kept = codex_keeping_text(before, after)
        if kept != after:
            write_atomic(config, kept.encode())


def _drop_opencode_entry(config: Path) -> None:
    from .harness_files import write_atomic

    text = _text(config) or ""
    data = load_jsonc(text)
    servers = data.get("mcp")
    if isinstance(servers, dict) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del data["mcp"]
        write_atomic(config, (json.dumps(data, indent=2) + "\n").encode())


def _apply_step(
    kind: str, harness: str, files: _Files, executable: str, environ: Mapping[str, str]
) -> bool:
    from .harness_edits import hook_command
    from .harness_files import write_atomic

    config = files.paths["registration"]
    if kind == "codex_keys":
        text = _text(config) or ""
        edited = codex_with_keys(text)
        return edited != text and files.change(
            [config], lambda: write_atomic(config, edited.encode())
        )
    if kind == "chmod":
        mode = _mode(config)
        return (
            mode is not None
            and mode != 0o600
            and files.change([config], lambda: os.chmod(config, 0o600))
        )
    if kind == "hook":
        settings = files.paths["hooks"]
        command = hook_command(executable, harness)
        added = with_hook(_text(settings), command, HOOK_MATCHERS[harness])
        return added is not None and files.change(
            [settings], lambda: write_atomic(settings, added.encode())
        )
    if kind == "codex_trust":
        return _trust_codex_hook(files, hook_command(executable, harness), environ)
    if kind == "plugin":
        from .opencode_plugin import FETCHED, plugin_text

        plugin, text = files.paths["plugin"], plugin_text(executable)
        if _text(plugin) == text:
            return False
        if str(plugin) not in files.record.files:  # its first install: what opencode's fetch
            root = plugin.parent.parent  # will add beside it, for --remove to take out
            files.record.absent = [name for name in FETCHED if not (root / name).exists()]
        return files.change([plugin], lambda: write_atomic(plugin, text.encode(), 0o644))
    return False  # a note: for the person


def _trust_codex_hook(files: _Files, command: str, environ: Mapping[str, str]) -> bool:
    """Record the person's trust in the one hook setup installed, with the hash Codex
    itself lists for it (ADR 0044); a hook Codex does not list is left untrusted. The key
    goes into the change record, for ``--remove`` to take back that trust and no other."""
    from .codex_hooks import listed_hooks, our_hook
    from .harness_edits import codex_with_trust
    from .harness_files import write_atomic

    binary = harness_binary("codex", environ)
    hook = our_hook(listed_hooks(binary or "codex", environ), command, files.paths["hooks"])
    if hook is None or hook.get("trustStatus") == "trusted":
        return False
    config = files.paths["registration"]
    trusted = codex_with_trust(_text(config) or "", hook["key"], hook["currentHash"])
    changed = files.change([config], lambda: write_atomic(config, trusted.encode()))
    if changed and hook["key"] not in files.record.trusted:
        files.record.trusted.append(hook["key"])
    return changed


def _untrust_codex_hook(files: _Files) -> None:
    """Take back the trusts ``--apply`` recorded."""
    from .harness_edits import codex_without_trust
    from .harness_files import write_atomic

    config = files.paths["registration"]
    text = _text(config)
    if text is None or not files.record.trusted:
        return
    left = text
    for key in files.record.trusted:
        left = codex_without_trust(left, key)
    if left != text:
        files.change([config], lambda: write_atomic(config, left.encode()))


def _apply_one(
    conn: Any, harness: str, executable: str, environ: Mapping[str, str], replace: bool
) -> dict[str, Any]:
    binary = harness_binary(harness, environ)
    if binary is None:
        raise VenomError(
            "failed.harness",
            f"{BINARIES[harness]} is not on PATH; nothing was changed for {harness}",
            {"fix": f"install {harness}, or run venom-mem setup {harness} and its lines by hand"},
        )
    files = _Files(harness, environ)
    config = files.paths["registration"]
    current = registered(harness, _text(config))
    client, new = _client_for(conn, harness, current, environ, replace)
    entry = {
        "harness": harness,
        **client,
        **registration(harness, client["token"], executable, environ),
    }
    if not new:
        del entry["token"]  # shown once, when it was made
    wanted = _wanted(entry["command"])
    done: list[dict[str, Any]] = []
    same = current is not None and (current.argv, current.env) == (wanted.argv, wanted.env)
    if not same:
        if current is not None:
            _unregister(harness, binary, files, environ)
        watched = [p for role, p in files.paths.items() if role not in ("hooks", "plugin")]
        add = [binary, *entry["command"][1:]]
        if harness == "codex":
            files.change(watched, lambda: _codex_command(add, config, environ))
        else:
            files.change(watched, lambda: _run(add, environ))
    done.append({"step": "register", "changed": not same})
    try:
        for step in entry["steps"]:
            changed = _apply_step(step["kind"], harness, files, executable, environ)
            if step["kind"] != "note":
                done.append({"step": step["kind"], "changed": changed})
    finally:
        files.record.save()  # a step that failed (Codex's app server) loses no earlier undo
    entry.update(applied=done, changed=bool(files.changed), files=files.changed)
    return entry


def apply_setup(
    harnesses: Sequence[str], *, replace: bool, environ: Mapping[str, str]
) -> dict[str, Any]:
    from venom_mem_adapters.client import connect

    executable = venom_mem_path()
    with connect(environ, token="@owner") as conn:
        done = [_apply_one(conn, name, executable, environ, replace) for name in harnesses]
    return {
        "executable": executable,
        "harnesses": done,
        "changed": any(entry["changed"] for entry in done),
    }


def _restore(files: _Files, keys: Sequence[str], *, untouched_only: bool) -> list[str]:
    """Put recorded files back to their bytes and mode before ``--apply``: with
    ``untouched_only``, those still as ``--apply`` left them; else those whose content is
    now the same in substance. Returns the keys put back (or found back already)."""
    from .harness_files import digest, write_atomic

    back: list[str] = []
    for key in keys:
        entry = files.record.files[key]
        path = Path(key)
        before, now = files.record.before_bytes(key), read_bytes(path)
        if (now, _mode(path)) == (before, entry.get("mode")):
            back.append(key)
            continue
        if untouched_only:
            if now is None or digest(now) != entry["after"]:
                continue
        elif before is None:
            if now is not None and not _empty_of_ours(now):
                continue
        elif now is None or not _same_substance(path, now, before):
            continue
        if before is None:
            path.unlink(missing_ok=True)
            if entry.get("dir_existed") is False:
                with contextlib.suppress(OSError):  # not empty: something else is there
                    path.parent.rmdir()
        else:
            write_atomic(path, before, entry.get("mode") or 0o600)
        back.append(key)
    return back


def _empty_of_ours(data: bytes) -> bool:
    """A file venom-mem's steps made that holds nothing else now (``{}``, or the
    ``"mcpServers": {}`` Claude Code leaves behind, or opencode's own .gitignore)."""
    text = data.decode(errors="replace").strip()
    try:
        parsed = load_jsonc(text)
    except ValueError:
        return False
    return isinstance(parsed, dict) and not _pruned(parsed)


def _pruned(value: Any) -> Any:
    """``value`` without empty objects and ``$schema``, which a harness's commands leave
    where venom-mem's entry was."""
    if isinstance(value, dict):
        out = {k: _pruned(v) for k, v in value.items() if k != "$schema"}
        return {k: v for k, v in out.items() if v != {}}
    return value


def _same_substance(path: Path, now: bytes, before: bytes) -> bool:
    if path.suffix == ".toml":
        import tomlkit

        return tomlkit.parse(now.decode()).unwrap() == tomlkit.parse(before.decode()).unwrap()
    try:
        same: bool = _pruned(load_jsonc(now.decode())) == _pruned(load_jsonc(before.decode()))
        return same
    except ValueError:
        return False


def _remove_plugin(files: _Files, back: set[str]) -> bool:
    """Take out opencode's plugin when it is the one setup wrote (whatever ``venom-mem``
    path it runs); one the person has edited since stays, as ``kept``."""
    from .opencode_plugin import PLUGIN_MARK, plugin_text

    plugin = files.paths.get("plugin")
    if plugin is None:
        return False
    if str(plugin) in back:
        return True
    text = _text(plugin)
    if text is None or not text.startswith(PLUGIN_MARK):
        return False
    executable = text.splitlines()[1].removeprefix("const VENOM_MEM = ").removesuffix(";")
    if text != plugin_text(json.loads(executable)):
        return False
    files.change([plugin], plugin.unlink)
    if files.record.files.get(str(plugin), {}).get("dir_existed") is False:
        with contextlib.suppress(OSError):  # not empty: something else is there
            plugin.parent.rmdir()
    return True


def _remove_fetched(files: _Files) -> list[str]:
    """Take out what opencode fetched into its config directory once the plugin was there
    (it waits for that fetch only when a plugin is), when it was not there before --apply
    and holds nothing but that package; else keep it, and say so."""
    from .opencode_plugin import fetched_only_ours

    plugin = files.paths.get("plugin")
    if plugin is None or not files.record.absent:
        return []
    root = plugin.parent.parent
    if not fetched_only_ours(_text(root / "package.json")):
        return [str(root / name) for name in files.record.absent if (root / name).exists()]
    for name in files.record.absent:
        path = root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return []


def _remove_one(
    conn: Any, harness: str, environ: Mapping[str, str], revoke: bool
) -> dict[str, Any]:
    from .harness_files import write_atomic

    files = _Files(harness, environ)
    recorded = list(files.record.files)
    back = set(_restore(files, recorded, untouched_only=True))
    config, settings = files.paths["registration"], files.paths.get("hooks")
    undone: list[str] = []
    current = registered(harness, _text(config))
    if current is not None:
        binary = harness_binary(harness, environ)
        if binary is None and harness != "opencode":
            raise VenomError("failed.harness", f"{BINARIES[harness]} is not on PATH")
        _unregister(harness, binary or "", files, environ)
        undone.append("register")
    elif str(config) in back:
        undone.append("register")
    if harness == "codex":
        _untrust_codex_hook(files)
    if settings is not None and (text := _text(settings)) is not None:
        left = without_hook(text, harness)
        if left is not None:
            files.change([settings], lambda: write_atomic(settings, left.encode()))
            undone.append("hook")
    elif settings is not None and str(settings) in back:
        undone.append("hook")
    if _remove_plugin(files, back):
        undone.append("plugin")
    kept_fetch = _remove_fetched(files)
    rest = [key for key in recorded if key not in back]
    back.update(_restore(files, rest, untouched_only=False))
    kept = [key for key in recorded if key not in back] + kept_fetch
    if revoke:
        names = {entry["client"] for entry in conn.call("client.list", {})["clients"]}
        if harness in names:
            conn.call("client.remove", {"name": harness})
            undone.append("revoke")
    backups = [entry["backup"] for entry in files.record.files.values() if entry["backup"]]
    files.record.forget()
    return {
        "harness": harness,
        "removed": undone,
        "changed": bool(undone) or bool(files.changed),
        "kept": kept,
        "backups": backups,
    }


def remove_setup(
    harnesses: Sequence[str], *, revoke: bool, environ: Mapping[str, str]
) -> dict[str, Any]:
    from venom_mem_adapters.client import connect

    with connect(environ, token="@owner") as conn:
        done = [_remove_one(conn, name, environ, revoke) for name in harnesses]
    return {"harnesses": done, "changed": any(entry["changed"] for entry in done)}
