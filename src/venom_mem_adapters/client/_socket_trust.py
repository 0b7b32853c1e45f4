"""Trust before the token (CONTRACT section 1): a client checks the socket it is about to
say ``hello`` on, for every socket path, the one it resolved, ``VENOM_MEM_SOCKET`` or the
store's daemon record alike.

- The socket's directory is a real directory (not a link), owned by us, with no group or
  world write bit: otherwise someone else could have put the socket there.
- The peer at the other end (``SO_PEERCRED``) runs as our uid: otherwise it is not our
  daemon, whatever the file system says.

A failure is ``failed.socket`` naming the path and the owner found, raised before a byte of
the request (or the token) is written. Standard library only.
"""

from __future__ import annotations

import os
import socket
import stat
import struct

from venom_mem_core.errors import VenomError

__all__ = ["check_peer", "check_socket_dir", "owner_name"]

_CRED = struct.Struct("3i")


def owner_name(uid: int) -> str:
    """``uid 65534 (nobody)``, or just the number when the password database doesn't know it."""
    import pwd

    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _refuse(path: str, why: str, owner: int | None) -> VenomError:
    data: dict[str, object] = {
        "path": path,
        "fix": "remove what you don't own there, or set VENOM_MEM_SOCKET to a socket path in a "
        "directory only you can write (such as /run/user/$(id -u)/venom-mem.sock)",
    }
    if owner is not None:
        data["owner"] = owner
    return VenomError("failed.socket", f"refusing the daemon socket {path}: {why}", data)


def check_socket_dir(path: str) -> None:
    """The socket's directory is ours, not a link, and not writable by group or others."""
    directory = os.path.dirname(path) or "."
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return  # nothing there: nothing to connect to, and nothing planted
    except OSError as exc:
        raise _refuse(path, f"cannot inspect {directory}: {exc.strerror}", None) from None
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(path, f"{directory} is a symbolic link", info.st_uid)
    if not stat.S_ISDIR(info.st_mode):
        raise _refuse(path, f"{directory} is not a directory", info.st_uid)
    if info.st_uid != os.getuid():
        raise _refuse(path, f"{directory} is owned by {owner_name(info.st_uid)}", info.st_uid)
    if info.st_mode & 0o022:
        mode = stat.S_IMODE(info.st_mode)
        raise _refuse(
            path, f"{directory} can be written by group or others (mode {mode:04o})", info.st_uid
        )


def check_peer(sock: socket.socket, path: str) -> int:
    """The connected peer runs as our uid; returns its pid."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size)
    pid, uid, _gid = _CRED.unpack(raw)
    if uid != os.getuid():
        raise _refuse(path, f"the process serving it runs as {owner_name(uid)}", uid)
    return int(pid)
