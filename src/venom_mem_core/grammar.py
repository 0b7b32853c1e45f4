"""The words, patterns and limits of RFC-0020 sections 2, 3, 4 and 7, each written once.

The manifest's params use these types, the dispatch checks them
(:func:`venom_mem_core.validation.check_value`) and the MCP input schemas publish them
(:func:`venom_mem_core.params.json_schema`). Patterns are ECMA-262, as JSON Schema's are:
``$`` is the end of the text (Python reads it as ``\\Z``, :func:`python_regex`). Nothing
here imports more than :mod:`.manifest_types`: the CLI's ``--json`` path reads it.
"""

from __future__ import annotations

from .ids import MAX_ID
from .manifest_types import Field, Type

__all__ = [
    "BRANCH",
    "BRANCHES",
    "CLIENT_GRANTS",
    "CLIENT_NAME",
    "CONTENT",
    "CWD",
    "DESCRIPTION",
    "GRANTABLE",
    "GRANT_SCOPE_PATTERN",
    "HARNESS",
    "HARNESS_SESSION",
    "IMPORTANCE",
    "IMPORTANCES",
    "ISSUABLE_GRANTS",
    "KIND",
    "KINDS",
    "LINK_RELATION",
    "LINK_RELATIONS",
    "MAX_BRANCHES",
    "MAX_ISSUED_TTL_S",
    "MAX_SPACE_BYTES",
    "MAX_TAGS",
    "ORIGIN",
    "RELATION",
    "RELATIONS",
    "SECRET_PATTERN",
    "SPACE",
    "SPACE_PATTERN",
    "TAG",
    "TAGS",
    "TITLE",
    "id_pattern",
    "python_regex",
]

KINDS = ("fact", "decision", "procedure", "note")
# In the order memory.context shows them (docs/adr/0017); memory.search never reads it.
IMPORTANCES = ("critical", "normal", "low")
RELATIONS = ("continue", "fork", "subagent")
# A link's relation (docs/adr/0042): supersedes, and the storage model's four kinds in words an
# agent reads as a sentence "A <relation> B": temporal (follows), semantic (relates_to),
# causal (causes), entity (same_entity).
LINK_RELATIONS = ("supersedes", "follows", "relates_to", "causes", "same_entity")
GRANTABLE = ("read", "write", "admin")  # what a grant may carry (CONTRACT section 5)

MAX_SPACE_BYTES = 128
MAX_TAGS = 16
MAX_BRANCHES = 16
MAX_ISSUED_TTL_S = 86_400  # grant.issue's tokens live at most a day (CONTRACT section 4)

# RFC-0005's token, refused in stored text (RFC-0020 section 2).
SECRET_PATTERN = r"vnt1\.[^.\s]+\.[^.\s]+\.[A-Za-z0-9_-]{43}"
# Section 3's grammar; the lookahead holds the 128-byte limit (the text is ASCII), so a long
# name is invalid_params.space as the RFC says, not .range.
_SPACE_NAME = r"(?=.{1,128}$)[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*"
SPACE_PATTERN = rf"^{_SPACE_NAME}$"
# Tags (section 2) and client names (section 4) share one grammar.
_LOWER_NAME = r"^[a-z0-9][a-z0-9-]{0,63}$"
_CONTROLS = r"\u0000-\u001f\u007f-\u009f"  # C0, DEL and C1
_ONE_LINE = rf"^[^{_CONTROLS}]*$"
# What `git check-ref-format --branch` accepts: not -x, /x, @, x/ or x.; no .., @{ or //;
# no component starting with . or ending with .lock; no control, space, ~ ^ : ? * [ or \.
_GIT_BRANCH = (
    r"^(?!-)(?!/)(?!@$)(?!.*(?:\.\.|@\{|//))(?!.*[/.]$)(?!(?:.*/)?\.)(?!.*\.lock(?:/|$))"
    r"[^\u0000-\u0020\u007f~^:?*\[\\]+$"
)


def id_pattern(prefix: str) -> str:
    """``m<N>``'s shape, unanchored: N without a leading zero, as many digits as MAX_ID has
    (an N above MAX_ID has the shape; the check also bounds it)."""
    return f"{prefix}[1-9][0-9]{{0,{len(str(MAX_ID)) - 1}}}"


