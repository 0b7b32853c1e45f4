"""The words, patterns and limits of RFC-0020 sections 2, 3, 4 and 7, each written once.

The manifest's params use these types, the dispatch checks them
(:func:`venom_mem_core.validation.check_value`) and the MCP input schemas publish them
(:func:`venom_mem_core.params.json_schema`). Patterns are ECMA-262, as JSON Schema's are:
``$`` is the end of the text (Python reads it as ``\\Z``, :func:`python_regex`). Nothing
here imports more than :mod:`.manifest_types`: the CLI's ``--json`` path reads it.
"""

from __future__ import annotations

from .manifest_types import Type

__all__ = [
    "BRANCH",
    "BRANCHES",
    "CLIENT_NAME",
    "CONTENT",
    "CWD",
    "DESCRIPTION",
    "HARNESS",
    "HARNESS_SESSION",
    "IMPORTANCE",
    "IMPORTANCES",
    "KIND",
    "KINDS",
    "MAX_BRANCHES",
    "MAX_ISSUED_TTL_S",
    "MAX_SPACE_BYTES",
    "MAX_TAGS",
    "RELATION",
    "RELATIONS",
    "SECRET_PATTERN",
    "SPACE",
    "SPACE_PATTERN",
    "TAG",
    "TAGS",
    "TITLE",
    "python_regex",
]

KINDS = ("fact", "decision", "procedure", "note")
# In the order memory.context shows them (docs/adr/0017); memory.search never reads it.
IMPORTANCES = ("critical", "normal", "low")
RELATIONS = ("continue", "fork", "subagent")

MAX_SPACE_BYTES = 128
MAX_TAGS = 16
MAX_BRANCHES = 16
MAX_ISSUED_TTL_S = 86_400  # grant.issue's tokens live at most a day (CONTRACT section 4)

# RFC-0005's token, refused in stored text (RFC-0020 section 2).
SECRET_PATTERN = r"vnt1\.[^.\s]+\.[^.\s]+\.[A-Za-z0-9_-]{43}"
# Section 3's grammar; the lookahead holds the 128-byte limit (the text is ASCII), so a long
# name is invalid_params.space as the RFC says, not .range.
SPACE_PATTERN = r"^(?=.{1,128}$)[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*$"
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

KIND = Type("string", choices=KINDS)
IMPORTANCE = Type("string", choices=IMPORTANCES)
RELATION = Type("string", choices=RELATIONS, code="relation")
SPACE = Type(
    "string",
    pattern=SPACE_PATTERN,
    code="space",
    rule="be [a-z0-9][a-z0-9._-]* segments joined by '/', at most 128 bytes",
)
TAG = Type("string", pattern=_LOWER_NAME, code="tag")
TAGS = Type("array", items=TAG, max_items=MAX_TAGS, unique=True)
CLIENT_NAME = Type("string", pattern=_LOWER_NAME)
TITLE = Type(
    "string",
    max_bytes=200,
    pattern=_ONE_LINE,
    secret_free=True,
    rule="not contain control characters",
)
# The upper limit is the store's memory.max_content_bytes (default 65536): the use case's.
CONTENT = Type(
    "string",
    min_bytes=1,
    pattern=r"^[^\u0000]*$",
    secret_free=True,
    rule="not contain NUL characters",
)
DESCRIPTION = Type(
    "string",
    max_bytes=512,
    pattern=_ONE_LINE,
    secret_free=True,
    rule="be one line without control characters",
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


def _claim(max_bytes: int, pattern: str = _ONE_LINE, rule: str | None = None) -> Type:
    """A session's self-reported text (section 7): nonempty, one line, no token."""
    return Type(
        "string",
        min_bytes=1,
        max_bytes=max_bytes,
        pattern=pattern,
        secret_free=True,
        rule=rule or "not contain control characters",
    )


HARNESS = _claim(64)
HARNESS_SESSION = _claim(256)
CWD = _claim(4096, rf"^/[^{_CONTROLS}]*$", "be an absolute path without control characters")


def python_regex(pattern: str) -> str:
    """An ECMA-262 pattern as Python's :mod:`re` reads it alike: ``$`` (never escaped or in
    a class in these patterns) is ``\\Z``, which doesn't match before a final newline."""
    return pattern.replace("$", r"\Z")
