"""Principals: durable clients, short-lived issued tokens, and resolving a token to a caller.

Token text is ``vnt1.venom-mem.g<N>.<secret>``: 32 random bytes as 43 base64url characters.
Only SHA-256 of the secret is kept, and it is compared in constant time. ``g<N>`` comes from
``meta.next_principal``, committed in the same transaction that first uses it, so an ID is
never reused and a ``g<N>`` below the counter with no principal behind it reads as revoked.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..clock import format_ts, parse_ts
from ..errors import VenomError
from ..grants import Resource, check, check_held, check_scopes
from ..ports import WriteTx
from ..records import Client, Grant, Principal
from ..registry import IssuedToken
from ..shapes import client_json, grant_json
from ..token_text import OWNER_TOKEN, token_parts
from .app import App

if TYPE_CHECKING:
    from ..commands import (
        AddClient,
        IssueGrant,
        ListClients,
        ListGrants,
        RemoveClient,
        RevokeGrant,
        Whoami,
    )

__all__ = [
    "OWNER",
    "OWNER_TOKEN",
    "add_client",
    "issue_grant",
    "list_clients",
    "list_grants",
    "recheck",
    "remove_client",
    "resolve_token",
    "revoke_grant",
    "unknown_principal",
    "whoami",
]

OWNER = Principal(id="owner", label="owner")


def unknown_principal(grants: Sequence[Grant]) -> Principal:
    return Principal(id="unknown", grants=tuple(grants))


def secret_hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("ascii")).digest()


def _new_token(principal: str) -> tuple[str, bytes]:
    secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode("ascii")
    return f"vnt1.venom-mem.{principal}.{secret}", secret_hash(secret)


# Runnable as written, by the human: a new client, whose token replaces the refused one.
NEW_TOKEN_FIX = (
    "VENOM_MEM_TOKEN=@owner venom-mem client add --name my-agent --grant read:* "
    "--grant write:*  # in a terminal of your own; then set VENOM_MEM_TOKEN to its token"
)


def _token_denied(reason: str) -> VenomError:
    return VenomError(
        "denied.token",
        f"token is {reason}",
        {"reason": reason, "fix": NEW_TOKEN_FIX},
    )


def _next_principal(tx: WriteTx) -> str:
    number = int(tx.get_meta("next_principal") or "1")
    tx.set_meta("next_principal", str(number + 1))
    return f"g{number}"


def resolve_token(app: App, token: str, *, unknown: Sequence[Grant]) -> Principal:
    """The principal a non-owner token stands for, or ``denied.token`` with its reason.

    Answered from ``app.registry`` alone: hello never reads the store.
    """
    if not token:
        return unknown_principal(unknown)
    parts = token_parts(token)
    if parts is None:
        raise _token_denied("invalid")
    number, secret = parts
    principal, digest = f"g{number}", secret_hash(secret)
    now = app.clock.now()
    held = app.registry.issued(principal)
    if held is not None:
        if not hmac.compare_digest(held.token_hash, digest):
            raise _token_denied("invalid")
        if held.expires <= now:
            raise _token_denied("expired")
        return held.principal
    client = app.registry.client(principal)
    if client is None:
        raise _token_denied("revoked" if app.registry.was_issued(number) else "invalid")
    if not hmac.compare_digest(client.token_hash, digest):
        raise _token_denied("invalid")
    if client.expires is not None and client.expires <= now:
        raise _token_denied("expired")
    return Principal(id=client.principal, label=client.name, grants=client.grants)


def recheck(app: App, who: Principal) -> None:
    """``denied.token`` when the token a principal was resolved from at hello has since been
    revoked or has expired: a held connection (an MCP adapter holds one for as long as its
    harness runs) loses its rights with its token (RFC-0020 section 4)."""
    if not who.id.startswith("g"):
        return  # owner and unknown have no token to lose
    held = app.registry.issued(who.id)
    if held is not None:
        expires: str | None = held.expires
    else:
        client = app.registry.client(who.id)
        if client is None:
            raise _token_denied("revoked")
        expires = client.expires
    if expires is not None and expires <= app.clock.now():
        raise _token_denied("expired")


def whoami(app: App, who: Principal, cmd: Whoami) -> dict[str, Any]:
    out: dict[str, Any] = {"principal": who.id}
    if who.label is not None:
        out["label"] = who.label
    out["grants"] = (
        [{"right": r, "scope": "*"} for r in ("read", "write", "admin")]
        if who.is_owner
        else [grant_json(g) for g in who.grants]
    )
    return out


def _expiry(app: App, ttl: int | None) -> str | None:
    if ttl is None:
        return None
    try:
        return format_ts(parse_ts(app.clock.now()) + timedelta(seconds=ttl))
    except (OverflowError, ValueError):  # past year 9999: no timestamp can say when
        raise VenomError.param("range", "ttl", "ttl is too large to give an expiry") from None


def add_client(app: App, who: Principal, cmd: AddClient) -> dict[str, Any]:
    check(who, "admin", Resource.store())
    name, parsed = cmd.name, cmd.grants
    check_scopes(parsed)
    check_held(who, parsed)  # a permanent credential can't carry more than its issuer holds
    with app.store.write() as tx:
        if tx.get_client(name) is not None:
            raise VenomError("conflict.client_exists", f"a client named {name} exists")
        principal = _next_principal(tx)
        token, digest = _new_token(principal)
        client = Client(
            name=name,
            principal=principal,
            grants=parsed,
            token_hash=digest,
            created=app.clock.now(),
            expires=_expiry(app, cmd.ttl),
        )
        tx.insert_client(client)
    app.registry.add_client(client)
    app.events.emit("principal.issued", "*", {"principal": principal, "label": name})
    return {"client": name, "principal": principal, "token": token, "expires": client.expires}


def list_clients(app: App, who: Principal, cmd: ListClients) -> dict[str, Any]:
    check(who, "admin", Resource.store())
    with app.store.read() as tx:
        clients = tx.list_clients()
    return {"clients": [client_json(c) for c in sorted(clients, key=lambda c: c.name)]}


def remove_client(app: App, who: Principal, cmd: RemoveClient) -> dict[str, Any]:
    check(who, "admin", Resource.store())
    name = cmd.name
    with app.store.write() as tx:
        client = tx.get_client(name)
        if client is None:
            raise VenomError.not_found("client", f"no client named {name}")
        tx.delete_client(name)
    app.registry.remove_client(client.principal)
    app.events.emit("principal.revoked", "*", {"principal": client.principal, "label": name})
    return {"client": name, "principal": client.principal}


def issue_grant(app: App, who: Principal, cmd: IssueGrant) -> dict[str, Any]:
    """A short-lived token with grants the issuer holds itself (CONTRACT section 4)."""
    check(who, "admin", Resource.store())
    parsed = cmd.grants
    check_scopes(parsed)
    ttl = min(cmd.ttl, app.settings.max_token_ttl)  # clamped by grants.max_token_ttl (section 4)
    check_held(who, parsed)
    with app.store.write() as tx:
        principal = _next_principal(tx)
    token, digest = _new_token(principal)
    expires = _expiry(app, ttl)
    assert expires is not None
    app.registry.add_issued(
        IssuedToken(
            principal=Principal(id=principal, label=cmd.label, grants=parsed),
            token_hash=digest,
            expires=expires,
            issued_by=who.id,
        )
    )
    app.events.emit("principal.issued", "*", {"principal": principal})
    return {"principal": principal, "token": token, "expires": expires}


def list_grants(app: App, who: Principal, cmd: ListGrants) -> dict[str, Any]:
    check(who, "admin", Resource.store())
    with app.store.read() as tx:
        clients = tx.list_clients()
    principals: list[dict[str, Any]] = [
        {
            "principal": c.principal,
            "label": c.name,
            "kind": "client",
            "grants": [grant_json(g) for g in c.grants],
            "expires": c.expires,
        }
        for c in clients
    ]
    for t in app.registry.all_issued():
        entry: dict[str, Any] = {"principal": t.principal.id, "kind": "issued"}
        if t.principal.label is not None:
            entry["label"] = t.principal.label
        entry["grants"] = [grant_json(g) for g in t.principal.grants]
        entry["expires"] = t.expires
        principals.append(entry)
    principals.sort(key=lambda p: int(p["principal"][1:]))
    return {"principals": principals}


def revoke_grant(app: App, who: Principal, cmd: RevokeGrant) -> dict[str, Any]:
    check(who, "admin", Resource.store())
    principal = f"g{cmd.principal}"
    if app.registry.remove_issued(principal) is None:
        with app.store.write() as tx:
            client = tx.get_client_by_principal(principal)
            if client is None:
                raise VenomError.not_found("client", f"no principal {principal}")
            tx.delete_client(client.name)
        app.registry.remove_client(principal)
    app.events.emit("principal.revoked", "*", {"principal": principal})
    return {"principal": principal}
