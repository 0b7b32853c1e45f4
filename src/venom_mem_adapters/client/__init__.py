"""The client side of the wire, and what both sides agree on to meet.

Modules, private to the package: ``_client`` (a trusted connection to the daemon, found or
launched), ``_locator`` (where the store, config and daemon are, and who may start one),
``_launcher`` (starting a daemon on demand, and the MCP relay's standby), ``_runtime_paths``
(where the socket and the store are), ``_daemon_record`` (the record the daemon leaves
beside its store), ``_socket_trust`` (the checks before ``hello``) and ``_wire`` (the
framing). The daemon
imports the rendezvous names (socket path, record, trust, framing) from here too.

Each name is imported when first used: the CLI's ``--json`` path loads only what
``connect`` needs, with no pathlib, typing or subprocess (docs/adr/0006).
"""

from __future__ import annotations

from venom_mem_core.exports import lazy_exports

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from ._client import Connection as Connection
    from ._client import connect as connect
    from ._client import daemon_timeout as daemon_timeout
    from ._client import reply_budget_s as reply_budget_s
    from ._client import startup_settings as startup_settings
    from ._daemon_record import remove_record as remove_record
    from ._daemon_record import write_record as write_record
    from ._launcher import start_standby as start_standby
    from ._locator import DaemonLocator as DaemonLocator
    from ._locator import check_startup_context as check_startup_context
    from ._runtime_paths import default_store_path as default_store_path
    from ._runtime_paths import ensure_private_dir as ensure_private_dir
    from ._runtime_paths import socket_path as socket_path
    from ._socket_trust import check_socket_dir as check_socket_dir
    from ._wire import MAX_FRAME as MAX_FRAME
    from ._wire import decode_frame as decode_frame
    from ._wire import encode_frame as encode_frame
    from ._wire import take_line as take_line

__getattr__, __dir__ = lazy_exports(__name__, __file__)  # the names: the typed imports above
