"""Find the function a manifest verb names for where it runs (``use_case``, ``embeds``,
``op``, ``local``, a ``cli_only`` switch): ``module.function`` in the host's package. Each
host looks its verbs up when it starts and refuses to run with one missing, naming it.

Standard library only: the CLI's ``--json`` path looks its local verbs up here.
"""

from __future__ import annotations

import importlib

from .errors import VenomError
from .manifest_types import Verb

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["find"]


def find(verb: Verb, package: str, name: str, what: str) -> Callable[..., Any]:
    """Function ``name`` (``module.function``, or ``function`` of ``package`` itself), which
    ``verb`` names as its ``what``; ``failed.internal`` naming the verb when it isn't there."""
    module, _, function = name.rpartition(".")
    where = f"{package}.{module}" if module else package
    try:
        found = getattr(importlib.import_module(where), function)
    except (ImportError, AttributeError) as exc:
        raise VenomError(
            "failed.internal",
            f"verb {verb.name}: its {what} {where}.{function} is missing ({exc})",
            {"verb": verb.name, "missing": f"{where}.{function}"},
        ) from None
    if not callable(found):
        raise VenomError(
            "failed.internal",
            f"verb {verb.name}: its {what} {where}.{function} is not a function",
            {"verb": verb.name, "missing": f"{where}.{function}"},
        )
    return found  # type: ignore[no-any-return]  # a callable attribute of a module