# A grant's selector (CONTRACT section 5): one that can name something.
GRANT_SCOPE_PATTERN = (
    r"^(?:\*|self|space:\*|memory:\*|session:\*"
    rf"|memory:{id_pattern('m')}|session:{id_pattern('s')}|space:{_SPACE_NAME})$"
)

KIND = Type("string", choices=KINDS)
IMPORTANCE = Type("string", choices=IMPORTANCES)
RELATION = Type("string", choices=RELATIONS, code="relation")
LINK_RELATION = Type("string", choices=LINK_RELATIONS, code="link_relation")
SPACE = Type(
    "string",
    pattern=SPACE_PATTERN,
    code="space",
    rule="be [a-z0-9][a-z0-9._-]* segments joined by '/', at most 128 bytes",
)
TAG = Type("string", pattern=_LOWER_NAME, code="tag")
TAGS = Type("array", items=TAG, max_items=MAX_TAGS, unique=True)
CLIENT_NAME = Type("string", pattern=_LOWER_NAME)


def _one_line(
    max_bytes: int,
    *,
    min_bytes: int | None = None,
    pattern: str = _ONE_LINE,
    rule: str = "not contain control characters",
) -> Type:
    """Stored text of one line, with no token: a title, a description, a session's claims."""
    return Type(
        "string",
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        pattern=pattern,
        secret_free=True,
        rule=rule,
    )


TITLE = _one_line(200)
# The upper limit is the store's memory.max_content_bytes (default 65536): the use case's.
CONTENT = Type(
    "string",
    min_bytes=1,
    pattern=r"^[^\u0000]*$",
    secret_free=True,
    rule="not contain NUL characters",
)
DESCRIPTION = _one_line(512, rule="be one line without control characters")
# A session's self-reported text (section 7): nonempty too.
HARNESS = _one_line(64, min_bytes=1)
HARNESS_SESSION = _one_line(256, min_bytes=1)
CWD = _one_line(
    4096,
    min_bytes=1,
    pattern=rf"^/[^{_CONTROLS}]*$",
    rule="be an absolute path without control characters",
)
BRANCH = Type(
    "string",
    max_bytes=128,
    pattern=_GIT_BRANCH,
    code="branch",
    secret_free=True,  # a token is a valid ref name, and is stored text too
    rule="be a git branch name (git check-ref-format --branch)",
)
BRANCHES = Type("array", items=BRANCH, max_items=MAX_BRANCHES, unique=True)
# What an imported memory's source said of it (docs/adr/0040): claims kept as text, bounded
# and one line each; the source format is a lower name, so a reader can branch on it.
ORIGIN = Type(
    "object",
    fields=(
        Field(
            "format",
            "The source's format, such as server-memory",
            Type("string", pattern=_LOWER_NAME, code="origin", rule="be a lowercase name"),
            required=True,
        ),
        Field("author", "Who the source says wrote it", _one_line(256, min_bytes=1), False),
        Field("created", "When the source says it was made", _one_line(64, min_bytes=1), False),
        Field("id", "Its ID or name in the source", _one_line(512, min_bytes=1), False),
    ),
)


def _grants(rights: tuple[str, ...]) -> Type:
    """Grants whose rights are among ``rights``: another is ``invalid_params.client_right``
    (the code RFC-0020 section 4 gives client.add), a bad selector ``.grant_scope``."""
    right = Type("string", choices=rights, code="client_right")
    scope = Type(
        "string",
        pattern=GRANT_SCOPE_PATTERN,
        code="grant_scope",
        rule="be *, self, space:*, space:<name>, memory:*, memory:m<N>, session:* or session:s<N>",
    )
    return Type(
        "array",
        items=Type(
            "object",
            fields=(
                Field("right", ", ".join(rights), right, required=True),
                Field("scope", "Selector such as * or space:user", scope, required=True),
            ),
        ),
    )


ISSUABLE_GRANTS = _grants(GRANTABLE)
CLIENT_GRANTS = _grants(("read", "write"))  # a client can't issue, configure or purge


def python_regex(pattern: str) -> str:
    """An ECMA-262 pattern as Python's :mod:`re` reads it alike: ``$`` (never escaped or in
    a class in these patterns) is ``\\Z``, which doesn't match before a final newline."""
    return pattern.replace("$", r"\Z")
