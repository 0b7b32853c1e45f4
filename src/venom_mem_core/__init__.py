"""venom-mem's pure domain: records, validation, grants, ranking, the verb manifest, the
use cases and the ports they need. No SQLite, sockets, HTTP or printing.

Names are imported lazily, so ``import venom_mem_core`` stays cheap and the CLI's ``--json``
path can read the manifest without pulling in attrs.
"""

from __future__ import annotations

from .exports import lazy_exports

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from .clock import FixedClock as FixedClock
    from .clock import SystemClock as SystemClock
    from .errors import VenomError as VenomError
    from .errors import exit_code_for as exit_code_for
    from .grants import Access as Access
    from .grants import Resource as Resource
    from .inmemory import InMemoryStore as InMemoryStore
    from .local import LocalClient as LocalClient
    from .manifest import MANIFEST as MANIFEST
    from .ports import Clock as Clock
    from .ports import Embedder as Embedder
    from .ports import EventSink as EventSink
    from .ports import MemoryFilter as MemoryFilter
    from .ports import ReadTx as ReadTx
    from .ports import Store as Store
    from .ports import WriteTx as WriteTx
    from .records import Client as Client
    from .records import Grant as Grant
    from .records import Hit as Hit
    from .records import Memory as Memory
    from .records import Principal as Principal
    from .records import Provenance as Provenance
    from .records import Session as Session
    from .records import Version as Version
    from .registry import Registry as Registry
    from .usecases.app import App as App
    from .usecases.settings import MemorySettings as MemorySettings

__version__ = "0.1.0"

__getattr__, __dir__ = lazy_exports(__name__, __file__)  # the names: the typed imports above
