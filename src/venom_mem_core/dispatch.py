"""What happens to every request before a handler runs: the verb is known, the params
match the manifest, and the caller could hold the verb's right on what it names.

The check here is decided from the params alone. Admin verbs and fixed resources are fully
decided; a memory or session named by ID is refused when no grant of the caller's could
cover it, whatever its space or creator (the handler then checks the row itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import VenomError
from .grants import Resource, check
from .ids import id_number
from .manifest import MANIFEST
from .manifest_types import Manifest, Verb
from .params import check_params
from .records import Principal
from .validation import is_space

__all__ = ["authorize", "could_hold", "prepare"]


def could_hold(who: Principal, right: str, kind: str, id: int | None) -> bool:
    """Whether some grant with ``right`` could contain a memory or session whose space and
    creator aren't known yet."""
    if who.is_owner:
        return True
    for grant in who.grants:
        if grant.right != right:
            continue
        scope = grant.scope
        if scope in ("*", "self") or scope == f"{kind}:*":
            return True
        if kind == "memory" and (scope.startswith("space:") or scope == f"memory:m{id}"):
            return True
        if kind == "session" and scope == f"session:s{id}":
            return True
    return False


def _id_of(value: Any, prefix: str) -> int | None:
    return id_number(value, prefix) if isinstance(value, str) else None


def authorize(verb: Verb, who: Principal, params: Mapping[str, Any]) -> None:
    right = verb.right
    if right is None:
        return
    if right in ("admin", "files") or verb.resource == "*":
        check(who, right, Resource.store())
        return
    if verb.resource == "session:*":
        check(who, right, Resource.of_session(None))
        return
    value = params.get(verb.resource) if verb.resource else None
    if verb.resource == "space" and isinstance(value, str) and is_space(value):
        check(who, right, Resource.of_space(value))
    elif verb.resource == "id" and (number := _id_of(value, "m")) is not None:
        if not could_hold(who, right, "memory", number):
            raise VenomError.denied(right, f"memory:m{number}", who.id)
    elif verb.resource == "session" and (number := _id_of(value, "s")) is not None:
        needed = right if verb.name.startswith("session.") else "read"
        if not could_hold(who, needed, "session", number):
            raise VenomError.denied(needed, f"session:s{number}", who.id)
    elif right == "write" and not who.is_owner and not any(g.right == "write" for g in who.grants):
        raise VenomError.denied(right, "*", who.id)


def prepare(
    verb_name: str, params: Any, who: Principal, manifest: Manifest = MANIFEST
) -> tuple[Verb, dict[str, Any]]:
    """The verb and its checked params, or the error the caller gets instead."""
    verb = manifest.verb(verb_name) if isinstance(verb_name, str) else None
    if verb is None or verb.local:
        raise VenomError("unsupported.verb", f"unknown verb {verb_name!r}")
    checked = check_params(verb, params)
    authorize(verb, who, checked)
    return verb, checked
