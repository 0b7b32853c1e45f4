"""``venom-mem setup``'s four modes, chosen by its switches (ADR 0036): printed (the
default: make the clients, print the steps), ``--apply`` (do the same steps), ``--check``
(report), ``--remove`` (undo ``--apply``). Each prints for a person, or JSON with
``--json``, and returns the exit code."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from typing import Any

from venom_mem_core.errors import VenomError

from .harness_setup import render_setup, run_setup

__all__ = ["render_applied", "render_removed", "run_setup_command"]

_MODES = ("apply", "check", "remove")


def _harnesses(params: Mapping[str, Any], *, optional: bool) -> list[str]:
    names = list(dict.fromkeys(params.get("harnesses") or []))
    if not names and not optional:
        # The parser's own words for a missing param: harnesses is optional only for --check.
        raise VenomError.param("missing", "harnesses", "setup needs --harnesses")
    return names


def _mode(params: Mapping[str, Any]) -> str:
    chosen = [mode for mode in _MODES if params.get(mode)]
    if len(chosen) > 1:
        raise VenomError.param(
            "type", chosen[1], f"--{chosen[0]} and --{chosen[1]} are separate runs: choose one"
        )
    if params.get("revoke") and chosen != ["remove"]:
        raise VenomError.param("type", "revoke", "--revoke goes with --remove")
    if params.get("replace") and chosen in (["check"], ["remove"]):
        raise VenomError.param("type", "replace", f"--replace does not go with --{chosen[0]}")
    return chosen[0] if chosen else "print"


def _steps(entry: Mapping[str, Any], status: Mapping[str, bool] | None) -> list[str]:
    """The same lines as the printed mode; with ``status``, each step marked done or
    already done."""

    def mark(kind: str) -> str:
        if status is None or kind not in status:
            return ""
        return "[changed] " if status[kind] else "[already] "

    lines = ["  " + mark("register") + shlex.join(entry["command"])]
    for step in entry["steps"]:
        first, *rest = step["lines"]
        lines.append("  " + mark(step["kind"]) + first)
        lines += [f"  {line}" for line in rest]
    return lines


def render_applied(result: Mapping[str, Any]) -> str:
    lines = ["Done, through each harness's own command where it has one; backups beside each file."]
    for entry in result["harnesses"]:
        status = {step["step"]: step["changed"] for step in entry["applied"]}
        token = "" if "token" in entry else ", its token kept"
        lines += [
            "",
            f"{entry['harness']}  (client {entry['client']}, {entry['principal']}{token})",
        ]
        lines += _steps(entry, status)
    if not result["changed"]:
        lines += ["", "Nothing changed: every step was done already."]
    return "\n".join(lines) + "\n"


def render_removed(result: Mapping[str, Any]) -> str:
    lines: list[str] = []
    for entry in result["harnesses"]:
        undone = ", ".join(entry["removed"]) or "nothing to undo"
        lines.append(f"{entry['harness']}: removed {undone}")
        lines += [
            f"  kept (changed by the harness since --apply): {path}" for path in entry["kept"]
        ]
        lines += [f"  backup left: {path}" for path in entry["backups"]]
    return "\n".join(lines) + "\n"


def run_setup_command(params: Mapping[str, Any], environ: Mapping[str, str], as_json: bool) -> int:
    from .run import print_json

    mode = _mode(params)
    result: dict[str, Any]
    if mode == "check":
        from .setup_check import check_setup, render_check

        result = check_setup(_harnesses(params, optional=True), environ)
        text, code = render_check(result), 0 if result["ok"] else 1
    elif mode == "apply":
        from .setup_apply import apply_setup

        result = apply_setup(
            _harnesses(params, optional=False), replace=params["replace"], environ=environ
        )
        text, code = render_applied(result), 0
    elif mode == "remove":
        from .setup_apply import remove_setup

        result = remove_setup(
            _harnesses(params, optional=False), revoke=params["revoke"], environ=environ
        )
        text, code = render_removed(result), 0
    else:
        result = run_setup(
            _harnesses(params, optional=False), replace=params["replace"], environ=environ
        )
        text, code = render_setup(result), 0
    if as_json:
        print_json(result)
    else:
        sys.stdout.write(text)
    return code
