"""The text of a venom-mem token (CONTRACT section 4): ``vnt1.venom-mem.g<N>.<secret>``, the
secret 43 base64url characters. Only the standard library: the MCP adapter checks a token's
shape at ``initialize``, before anything heavier is loaded."""

from __future__ import annotations

import re

__all__ = ["OWNER_TOKEN", "token_parts", "well_formed"]

OWNER_TOKEN = "@owner"
# Compiled on the first check (re keeps it), not on import: the CLI's --json path imports
# this module for OWNER_TOKEN alone.
_TOKEN_PATTERN = r"^vnt1\.venom-mem\.g([1-9][0-9]{0,18})\.([A-Za-z0-9_-]{43})\Z"


def token_parts(token: str) -> tuple[int, str] | None:
    """``(N, secret)`` of a well-formed token, else ``None``."""
    match = re.match(_TOKEN_PATTERN, token)
    return None if match is None else (int(match.group(1)), match.group(2))


def well_formed(token: str) -> bool:
    """``@owner`` or a token of the right shape: what the store may take at all."""
    return token == OWNER_TOKEN or token_parts(token) is not None
