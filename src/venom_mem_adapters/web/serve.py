"""``venom-mem ui``: bind 127.0.0.1 on a free port, connect to the daemon as the person's
principal, print one URL with a fresh secret, and serve until interrupted.

uvicorn's access log is off and its own log is at warning, so the secret, which a first
request carries in its query string, is never written anywhere but the terminal it was
printed to.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping

from venom_mem_core.errors import VenomError

__all__ = ["run_ui"]


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Inherited by every accepted connection. Without it uvicorn's separate writes of the
    # headers and the body meet the client's delayed ACK, and every response takes ~40 ms.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise VenomError.param(
            "range", "port", f"cannot listen on 127.0.0.1:{port}: {exc.strerror}"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def run_ui(environ: Mapping[str, str], *, port: int = 0) -> int:
    """Serve until interrupted; a :class:`VenomError` before serving (the daemon can't be
    reached, the token is refused, the port is taken) is raised for the CLI to print."""
    import uvicorn

    from .app import build_app
    from .daemon import DaemonPool, ui_token
    from .guard import Secret

    pool = DaemonPool(environ, ui_token(environ))
    try:
        me = pool.call("whoami")  # fails early: a bad token, or @owner below a manager
        sock = _bind(port)
    except VenomError:
        pool.close()
        raise
    secret = Secret.fresh(sock.getsockname()[1])
    config = uvicorn.Config(
        build_app(pool, secret),
        log_level="warning",
        access_log=False,
        server_header=False,
        ws="none",
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    label = me.get("label") or me.get("principal")
    print(f"venom-mem ui: connected to the daemon as {label}; Ctrl-C stops", file=sys.stderr)
    print(secret.url, flush=True)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        pool.close()
        sock.close()
    return 0
