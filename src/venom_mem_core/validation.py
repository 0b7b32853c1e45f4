"""Every grammar and limit of RFC-0020 sections 2, 3, 4 and 7, each failing with its own code.

Each checker returns the normalised value or raises :class:`VenomError` with ``data.param``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from .errors import VenomError
from .ids import MAX_ID, id_number
from .records import IMPORTANCES, KINDS, RELATIONS

__all__ = [
    "CLIENT_NAME_RE",
    "SECRET_RE",
    "SPACE_RE",
    "TAG_RE",
    "check_branch",
    "check_branches",
    "check_client_name",
    "check_content",
    "check_cwd",
    "check_description",
    "check_harness",
    "check_harness_session",
    "check_importance",
    "check_kind",
    "check_relation",
    "check_space",
    "check_tags",
    "check_title",
    "parse_id",
    "utf8_len",
]

SPACE_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*\Z")
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
CLIENT_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
SECRET_RE = re.compile(r"vnt1\.[^.\s]+\.[^.\s]+\.[A-Za-z0-9_-]{43}")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1
# Line breaks a wrapped or pasted token may carry inside it.
_LINE_BREAKS = dict.fromkeys(map(ord, "\n\r\v\f\x85\u2028\u2029"))

MAX_SPACE_BYTES = 128
MAX_TITLE_BYTES = 200
MAX_TAGS = 16
MAX_HARNESS_BYTES = 64
MAX_HARNESS_SESSION_BYTES = 256
MAX_CWD_BYTES = 4096
MAX_BRANCHES = 16
MAX_BRANCH_BYTES = 128
MAX_DESCRIPTION_BYTES = 512
# What `git check-ref-format --branch` refuses anywhere in a name: controls, space, ~ ^ : ? * [ \
_REF_BAD_CHAR_RE = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def utf8_len(text: str, param: str) -> int:
    """Length in UTF-8 bytes; a string that isn't valid Unicode text is ``invalid_params.type``."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise VenomError.param("type", param, f"{param} is not valid UTF-8 text") from None


def parse_id(value: str, prefix: str, param: str) -> int:
    """``m12`` -> 12. A malformed ID is ``invalid_params.type`` (CONTRACT section 10)."""
    number = id_number(value, prefix)
    if number is None:
        raise VenomError.param(
            "type",
            param,
            f"{param} must look like {prefix}<N> with N from 1 to {MAX_ID}, got {value!r}",
        )
    return number


def check_space(space: str, param: str = "space") -> str:
    utf8_len(space, param)
    if len(space.encode()) > MAX_SPACE_BYTES or not SPACE_RE.match(space):
        raise VenomError.param(
            "space",
            param,
            f"space {space!r} must match [a-z0-9][a-z0-9._-]* segments joined by '/', "
            f"at most {MAX_SPACE_BYTES} bytes",
        )
    return space


def check_kind(kind: str, param: str = "kind") -> str:
    if kind not in KINDS:
        raise VenomError.param("type", param, f"kind must be one of {', '.join(KINDS)}")
    return kind


def _secret_view(text: str) -> str:
    """The text as the token check reads it: NFKC (fullwidth dots and letters become plain
    ones), with format characters (Unicode Cf: zero-width spaces and joiners, bidi marks)
    and line breaks taken out, so an invisible character or a wrap inside a token doesn't
    hide it. Only for the check: the text is stored as sent."""
    if text.isascii() and not any(c in text for c in "\n\r\v\f"):
        return text
    folded = unicodedata.normalize("NFKC", text).translate(_LINE_BREAKS)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf")


def check_importance(importance: str, param: str = "importance") -> str:
    if importance not in IMPORTANCES:
        raise VenomError.param("type", param, f"importance must be one of {', '.join(IMPORTANCES)}")
    return importance


def _ref_name_problem(name: str) -> str | None:
    """Why ``name`` is not a branch name git accepts (git-check-ref-format(1)), or ``None``."""
    if not name:
        return "is empty"
    if _REF_BAD_CHAR_RE.search(name):
        return "contains a space, a control character or one of ~ ^ : ? * [ \\"
    if name.startswith("-"):
        return "starts with -"
    if name == "@" or ".." in name or "@{" in name or "//" in name:
        return "is @ or contains .., @{ or //"
    if name.startswith("/") or name.endswith(("/", ".")):
        return "starts with / or ends with / or ."
    for part in name.split("/"):
        if part.startswith(".") or part.endswith(".lock"):
            return "has a component starting with . or ending with .lock"
    return None


def check_branch(branch: str, param: str = "branch") -> str:
    """One git branch name of at most 128 bytes: ``invalid_params.branch`` otherwise."""
    size = utf8_len(branch, param)
    if size > MAX_BRANCH_BYTES:
        raise VenomError.param(
            "range", param, f"branch is {size} bytes; at most {MAX_BRANCH_BYTES}"
        )
    problem = _ref_name_problem(branch)
    if problem is not None:
        raise VenomError.param(
            "branch", param, f"branch {branch!r} {problem}: not a git branch name"
        )
    _check_secret(branch, param)  # a token is a valid ref name, and is stored text too
    return branch


