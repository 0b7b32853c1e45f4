"""The hostile side of test_hostile_connections, run as a process of its own so that its work
doesn't share an interpreter (and a GIL) with the ordinary client being measured.

``python -m tests.reliability.hostile_load SOCKET MEMORY_ID IDLE HALF PIPELINERS WAVE_S``
opens IDLE idle connections, HALF connections that send most of a 1 MiB frame and stop, and
PIPELINERS connections that each say hello as the owner and pipeline 64 ``memory.get`` of
MEMORY_ID without reading; every WAVE_S seconds it resets all the pipeliners (SO_LINGER 0)
and opens as many again. It prints ``ready <connections>`` once all are open, and on end of
stdin resets everything and prints ``resets <n>``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from typing import Any

_LINGER_0 = b"\x01\x00\x00\x00\x00\x00\x00\x00"


def _frame(request_id: int, verb: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"id": request_id, "verb": verb, "params": params}).encode() + b"\n"


def _connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(path)
    return sock


def _half_frame(sock: socket.socket) -> None:
    sock.sendall(_frame(0, "hello", {}))
    head = b'{"id":1,"verb":"memory.add","params":{"space":"x","content":"'
    data = head + b"a" * (1_000_000 - len(head))
    sock.setblocking(False)
    with contextlib.suppress(BlockingIOError, BrokenPipeError, ConnectionResetError):
        view = memoryview(data)
        while view:
            view = view[sock.send(view) :]


def _reset(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_0)
    sock.close()


def main(argv: list[str]) -> None:
    path, memory_id = argv[0], argv[1]
    idle_n, half_n, pipe_n = (int(a) for a in argv[2:5])
    wave_s = float(argv[5])
    burst = b"".join(
        [_frame(0, "hello", {"auth": {"token": "@owner"}})]
        + [_frame(n, "memory.get", {"id": memory_id}) for n in range(1, 65)]
    )

    def pipeliner() -> socket.socket:
        sock = _connect(path)
        sock.sendall(burst)
        return sock

    idle = [_connect(path) for _ in range(idle_n)]
    half = [_connect(path) for _ in range(half_n)]
    for sock in half:
        _half_frame(sock)
    pipes = [pipeliner() for _ in range(pipe_n)]
    print(f"ready {len(idle) + len(half) + len(pipes)}", flush=True)
    stop = threading.Event()
    resets = 0

    def waves() -> None:
        nonlocal pipes, resets
        while not stop.wait(wave_s):
            for sock in pipes:
                _reset(sock)
                resets += 1
            fresh = []
            with contextlib.suppress(OSError):
                for _ in range(pipe_n):
                    fresh.append(pipeliner())
            pipes = fresh

    thread = threading.Thread(target=waves)
    thread.start()
    sys.stdin.read()
    stop.set()
    thread.join()
    for sock in pipes:
        _reset(sock)
        resets += 1
    for sock in idle + half:
        sock.close()
    print(f"resets {resets}", flush=True)


if __name__ == "__main__":
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    main(sys.argv[1:])
