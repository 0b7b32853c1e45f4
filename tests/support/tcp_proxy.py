"""A loopback TCP proxy that breaks its connections on command (docs/adr/0030's tests).

Everything that should reach a server reaches it through :class:`TcpProxy` instead: it
listens on 127.0.0.1, and each connection it accepts is joined to a new connection to the
target, bytes copied both ways by one selector thread. Three faults, each on every
connection at once:

* :meth:`drop` closes both sides of every connection (a FIN each way), as a middlebox that
  forgets its flows, or a server host that closes its sockets;
* :meth:`reset` closes them with SO_LINGER 0 (a RST each way);
* :meth:`stall` stops copying: bytes wait in the kernel's buffers and new connections are
  accepted but not joined, as a partition TCP rides out; :meth:`heal` copies again, so
  what was sent during the stall arrives late (the nastiest case for a COMMIT in flight).

:meth:`refuse` resets every new connection as soon as it is accepted (a server host with
nothing listening) until :meth:`heal`.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import struct
import threading
from collections.abc import Iterator

__all__ = ["TcpProxy", "running_proxy"]

_CHUNK = 65536


class _Pair:
    def __init__(self, client: socket.socket, server: socket.socket | None) -> None:
        self.client = client
        self.server = server

    def peer(self, sock: socket.socket) -> socket.socket | None:
        return self.server if sock is self.client else self.client

    def sockets(self) -> list[socket.socket]:
        return [s for s in (self.client, self.server) if s is not None]


class TcpProxy:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._pairs: dict[socket.socket, _Pair] = {}
        self._stalled = False
        self._refusing = False
        self._commands: list[str] = []
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._listener, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._closed = False
        self.accepted = 0
        self._thread = threading.Thread(target=self._run, name="tcp-proxy", daemon=True)
        self._thread.start()

    # -- commands (from any thread; applied by the proxy's thread) ------------------------

    def _command(self, name: str) -> None:
        done = threading.Event()
        with self._lock:
            self._commands.append(name)
            self._done = done
        self._wake_w.send(b"x")
        done.wait(5)

    def drop(self) -> None:
        self._command("drop")

    def reset(self) -> None:
        self._command("reset")

    def stall(self) -> None:
        self._command("stall")

    def refuse(self) -> None:
        self._command("refuse")

    def partition(self, *, reset: bool = False) -> None:
        """Refuse new connections and close every open one (with RST when ``reset``)."""
        self.refuse()
        self.reset() if reset else self.drop()

    def heal(self) -> None:
        self._command("heal")

    @property
    def connections(self) -> int:
        return len({id(p) for p in self._pairs.values()})

    # -- the loop -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._closed:
            for key, _ in self._selector.select(timeout=0.5):
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    self._apply()
                else:
                    self._copy(key.fileobj)  # type: ignore[arg-type]

    def _apply(self) -> None:
        with contextlib.suppress(BlockingIOError):
            self._wake_r.recv(4096)
        with self._lock:
            commands, self._commands = self._commands, []
            done = getattr(self, "_done", None)
        for name in commands:
            if name in ("drop", "reset"):
                for pair in {id(p): p for p in self._pairs.values()}.values():
                    self._close(pair, reset=name == "reset")
            elif name == "stall":
                self._stalled = True
                self._watch_copies(False)
            elif name == "refuse":
                self._refusing = True
            elif name == "heal":
                self._stalled = False
                self._refusing = False
                self._join_waiting()
                self._watch_copies(True)
        if done is not None:
            done.set()

    def _watch_copies(self, on: bool) -> None:
        for sock in list(self._pairs):
            with contextlib.suppress(KeyError, ValueError, OSError):
                if on:
                    self._selector.register(sock, selectors.EVENT_READ, "copy")
                else:
                    self._selector.unregister(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except (BlockingIOError, OSError):
                return
            self.accepted += 1
            pair = _Pair(client, None)
            if self._refusing:
                self._close(pair, reset=True)
                continue
            self._pairs[client] = pair
            if not self._stalled:
                self._join(pair)

    def _join(self, pair: _Pair) -> None:
        try:
            server = socket.create_connection(self.target, timeout=2)
        except OSError:
            self._close(pair, reset=False)
            return
        server.setblocking(False)
        pair.client.setblocking(False)
        pair.server = server
        self._pairs[server] = pair
        for sock in pair.sockets():
            self._selector.register(sock, selectors.EVENT_READ, "copy")

    def _join_waiting(self) -> None:
        for pair in {id(p): p for p in self._pairs.values()}.values():
            if pair.server is None:
                self._join(pair)

    def _copy(self, sock: socket.socket) -> None:
        pair = self._pairs.get(sock)
        if pair is None:
            return
        try:
            data = sock.recv(_CHUNK)
        except OSError:
            data = b""
        peer = pair.peer(sock)
        if not data or peer is None:
            self._close(pair, reset=False)
            return
        try:
            peer.setblocking(True)  # loopback: a short block; keeps the copy simple
            peer.sendall(data)
            peer.setblocking(False)
        except OSError:
            self._close(pair, reset=False)

    def _close(self, pair: _Pair, *, reset: bool) -> None:
        for sock in pair.sockets():
            self._pairs.pop(sock, None)
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(sock)
            with contextlib.suppress(OSError):
                if reset:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()

    def close(self) -> None:
        self._closed = True
        self._wake_w.send(b"x")
        self._thread.join(5)
        for pair in {id(p): p for p in self._pairs.values()}.values():
            self._close(pair, reset=False)
        with contextlib.suppress(OSError):
            self._listener.close()
        self._wake_r.close()
        self._wake_w.close()


@contextlib.contextmanager
def running_proxy(target: tuple[str, int]) -> Iterator[TcpProxy]:
    proxy = TcpProxy(target)
    try:
        yield proxy
    finally:
        proxy.close()
