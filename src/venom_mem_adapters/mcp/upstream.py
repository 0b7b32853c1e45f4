"""What the MCP adapter's link and server need of each other (:mod:`.link`): a connection
to the daemon, and one blocking call at a time. Protocols for the type checker: the relay's
modules name them only in annotations, so the relay's start doesn't import ``typing``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["Upstream", "Wire"]


class Wire(Protocol):
    """What the link needs of a connection (:class:`venom_mem_adapters.client.Connection`).
    ``started``: the connection launched the daemon and has had no reply yet."""

    started: bool

    def send(
        self, verb: str, params: Mapping[str, Any] | None = None, *, deadline: float | None = None
    ) -> int: ...

    def receive(self, *, deadline: float | None = None, verb: str = "") -> dict[str, Any]: ...

    def close(self) -> None: ...


class Upstream(Protocol):
    """What the server needs: one blocking call at a time, and a close at the end."""

    def call(self, verb: str, params: Mapping[str, Any]) -> dict[str, Any]: ...

    def close(self) -> None: ...
