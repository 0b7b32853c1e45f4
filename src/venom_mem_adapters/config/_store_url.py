"""``store.url``: which PostgreSQL database a store is, with no secret in it.

Credentials follow libpq's own conventions only: a service file (``service=``), ``~/.pgpass``
(or ``passfile``), or the ``PG*`` variables in the daemon's environment. A URL that carries a
password (``postgresql://user:secret@host/db`` or ``?password=...``) is refused with
``invalid_params.store_url`` before anything connects, so no password is ever read from
config.zon, and so none can reach a log, doctor, an error or store.status. :func:`public_url`
is the form all of those show: the URL without its user info (and without ``sslpassword``).

Parsing uses :mod:`urllib.parse` only, so config loading never imports psycopg.
"""

from __future__ import annotations

import hashlib
from urllib.parse import parse_qsl, urlencode, urlsplit

from venom_mem_core.config import STORE_URL_SECRETS, check_store_url

__all__ = ["check_url", "public_url", "url_key"]


def check_url(url: str) -> str:
    """``url`` if it names a PostgreSQL database without a password; else
    ``invalid_params.store_url`` (config.py's rule, for a URL that did not come through a
    config file)."""
    return check_store_url(url)


def public_url(url: str) -> str:
    """The URL as venom-mem shows it: no user info, no password parameter."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.hostname and ":" in parts.hostname:
        netloc = f"[{parts.hostname}]"
    if parts.port is not None:
        netloc += f":{parts.port}"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in STORE_URL_SECRETS and k.lower() != "user"
    ]
    shown = f"{parts.scheme}://{netloc}{parts.path}"
    return f"{shown}?{urlencode(query)}" if query else shown


def url_key(url: str) -> str:
    """A short name for the database, the same on every run: where this machine keeps the
    daemon's socket and record for it (docs/adr/0028)."""
    return hashlib.sha256(public_url(url).encode("utf-8")).hexdigest()[:16]
