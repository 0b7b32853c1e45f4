"""Every grammar and limit of RFC-0020 sections 2, 3, 4 and 7, at its boundaries: the
manifest's types (venom_mem_core.grammar) through the one checker, validation.check_value."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from venom_mem_core import grammar as g
from venom_mem_core import validation as v
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Type
from venom_mem_core.params import check_params

TOKEN = "vnt1.venom-mem.g12." + "a1_-" * 10 + "xyz"  # 43 characters of secret


def _checker(type_: Type, param: str) -> Callable[..., Any]:
    def check(value: Any, name: str = param) -> Any:
        return v.check_value(value, type_, name)

    return check


check_space = _checker(g.SPACE, "space")
check_tags = _checker(g.TAGS, "tags")
check_title = _checker(g.TITLE, "title")
check_kind = _checker(g.KIND, "kind")
check_harness = _checker(g.HARNESS, "harness")
check_harness_session = _checker(g.HARNESS_SESSION, "harness_session")
check_cwd = _checker(g.CWD, "cwd")
check_client_name = _checker(g.CLIENT_NAME, "name")


def check_content(content: str, max_bytes: int) -> str:
    """The grammar, then the store's configured limit (the use case's)."""
    v.check_value(content, g.CONTENT, "content")
    v.check_content_size(content, max_bytes)
    return content


def check_relation(relation: str | None, parent: str | None) -> str | None:
    params = {"harness": "h", "relation": relation, "parent": parent}
    given = {name: value for name, value in params.items() if value is not None}
    verb = MANIFEST.verb("session.start")
    assert verb is not None
    return check_params(verb, given).get("relation")


def _fails(code: str, param: str, call: Callable[[], object]) -> None:
    with pytest.raises(VenomError) as caught:
        call()
    assert (caught.value.code, caught.value.data) == (f"invalid_params.{code}", {"param": param})


@pytest.mark.parametrize(
    "space", ["user", "project/venom-std", "a", "0", "a.b_c-d/e", "x" * 128, "a/" + "b" * 126]
)
def test_good_spaces(space: str) -> None:
    assert check_space(space) == space


@pytest.mark.parametrize(
    "space",
    ["", "User", "a/", "/a", "a//b", "-a", ".a", "a/.b", "a b", "a:b", "é", "x" * 129],
)
def test_bad_spaces(space: str) -> None:
    _fails("space", "space", lambda: check_space(space))


def test_space_error_names_the_param_given() -> None:
    _fails("space", "spaces", lambda: check_space("Bad", "spaces"))


def test_tags() -> None:
    assert check_tags([]) == []
    assert check_tags(["zig", "build-2", "0"]) == ["zig", "build-2", "0"]
    sixteen = [f"t{n}" for n in range(16)]
    assert len(check_tags(sixteen)) == 16
    assert check_tags(["a" * 64]) == ["a" * 64]
    _fails("range", "tags", lambda: check_tags([*sixteen, "t16"]))
    for bad in ("", "Zig", "-zig", "zig_build", "a" * 65, "zig build", "ü"):
        _fails("tag", "tags", partial(check_tags, [bad]))
    _fails("tag", "tags", lambda: check_tags(["zig", "zig"]))


def test_title() -> None:
    assert check_title("") == ""
    assert check_title("t" * 200) == "t" * 200
    assert check_title("é" * 100) == "é" * 100
    _fails("range", "title", lambda: check_title("t" * 201))
    _fails("range", "title", lambda: check_title("é" * 100 + "t"))
    for control in ("\x00", "\t", "\n", "\x1f", "\x7f", "\x85", "\x9b"):
        _fails("type", "title", partial(check_title, f"a{control}b"))
    _fails("secret_content", "title", lambda: check_title(f"key {TOKEN}"))


def test_content() -> None:
    assert check_content("x", 10) == "x"
    assert check_content("line\nwith\ttabs", 100) == "line\nwith\ttabs"
    assert check_content("é" * 5, 10) == "é" * 5
    _fails("range", "content", lambda: check_content("", 10))
    _fails("range", "content", lambda: check_content("é" * 5 + "x", 10))
    _fails("type", "content", lambda: check_content("a\x00b", 10))
    _fails("type", "content", lambda: check_content("lone \ud800 surrogate", 100))
    _fails("secret_content", "content", lambda: check_content(f"use {TOKEN} here", 1000))


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (TOKEN, True),
        (f"prefix{TOKEN}suffix", True),
        ("vnt1.other-product.g1." + "A" * 43, True),
        ("vnt1.venom-mem.g1." + "A" * 42, False),
        ("vnt1.venom-mem.g1." + "A" * 42 + "=", False),
        ("vnt1.venom mem.g1." + "A" * 43, False),
        ("vnt2.venom-mem.g1." + "A" * 43, False),
    ],
)
def test_secret_pattern(text: str, found: bool) -> None:
    assert bool(v.SECRET_RE.search(text)) is found


_HALF = len(TOKEN) - 20


@pytest.mark.parametrize(
    "disguised",
    [
        TOKEN[:_HALF] + "\u200b" + TOKEN[_HALF:],  # zero-width space
        TOKEN[:_HALF] + "\u2060\u200d" + TOKEN[_HALF:],  # word joiner, zero-width joiner
        TOKEN.replace(".", "\uff0e"),  # fullwidth full stops
        TOKEN.replace("v", "\uff56", 1),  # a fullwidth letter
        TOKEN[:_HALF] + "\n" + TOKEN[_HALF:],  # a line break
        TOKEN[:_HALF] + "\r\n" + TOKEN[_HALF:],
        "\u202e" + TOKEN + "\u202c",  # bidi override around it
        "\ufeff" + TOKEN[:10] + "\u00ad" + TOKEN[10:],  # BOM, soft hyphen
    ],
)
def test_a_disguised_token_is_still_refused(disguised: str) -> None:
    _fails("secret_content", "content", lambda: check_content(f"see {disguised}", 1000))


@pytest.mark.parametrize(
    "text",
    [
        "vnt1.venom-mem.g1.\u200b" + "A" * 42,  # still one character short
        "vnt1.venom mem.g1." + "A" * 43,  # a space is not hidden: not the shape
        "fullwidth ｔｅｘｔ, zero\u200bwidth and\nline breaks are ordinary text",
        "vnt1.venom-mem.g1\n\n" + "A" * 43,  # missing its dot
    ],
)
def test_only_the_token_shape_is_refused_after_normalizing(text: str) -> None:
    assert check_content(text, 1000) == text  # and it is stored as sent


@pytest.mark.parametrize(
    ("check", "param"),
    [
        (check_harness, "harness"),
        (check_harness_session, "harness_session"),
        (lambda value: check_cwd("/home/me/" + value), "cwd"),
    ],
)
def test_session_claims_are_checked_for_tokens(check: Any, param: str) -> None:
    _fails("secret_content", param, lambda: check(TOKEN))
    if param != "harness":  # 64 bytes at most: a disguised token is over it anyway
        _fails("secret_content", param, lambda: check(TOKEN[:_HALF] + "\u200b" + TOKEN[_HALF:]))
    assert check("claude-code") is not None


def test_kind() -> None:
    for kind in ("fact", "decision", "procedure", "note"):
        assert check_kind(kind) == kind
    _fails("type", "kind", lambda: check_kind("Fact"))


def test_relation() -> None:
    assert check_relation(None, None) is None
    assert check_relation("fork", "s1") == "fork"
    _fails("missing", "relation", lambda: check_relation(None, "s1"))
    _fails("relation", "relation", lambda: check_relation("fork", None))
    _fails("relation", "relation", lambda: check_relation("sibling", "s1"))


def test_session_claims() -> None:
    assert check_harness("h" * 64) == "h" * 64
    _fails("range", "harness", lambda: check_harness("h" * 65))
    _fails("range", "harness", lambda: check_harness(""))
    _fails("type", "harness", lambda: check_harness("a\nb"))
    assert check_harness_session("x" * 256) == "x" * 256
    _fails("range", "harness_session", lambda: check_harness_session("x" * 257))
    assert check_cwd("/" + "d" * 4095) == "/" + "d" * 4095
    _fails("range", "cwd", lambda: check_cwd("/" + "d" * 4096))
    _fails("type", "cwd", lambda: check_cwd("relative/dir"))
    _fails("type", "cwd", lambda: check_cwd("~/x"))
    _fails("range", "cwd", lambda: check_cwd(""))


def test_client_name() -> None:
    assert check_client_name("claude-code") == "claude-code"
    assert check_client_name("a" * 64) == "a" * 64
    for bad in ("", "Claude", "-x", "a" * 65, "a_b"):
        _fails("type", "name", partial(check_client_name, bad))


def test_space_with_a_trailing_newline_is_refused() -> None:
    _fails("space", "space", lambda: check_space("user\n"))


def test_tag_with_a_trailing_newline_is_refused() -> None:
    _fails("tag", "tags", lambda: check_tags(["zig\n"]))


def test_client_name_with_a_trailing_newline_is_refused() -> None:
    _fails("type", "name", lambda: check_client_name("codex\n"))
