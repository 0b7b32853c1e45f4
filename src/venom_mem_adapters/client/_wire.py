"""The wire protocol's framing (CONTRACT section 2): one JSON object per line, UTF-8, at
most 1 MiB including the newline. Standard library only."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_FRAME", "decode_frame", "encode_frame", "take_line"]

MAX_FRAME = 1_048_576


def encode_frame(obj: dict[str, Any]) -> bytes:
    """A frame for ``obj``; non-ASCII stays UTF-8 and lone surrogates can't be sent."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode_frame(line: bytes) -> Any:
    """Parse one frame (without its newline). Raises ValueError if it isn't JSON text."""
    return json.loads(line.decode("utf-8"))


def take_line(buffer: bytearray) -> bytes | None:
    """The first whole line of ``buffer`` with its newline, removed from it; ``None``
    while the newline has not come."""
    end = buffer.find(b"\n")
    if end < 0:
        return None
    line = bytes(buffer[: end + 1])
    del buffer[: end + 1]
    return line
