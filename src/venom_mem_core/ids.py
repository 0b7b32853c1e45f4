"""Record IDs as text: ``m<N>``, ``s<N>``, ``g<N>`` (CONTRACT section 10). No imports: the
CLI's ``--json`` path checks ID params with this before it launches anything."""

from __future__ import annotations

__all__ = ["MAX_ID", "id_number"]

MAX_ID = 2**63 - 1  # SQLite's largest rowid: no record can have a larger number


def id_number(value: str, prefix: str) -> int | None:
    """``m12`` -> 12; ``None`` unless ``value`` is the prefix and a number from 1 to MAX_ID
    in ASCII digits with no leading zero."""
    digits = value[len(prefix) :]
    if (
        not value.startswith(prefix)
        or not digits.isascii()
        or not digits.isdigit()
        or digits.startswith("0")
        or len(digits) > len(str(MAX_ID))
    ):
        return None
    number = int(digits)
    return number if number <= MAX_ID else None
