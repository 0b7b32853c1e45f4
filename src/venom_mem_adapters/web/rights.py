"""Which controls a page shows, from the grants ``whoami`` reports.

Only a courtesy to the person: a button that would be refused isn't drawn. The daemon decides
every call itself, so a forged form from a read-only principal still gets ``denied.*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from venom_mem_core.grants import Resource, holds
from venom_mem_core.ids import id_number
from venom_mem_core.records import Grant, Principal

__all__ = ["Rights"]


@attrs.frozen
class Rights:
    principal: Principal

    @classmethod
    def from_whoami(cls, whoami: Mapping[str, Any]) -> Rights:
        grants = tuple(
            Grant(right=str(g.get("right", "")), scope=str(g.get("scope", "")))
            for g in whoami.get("grants", ())
            if isinstance(g, Mapping)
        )
        label = whoami.get("label")
        return cls(
            Principal(
                id=str(whoami.get("principal", "unknown")),
                label=label if isinstance(label, str) else None,
                grants=grants,
            )
        )

    @property
    def name(self) -> str:
        p = self.principal
        return f"{p.id} ({p.label})" if p.label and p.label != p.id else p.id

    @property
    def admin(self) -> bool:
        return holds(self.principal, "admin", Resource.store())

    def may_write_memory(self, memory: Mapping[str, Any]) -> bool:
        number = id_number(str(memory.get("id", "")), "m")
        author = memory.get("author")
        owner = str(author.get("principal", "")) if isinstance(author, Mapping) else ""
        if number is None:
            return False
        resource = Resource.of_memory(number, str(memory.get("space", "")), owner)
        return holds(self.principal, "write", resource)

    def may_write_space(self, space: str) -> bool:
        """Whether a memory may be added to ``space`` and its description set (both are
        ``write`` on the space)."""
        return bool(space) and holds(self.principal, "write", Resource.of_space(space))
