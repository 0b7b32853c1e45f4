"""One error type for every failure a caller can see, and the exit code of each class.

Every error carries a dotted ``code`` whose first part is its class. The class fixes the
exit code (CONTRACT section 3)::

    VenomError
    ├── failed.*            exit 1   store, store_migration, audit, internal, socket,
    │                                protocol, harness, store_copy
    ├── invalid_params.*    exit 2   missing, type, unknown, range, verb, frame, space, tag,
    │                                branch, query, relation, link_relation, link_self,
    │                                secret_content, client_right, old_text, grant_scope,
    │                                embeddings_url, config, store_url, cursor, file,
    │                                import_format, import_line, import_version, origin
    ├── not_found.*         exit 3   memory, memory_revision, memory_text, session, client,
    │                                principal, link
    ├── denied.*            exit 4   read, write, admin, files, token, hello, startup_context,
    │                                csrf, config_in_repository
    ├── conflict.*          exit 5   memory_revision, memory_duplicate, memory_text_ambiguous,
    │                                client_exists, store_locked, store_not_empty, store_schema,
    │                                space_inactive, link_cycle
    ├── unavailable.*       exit 6   store_busy, embeddings, not_running, startup_timeout,
    │                                startup_result, daemon_timeout, connection,
    │                                connection_limit, store
    └── unsupported.*       exit 10  verb, store_schema, embeddings_off

Every code raised anywhere in the packages is in this tree (tests/unit/test_error_tree.py).

``data`` is always a JSON object. Adapters translate their own failures (apsw, sockets,
httpx) into these codes in one place each, so nothing above them sees a driver exception.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["EXIT_CODES", "UNKNOWN_DENIED_FIX", "VenomError", "denied_fix", "exit_code_for"]

# RFC-0020 section 1's transcript pins this one, for the unknown principal.
UNKNOWN_DENIED_FIX = "venom-mem whoami --json  # set VENOM_MEM_TOKEN to a client token"
OWNER_RIGHTS = ("admin", "files", "spawn")  # no client token holds these: the owner's

EXIT_CODES: Mapping[str, int] = {
    "failed": 1,
    "invalid_params": 2,
    "not_found": 3,
    "denied": 4,
    "conflict": 5,
    "unavailable": 6,
    "unsupported": 10,
}


def denied_fix(right: str, resource: str, principal: str) -> str:
    """A command that gets past the denial, for who was denied. A client token can never
    hold admin, so those are the owner's; a token that lacks read or write shows its grants,
    and the owner gives a client more."""
    if right in OWNER_RIGHTS:
        return (
            "VENOM_MEM_TOKEN=@owner venom-mem whoami  # the owner's; run it in a terminal of "
            "your own, outside any managed tree"
        )
    if principal == "unknown":
        return UNKNOWN_DENIED_FIX
    return (
        f"venom-mem whoami  # this token's grants; the owner can add a client with "
        f"--grant {right}:{resource}"
    )


def exit_code_for(code: str) -> int:
    """The process exit code for an error code; an unknown class counts as a failure."""
    return EXIT_CODES.get(code.split(".", 1)[0], 1)


class VenomError(Exception):
    """A failure with a stable code, a human message and a JSON-object ``data``."""

    def __init__(self, code: str, message: str, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data: dict[str, Any] = dict(data or {})

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.code)

    def to_json(self) -> dict[str, Any]:
        """The wire shape: ``{"code", "message", "data"}``."""
        return {"code": self.code, "message": self.message, "data": self.data}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> VenomError:
        data = obj.get("data")
        return cls(
            str(obj.get("code", "failed.internal")),
            str(obj.get("message", "")),
            data if isinstance(data, Mapping) else {},
        )

    # Constructors for the shapes the spec pins, so every caller builds them alike.

    @classmethod
    def param(cls, code: str, param: str, message: str) -> VenomError:
        """An ``invalid_params.*`` error naming the parameter in ``data.param``."""
        return cls(f"invalid_params.{code}", message, {"param": param})

    @classmethod
    def denied(cls, right: str, resource: str, principal: str) -> VenomError:
        return cls(
            f"denied.{right}",
            f"principal {principal} lacks '{right}' on {resource}",
            {
                "right": right,
                "resource": resource,
                "principal": principal,
                "fix": denied_fix(right, resource, principal),
            },
        )

    @classmethod
    def not_found(cls, what: str, message: str) -> VenomError:
        return cls(f"not_found.{what}", message)

    @classmethod
    def file_error(
        cls, code: str, path: object, doing: str, err: OSError, data: dict[str, Any] | None = None
    ) -> VenomError:
        """``<path>: can't <doing>: <the system's reason>``, for a file operation that failed."""
        return cls(code, f"{path}: can't {doing}: {err.strerror or err}", data)

    @classmethod
    def duplicate_memory(cls, space: str | None = None, holder: int | None = None) -> VenomError:
        """``conflict.memory_duplicate``: a live memory of the space already has this content
        (``holder``, its ID, when the store knows it; ``data.id`` names it)."""
        who = "another live memory" if holder is None else f"m{holder}"
        where = "this space" if space is None else space
        data = {} if holder is None else {"id": f"m{holder}"}
        return cls(
            "conflict.memory_duplicate", f"{who} already holds this content in {where}", data
        )

    def __repr__(self) -> str:
        return f"VenomError({self.code!r}, {self.message!r}, {self.data!r})"
