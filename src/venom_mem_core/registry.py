"""The principal registry: every caller a token can name, held in memory (RFC-0020 section 4).

Durable clients live in the store's clients table and are loaded here when an ``App`` is made
on the store, which for the daemon is at serve, before the socket exists. The verbs that
change them (client.add, client.remove, grant.revoke) update the registry after their commit,
so the next hello sees the change. grant.issue's tokens live only here and die with the
process. hello resolves a token against the registry without reading the store.

``next_number`` mirrors ``meta.next_principal``: a ``g<N>`` below it with nobody behind it was
revoked, one at or above it was never issued.
"""

from __future__ import annotations

import threading

import attrs

from .ports import Store
from .records import Client, Principal

__all__ = ["IssuedToken", "Registry"]


@attrs.frozen(kw_only=True)
class IssuedToken:
    """A ``grant.issue`` token: in memory only, so it dies with the daemon."""

    principal: Principal
    token_hash: bytes
    expires: str
    issued_by: str


def _number(principal: str) -> int:
    return int(principal[1:])


@attrs.define
class Registry:
    """Thread-safe: writes update it from the writer thread while hello reads it."""

    _clients: dict[str, Client] = attrs.field(factory=dict)
    _issued: dict[str, IssuedToken] = attrs.field(factory=dict)
    _next_number: int = 1
    _lock: threading.Lock = attrs.field(factory=threading.Lock, eq=False, repr=False)

    @classmethod
    def load(cls, store: Store) -> Registry:
        """Every durable client in ``store``, and its principal counter."""
        with store.read() as tx:
            clients = tx.list_clients()
            counter = int(tx.get_meta("next_principal") or "1")
        return cls(clients={c.principal: c for c in clients}, next_number=counter)

    def reload(self, store: Store) -> None:
        """Take the durable clients and the counter from ``store`` again, keeping the issued
        tokens: for a store other daemons write too (docs/adr/0028), whose client.add and
        client.remove this registry did not see."""
        fresh = Registry.load(store)
        with self._lock:
            self._clients = fresh._clients
            self._next_number = max(self._next_number, fresh._next_number)

    # -- durable clients ---------------------------------------------------------------

    def client(self, principal: str) -> Client | None:
        with self._lock:
            return self._clients.get(principal)

    def add_client(self, client: Client) -> None:
        """After the commit that stored ``client``."""
        with self._lock:
            self._clients[client.principal] = client
            self._spend(client.principal)

    def remove_client(self, principal: str) -> None:
        """After the commit that deleted the client's row."""
        with self._lock:
            self._clients.pop(principal, None)

    # -- issued tokens -----------------------------------------------------------------

    def issued(self, principal: str) -> IssuedToken | None:
        with self._lock:
            return self._issued.get(principal)

    def add_issued(self, token: IssuedToken) -> None:
        with self._lock:
            self._issued[token.principal.id] = token
            self._spend(token.principal.id)

    def remove_issued(self, principal: str) -> IssuedToken | None:
        with self._lock:
            return self._issued.pop(principal, None)

    def all_issued(self) -> list[IssuedToken]:
        with self._lock:
            return list(self._issued.values())

    # -- the counter -------------------------------------------------------------------

    def was_issued(self, number: int) -> bool:
        """Whether ``g<number>`` was ever handed out (so, if nobody holds it, revoked)."""
        with self._lock:
            return number < self._next_number

    def _spend(self, principal: str) -> None:
        self._next_number = max(self._next_number, _number(principal) + 1)
