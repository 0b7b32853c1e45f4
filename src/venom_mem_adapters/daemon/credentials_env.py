"""A daemon keeps no caller's credentials in its environment (RFC-0020 section 8, issue 13).

The on-demand launcher already starts ``serve`` without VENOM_MEM_TOKEN and
VENOM_MEM_PRINCIPAL; a ``venom-mem serve`` started by hand inherits its shell's. At start,
:func:`forget_credentials` removes them from ``os.environ`` (so no child of the daemon gets
them) and overwrites their values in the environment block the process was started with,
which ``/proc/<pid>/environ`` shows for the process's whole life and ``unsetenv`` leaves
alone.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["CREDENTIAL_VARIABLES", "forget_credentials"]

CREDENTIAL_VARIABLES = ("VENOM_MEM_TOKEN", "VENOM_MEM_PRINCIPAL")


def _blank_original(name: str) -> None:
    """Zero the value C's getenv still points at (the block at exec time, while unchanged)."""
    libc = ctypes.CDLL(None)  # the process's own symbols: no ldconfig child, as find_library
    libc.getenv.restype = ctypes.c_void_p
    libc.getenv.argtypes = [ctypes.c_char_p]
    address = libc.getenv(name.encode())
    if address:
        ctypes.memset(address, 0, len(ctypes.string_at(address)))


def forget_credentials() -> list[str]:
    """Remove the credential variables from this process's environment; returns their names."""
    removed = []
    for name in CREDENTIAL_VARIABLES:
        if name in os.environ:
            _blank_original(name)
            del os.environ[name]  # unsetenv too
            removed.append(name)
    return removed
