"""The core's dispatch, built from the manifest: each verb's ``use_case`` (and ``embeds``)
looked up in this package once. The daemon's dispatch and
:class:`~venom_mem_core.local.LocalClient` read :func:`use_cases`; where a verb runs and
whether it is audited is the manifest's (:class:`~venom_mem_core.manifest_types.Verb`).

A use case is named in the manifest (``"memories.add_memory"``) and imported here, not by the
manifest: the CLI and the MCP adapter read the manifest and never load a use case. A host
that runs use cases calls :func:`use_cases` when it starts, which imports every one and
refuses (``failed.internal`` naming the verb) when one is missing. A use case receives its
verb's typed command (:mod:`venom_mem_core.commands`), which :func:`command` structures from
checked params with the boundary's one converter (:mod:`venom_mem_core.converter`, loaded on
first use: it imports cattrs).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import VenomError
from ..lookup import find
from ..manifest import MANIFEST
from ..manifest_types import Manifest, Verb

if TYPE_CHECKING:
    from ..commands import Command
    from ..records import Principal
    from .app import App

__all__ = ["Handler", "UseCase", "call", "command", "use_cases"]

Handler = Callable[..., dict[str, Any]]  # handler(app, who, command)


@dataclasses.dataclass(frozen=True, slots=True)
class UseCase:
    """A verb the core answers: its manifest entry, its use case and its ``embeds`` hook."""

    verb: Verb
    run: Handler
    embeds: Callable[..., str | None] | None  # embeds(app, command): the text, or None


@functools.cache
def use_cases(manifest: Manifest = MANIFEST) -> Mapping[str, UseCase]:
    """Every verb of ``manifest`` with a use case, by name, each looked up once."""
    found: dict[str, UseCase] = {}
    for verb in manifest.verbs:
        if verb.use_case is None:
            continue
        run = find(verb, __package__, verb.use_case, "use_case")
        embeds = None if verb.embeds is None else find(verb, __package__, verb.embeds, "embeds")
        found[verb.name] = UseCase(verb=verb, run=run, embeds=embeds)
    return found


def command(verb: str, params: Mapping[str, Any]) -> Command:
    """Core verb ``verb``'s command from params checked against the manifest; a value the
    converter can't take is ``invalid_params.*`` (see :mod:`venom_mem_core.converter`)."""
    from ..converter import structure_command  # cattrs: only where commands are made

    return structure_command(verb, params)


def call(app: App, who: Principal, verb: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Run a core verb with params already checked against the manifest. A manifest verb
    that only a daemon answers (ping, doctor, events, ...) is ``unsupported.verb`` here."""
    found = use_cases().get(verb)
    if found is None:
        raise VenomError(
            "unsupported.verb",
            f"{verb} is answered by the daemon, not in process",
            {"fix": "from venom_mem_adapters.client import connect  # and call it there"},
        )
    return found.run(app, who, command(verb, params))