def check_branches(branches: Sequence[str], param: str = "branches") -> tuple[str, ...]:
    if len(branches) > MAX_BRANCHES:
        raise VenomError.param("range", param, f"{len(branches)} branches; at most {MAX_BRANCHES}")
    for branch in branches:
        if not isinstance(branch, str):
            raise VenomError.param("type", param, "branches must be strings")
        check_branch(branch, param)
    if len(set(branches)) != len(branches):
        raise VenomError.param("branch", param, "branches must be unique")
    return tuple(branches)


def check_description(description: str, param: str = "description") -> str:
    """A space's description: one line of at most 512 bytes, no token; empty clears it."""
    size = utf8_len(description, param)
    if size > MAX_DESCRIPTION_BYTES:
        raise VenomError.param(
            "range", param, f"description is {size} bytes; at most {MAX_DESCRIPTION_BYTES}"
        )
    if _CONTROL_RE.search(description):
        raise VenomError.param(
            "type", param, "description must be one line without control characters"
        )
    _check_secret(description, param)
    return description


def _check_secret(text: str, param: str) -> None:
    if SECRET_RE.search(text) or SECRET_RE.search(_secret_view(text)):
        raise VenomError.param(
            "secret_content",
            param,
            f"{param} contains a venom token; store a reference to it instead",
        )


def check_title(title: str, param: str = "title") -> str:
    size = utf8_len(title, param)
    if size > MAX_TITLE_BYTES:
        raise VenomError.param("range", param, f"title is {size} bytes; at most {MAX_TITLE_BYTES}")
    if _CONTROL_RE.search(title):
        raise VenomError.param("type", param, "title must not contain control characters")
    _check_secret(title, param)
    return title


def check_content(content: str, max_bytes: int, param: str = "content") -> str:
    size = utf8_len(content, param)
    if size == 0:
        raise VenomError.param("range", param, "content must not be empty")
    if size > max_bytes:
        raise VenomError.param("range", param, f"content is {size} bytes; at most {max_bytes}")
    if "\x00" in content:
        raise VenomError.param("type", param, "content must not contain NUL characters")
    _check_secret(content, param)
    return content


def check_tags(tags: Sequence[str], param: str = "tags") -> tuple[str, ...]:
    if len(tags) > MAX_TAGS:
        raise VenomError.param("range", param, f"{len(tags)} tags; at most {MAX_TAGS}")
    for tag in tags:
        if not isinstance(tag, str) or not TAG_RE.match(tag):
            raise VenomError.param(
                "tag", param, f"tag {tag!r} must match ^[a-z0-9][a-z0-9-]{{0,63}}$"
            )
    if len(set(tags)) != len(tags):
        raise VenomError.param("tag", param, "tags must be unique")
    return tuple(tags)


def check_client_name(name: str, param: str = "name") -> str:
    if not CLIENT_NAME_RE.match(name):
        raise VenomError.param(
            "type", param, f"client name {name!r} must match ^[a-z0-9][a-z0-9-]{{0,63}}$"
        )
    return name


def _check_claim(value: str, param: str, max_bytes: int, *, nonempty: bool) -> str:
    size = utf8_len(value, param)
    if nonempty and size == 0:
        raise VenomError.param("range", param, f"{param} must not be empty")
    if size > max_bytes:
        raise VenomError.param("range", param, f"{param} is {size} bytes; at most {max_bytes}")
    if _CONTROL_RE.search(value):
        raise VenomError.param("type", param, f"{param} must not contain control characters")
    _check_secret(value, param)
    return value


def check_harness(value: str, param: str = "harness") -> str:
    return _check_claim(value, param, MAX_HARNESS_BYTES, nonempty=True)


def check_harness_session(value: str, param: str = "harness_session") -> str:
    return _check_claim(value, param, MAX_HARNESS_SESSION_BYTES, nonempty=True)


def check_cwd(value: str, param: str = "cwd") -> str:
    _check_claim(value, param, MAX_CWD_BYTES, nonempty=True)
    if not value.startswith("/"):
        raise VenomError.param("type", param, f"cwd must be an absolute path, got {value!r}")
    return value


def check_relation(relation: str | None, parent: object, param: str = "relation") -> str | None:
    """``relation`` is required exactly when ``parent`` is given."""
    if parent is None and relation is None:
        return None
    if parent is not None and relation is None:
        raise VenomError.param("missing", param, "relation is required with parent")
    if parent is None:
        raise VenomError.param("relation", param, "relation is only allowed with parent")
    if relation not in RELATIONS:
        raise VenomError.param("relation", param, f"relation must be one of {', '.join(RELATIONS)}")
    return relation
