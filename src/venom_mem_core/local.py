"""Call verbs in-process, exactly as the daemon would after ``hello``: for other Python tools
that want the store's rules without a daemon, for the contract suite, and for tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .dispatch import prepare
from .records import Principal
from .usecases.app import App
from .usecases.verbs import call, use_cases

__all__ = ["LocalClient"]


@attrs.define
class LocalClient:
    """A caller bound to one principal. ``call`` returns the ok object or raises VenomError.
    Making one looks every manifest verb's use case up (once per process): a missing one is
    ``failed.internal`` naming its verb."""

    app: App
    principal: Principal

    def __attrs_post_init__(self) -> None:
        use_cases()

    def call(self, verb: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        _, checked = prepare(verb, {} if params is None else params, self.principal)
        return call(self.app, self.principal, verb, checked)

    def as_(self, principal: Principal) -> LocalClient:
        """The same app, another caller."""
        return LocalClient(self.app, principal)
