"""The ZON subset of CONTRACT section 9: parsing, line numbers, errors, and dumps round-trips."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from venom_mem_adapters.config import _zon as zon
from venom_mem_core.errors import VenomError

SECTION_5_EXAMPLE = """\
.{
    .embeddings = .{
        .provider = "http",
        .base_url = "http://127.0.0.1:11434/v1",
        .model = "nomic-embed-text",
        .dimensions = 768,
    },
}
"""


def test_reads_the_section_5_example() -> None:
    assert zon.parse(SECTION_5_EXAMPLE, filename="config.zon") == {
        "embeddings": {
            "provider": "http",
            "base_url": "http://127.0.0.1:11434/v1",
            "model": "nomic-embed-text",
            "dimensions": 768,
        }
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("42", 42),
        ("-7", -7),
        ("1_000_000", 1_000_000),
        ("0x2a", 42),
        ("0xFF_FF", 0xFFFF),
        ("-0x10", -16),
        ("0o17", 15),
        ("0b101", 5),
        ("0", 0),
        ("1.5", 1.5),
        ("-0.25", -0.25),
        ("1e3", 1000.0),
        ("2.5E-3", 0.0025),
        ("1e+16", 1e16),
        ("1_0.5", 10.5),
        ("true", True),
        ("false", False),
        ("null", None),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ('""', ""),
        ('"plain"', "plain"),
        (r'"a\nb\tc\rd"', "a\nb\tc\rd"),
        (r'"q\"q \'s\' back\\slash"', "q\"q 's' back\\slash"),
        (r'"\x41\x7e"', "A~"),
        (r'"\xc3\xa9"', "é"),  # \x escapes are bytes of UTF-8
        (r'"\u{e9}\u{1F600}"', "é😀"),
        ('"déjà vu"', "déjà vu"),
        ('"tab\there"', "tab\there"),
        (".{}", {}),
        (".{ 1, 2, 3 }", [1, 2, 3]),
        (".{ 1, 2, 3, }", [1, 2, 3]),
        ('.{ .a = 1, .b = .{ .c = "x" }, }', {"a": 1, "b": {"c": "x"}}),
        ('.{ .@"odd key" = 1, .@"type" = 2 }', {"odd key": 1, "type": 2}),
        ('.{ .{ .right = "read", .scope = "*" } }', [{"right": "read", "scope": "*"}]),
        (".{ .{}, .{ .{} } }", [{}, [{}]]),
    ],
)
def test_values(text: str, expected: Any) -> None:
    assert zon.parse(text, filename="t.zon") == expected
    assert type(zon.parse(text, filename="t.zon")) is type(expected)


def test_nan() -> None:
    value = zon.parse("nan", filename="t.zon")
    assert isinstance(value, float)
    assert math.isnan(value)


def test_comments_whitespace_and_multiline_strings() -> None:
    text = (
        "// a config\n"
        ".{\n"
        "    .a = 1, // trailing comment\n"
        "    // a comment line\n"
        "    .text =\n"
        "        \\\\first line\n"
        '        \\\\second "quoted" \\n not an escape\n'
        "    ,\n"
        "\t.b = .{ 1,2 ,3 },\r\n"
        "}\n"
        "// after\n"
    )
    assert zon.parse(text, filename="t.zon") == {
        "a": 1,
        "text": 'first line\nsecond "quoted" \\n not an escape',
        "b": [1, 2, 3],
    }


def test_fields_keep_source_order() -> None:
    value = zon.parse(".{ .z = 1, .a = 2, .m = 3 }", filename="t.zon")
    assert isinstance(value, dict)
    assert list(value) == ["z", "a", "m"]


def test_lines_by_dotted_path() -> None:
    text = (
        ".{\n"  # 1
        "    .memory = .{\n"  # 2
        "        .max_versions = 5,\n"  # 3
        "    },\n"  # 4
        "    .grants = .{\n"  # 5
        "        .unknown = .{\n"  # 6
        '            .{ .right = "read", .scope = "*" },\n'  # 7
        '            .{ .right = "write",\n'  # 8
        '               .scope = "self" },\n'  # 9
        "        },\n"
        "    },\n"
        "}\n"
    )
    doc = zon.parse_document(text, filename="t.zon")
    assert doc.lines[""] == 1
    assert doc.lines["memory"] == 2
    assert doc.lines["memory.max_versions"] == 3
    assert doc.lines["grants.unknown"] == 6
    assert doc.lines["grants.unknown.0"] == 7
    assert doc.lines["grants.unknown.1"] == 8
    assert doc.lines["grants.unknown.1.scope"] == 9


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (".{\n    .a = 1,\n    .b = 2\n    .c = 3,\n}", 4, "expected ',' or '}'"),
        ('.{\n    .a = "open\n}', 2, "unterminated string"),
        ('.{\n\n    .a = "bad \\q escape",\n}', 3, "invalid escape '\\q'"),
        ('.{ .a = "\\x4" }', 1, "\\x needs two hex digits"),
        ('.{ .a = "\\u{d800}" }', 1, "not a Unicode scalar value"),
        ('.{ .a = "\\u{110000}" }', 1, "not a Unicode scalar value"),
        ('.{ .a = "\\u0041" }', 1, "\\u{NNNN}"),
        ('.{ .a = "\\xff" }', 1, "not valid UTF-8"),
        ('.{ .a = "bell\x07" }', 1, "control character"),
        (".{\n    .a = 1,\n    .a = 2,\n}", 3, "duplicate field .a"),
        (".{\n    .a 1,\n}", 2, "expected '=' after .a"),
        (".{ .a = 1, 2 }", 1, "can't mix in values"),
        (".{ 1, .a = 2 }", 1, "can't mix in fields"),
        (".{ .a = .on_demand }", 1, "enum literals are not supported"),
        (".{ .a = 'x' }", 1, "character literals are not supported"),
        (".{ .a = on-demand }", 1, "unexpected bare word"),
        (".{ .a = 1 }\n.{}", 2, "unexpected text after the value"),
        (".{\n    .a = 1,\n", 3, "missing its '}'"),
        (".{ .a = }", 1, "unexpected character '}'"),
        ("", 1, "unexpected end of file"),
        ("// only a comment\n", 2, "unexpected end of file"),
        (".{ .a = 007 }", 1, "leading zeros"),
        (".{ .a = 1__0 }", 1, "invalid number"),
        (".{ .a = 1_ }", 1, "invalid number"),
        (".{ .a = 0x }", 1, "invalid number"),
        (".{ .a = 0xfg }", 1, "invalid number"),
        (".{ .a = 12abc }", 1, "invalid number"),
        (".{ .a = 1. }", 1, "invalid number"),
        (".{ .a = 1.2.3 }", 1, "invalid number"),
        (".{ .a = 1e999 }", 1, "out of range"),
        (".{ .a = - 1 }", 1, "expected a number after '-'"),
        ('.{ .@"" = 1 }', 1, "can't be empty"),
        ("[1, 2]", 1, "unexpected character '['"),
    ],
)
def test_syntax_errors_name_file_and_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(VenomError) as caught:
        zon.parse(text, filename="/etc/x/config.zon")
    err = caught.value
    assert err.code == "invalid_params.config"
    assert err.message.startswith(f"/etc/x/config.zon:{line}: ")
    assert fragment in err.message
    assert err.data == {"file": "/etc/x/config.zon", "line": line}


def test_nesting_is_bounded() -> None:
    deep = ".{ " * (zon.MAX_DEPTH + 1) + "}" * (zon.MAX_DEPTH + 1)
    with pytest.raises(VenomError, match="nested deeper"):
        zon.parse(deep, filename="t.zon")
    ok = ".{ " * zon.MAX_DEPTH + "1" + " }" * zon.MAX_DEPTH
    assert zon.parse(ok, filename="t.zon") is not None


def test_dumps_is_readable() -> None:
    value = {
        "store": {"path": ""},
        "daemon": {"startup": "on-demand", "startup_timeout_ms": 5000, "idle_timeout_ms": 1000},
        "tags": ["a", "b"],
        "grants": [{"right": "read", "scope": "*"}],
        "none": [],
        "odd key": {"type": None, "x": -1.5},
    }
    assert zon.dumps(value) == (
        ".{\n"
        '    .store = .{ .path = "" },\n'
        "    .daemon = .{\n"
        '        .startup = "on-demand",\n'
        "        .startup_timeout_ms = 5000,\n"
        "        .idle_timeout_ms = 1000,\n"
        "    },\n"
        '    .tags = .{ "a", "b" },\n'
        "    .grants = .{\n"
        '        .{ .right = "read", .scope = "*" },\n'
        "    },\n"
        "    .none = .{},\n"
        '    .@"odd key" = .{ .type = null, .x = -1.5 },\n'
        "}"
    )


def test_dumps_escapes_strings() -> None:
    text = 'q" b\\ n\n t\t r\r nul\x00 del\x7f ls\u2028 é 😀'
    written = zon.dumps(text)
    assert written == '"q\\" b\\\\ n\\n t\\t r\\r nul\\x00 del\\x7f ls\\u{2028} é 😀"'
    assert zon.parse(written, filename="t.zon") == text


def test_dumps_quotes_reserved_and_odd_names() -> None:
    assert zon.dumps({"true": 1}) == '.{\n    .@"true" = 1,\n}'
    assert zon.dumps({"fn": 1, "a-b": 2}) == '.{\n    .@"fn" = 1,\n    .@"a-b" = 2,\n}'


def test_dumps_special_floats() -> None:
    assert zon.dumps([math.inf, -math.inf, 1e16, -0.0]) == ".{ inf, -inf, 1e+16, -0.0 }"
    assert zon.dumps(math.nan) == "nan"


def test_dumps_refuses_what_zon_cannot_hold() -> None:
    with pytest.raises(TypeError):
        zon.dumps({1, 2})
    with pytest.raises(TypeError):
        zon.dumps({1: "a"})
    with pytest.raises(ValueError, match="empty"):
        zon.dumps({"": 1})


def test_empty_tuple_reads_back_as_empty_struct() -> None:
    # .{} is both; the reader gives {} and consumers that want a tuple accept it.
    assert zon.dumps([]) == ".{}"
    assert zon.parse(zon.dumps({"unknown": []}), filename="t.zon") == {"unknown": {}}


# -- property: dumps then parse gives the value back ----------------------------------------

_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True) | st.text(min_size=1)
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, min_size=1, max_size=4)  # an empty tuple reads back as {}
        | st.dictionaries(_names, children, max_size=4)
    ),
    max_leaves=25,
)


def _typed(value: Any) -> Any:
    """The value with every scalar tagged by its type, so 1 and 1.0 and True differ."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), abs(value))
    return (type(value).__name__, value)


@given(_values)
def test_dumps_parse_round_trip(value: Any) -> None:
    text = zon.dumps(value)
    assert _typed(zon.parse(text, filename="t.zon")) == _typed(value)


@given(_values)
def test_round_trip_is_stable_text(value: Any) -> None:
    text = zon.dumps(value)
    assert zon.dumps(zon.parse(text, filename="t.zon")) == text


@pytest.mark.parametrize(
    "value", ["skLiveSuperSecret123", "0xSECRETKEY9", "12secretTail", "sk-live-abc", "1e999999"]
)
def test_a_value_written_without_quotes_is_not_quoted_back(value: str) -> None:
    """An api_key pasted without its quotes must not come back in the error, which reaches
    whoever's call started the daemon (RFC-0020 section 11: the secret field)."""
    text = f".{{\n    .embeddings = .{{\n        .api_key = {value},\n    }},\n}}\n"
    with pytest.raises(VenomError) as caught:
        zon.parse(text, filename="/etc/x/config.zon")
    assert caught.value.message.startswith("/etc/x/config.zon:3: ")
    for fragment in (value, value[1:], value[2:]):
        assert fragment not in caught.value.message
    assert fragment not in str(caught.value.to_json())
