"""Fixes as the command line knows them: a command a person can run as written, for the
principal and the situation this process is in (ADR 0014).

The daemon's errors carry a fix that fits any caller. The CLI knows more: the command it was
given, the token in its environment, whether the daemon starts on demand. Only the error
path imports this module, so the ``--json`` path's budget (ADR 0006) is untouched. RFC-0020
section 1's transcript stays exact: the unknown principal's ``denied.write`` fix, and
``conflict.memory_revision`` without a fix in ``--json``; a person gets the hint on stderr.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from venom_mem_core.errors import VenomError
from venom_mem_core.manifest_types import Verb
from venom_mem_core.token_text import OWNER_TOKEN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["OWNER_PREFIX", "human_hint", "situate"]

OWNER_PREFIX = f"VENOM_MEM_TOKEN={OWNER_TOKEN}"
OUTSIDE = "  # in a terminal of your own, outside any managed tree"
STARTS_ON_DEMAND = "venom-mem store status  # starts the daemon in the background"
SERVE = "venom-mem serve"


def _command(argv: Sequence[str]) -> str:
    return shlex.join(["venom-mem", *argv])


def situate(
    error: VenomError, verb: Verb | None, environ: Mapping[str, str], argv: Sequence[str]
) -> VenomError:
    """``error`` with its message and fix made right for this command line."""
    data = dict(error.data)
    message = error.message
    code = error.code
    if code == "failed.store" and data.get("fix") == "restart the daemon: venom-mem serve":
        data["fix"] = f"{OWNER_PREFIX} venom-mem restart"  # writes resume in a new daemon
    elif code in ("denied.admin", "denied.files") and environ.get("VENOM_MEM_TOKEN") != OWNER_TOKEN:
        # Only the owner holds admin (a client token never can): the same command, as owner.
        data["fix"] = f"{OWNER_PREFIX} {_command(argv)}{OUTSIDE}"
    elif code == "unavailable.not_running" and verb is not None and verb.name == "stop":
        data.pop("fix", None)  # nothing to stop: nothing to do
    elif code == "unavailable.not_running" and verb is not None and verb.name != "doctor":
        # RFC-0020 section 8 pins doctor's fix; elsewhere any store command starts one.
        data["fix"] = SERVE if _explicit(environ) else STARTS_ON_DEMAND
    elif code.startswith("invalid_params.") and verb is not None:
        message, fix = _usage(verb, data.get("param"), message)
        if fix is not None:
            data.setdefault("fix", fix)
    if data == error.data and message == error.message:
        return error
    return VenomError(code, message, data)


def _explicit(environ: Mapping[str, str]) -> bool:
    """Whether ``daemon.startup`` is ``explicit``: then only serve starts a daemon."""
    from venom_mem_adapters.client import DaemonLocator, startup_settings

    try:
        return startup_settings(DaemonLocator(environ).config())[0] == "explicit"
    except VenomError:  # a config that doesn't load: serve says why
        return True


def _usage(verb: Verb, name: Any, message: str) -> tuple[str, str | None]:
    """A local check's message in the command line's words: ``--query``, not ``query``."""
    param = verb.param(name) if isinstance(name, str) else None
    if param is None:
        return message, None
    words = " ".join(verb.name.split("."))
    if message == f"{verb.name} needs {param.name}":
        return f"{words} needs {param.flag}", _example(verb, param.name)
    if message.startswith(f"{param.name} "):
        return param.flag + message[len(param.name) :], None
    return message, None


def _example(verb: Verb, name: str) -> str | None:
    """The manifest's example call that gives ``name``: a command that runs as written."""
    from .helptext import command_line

    for example in verb.examples:
        params = example.get("params") or {}
        if name in params:
            return command_line(verb, params)
    return None


def human_hint(error: VenomError) -> str | None:
    """What a person should do next, for errors whose wire shape has no fix (the transcript
    pins ``conflict.memory_revision``'s; RFC-0020 section 9 gives not_found.* and
    conflict.client_exists empty data)."""
    if error.code == "conflict.memory_revision":
        memory = error.message.split(" ", 1)[0]
        current = error.data.get("current")
        return (
            f"venom-mem memory get --id {memory}  # re-read it, then update with "
            f"--revision {current}"
        )
    if error.code == "conflict.memory_duplicate" and error.data.get("id"):
        return f"venom-mem memory get --id {error.data['id']}  # it holds this content already"
    if error.code == "conflict.client_exists" and error.message.startswith("a client named "):
        name = error.message.removeprefix("a client named ").removesuffix(" exists")
        return (
            f"{OWNER_PREFIX} venom-mem client remove --name {shlex.quote(name)}  # or choose "
            "another --name"
        )
    if error.code == "not_found.memory" and error.message.endswith(" is deleted"):
        memory = error.message.split(" ", 1)[0]
        return f"venom-mem memory restore --id {memory}"
    return None
