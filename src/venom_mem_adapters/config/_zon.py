"""Read and write the subset of Zig Object Notation that ``config.zon`` uses (CONTRACT section 9).

Supported::

    .{ .key = value, ... }      struct; fields keep source order; .@"any key" too
    .{ a, b, ... }              tuple
    .{}                         empty: usable as an empty struct or an empty tuple
    "text\\n"                   Zig escapes \\n \\t \\r \\\\ \\" \\' \\xNN \\u{NNNN}
    \\\\multiline               consecutive \\\\ lines, joined with newlines, no escapes
    42  -7  0x2a  0o52  0b101  1_000_000          integers
    1.5  -0.25  1e9  2.5e-3  inf  -inf  nan      floats
    true  false  null
    // comment                  to the end of the line; trailing commas anywhere

Not supported (each is a syntax error naming file and line): enum literals ``.word``,
character literals ``'a'``, hex floats, and a struct that mixes fields and values.

A struct becomes a ``dict`` and a tuple a ``list``; ``.{}`` becomes ``{}``, and a consumer
that expects a tuple treats an empty mapping as an empty tuple. :func:`parse_document` also
returns the line of every value by dotted path (``"memory.max_versions"``, ``"grants.unknown.0"``;
the root is ``""``) so that validation can name the line it rejects.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping
from typing import TypeAlias

import attrs

from venom_mem_core.errors import VenomError

__all__ = ["ZonDocument", "ZonValue", "dumps", "parse", "parse_document"]

ZonValue: TypeAlias = "bool | int | float | str | list[ZonValue] | dict[str, ZonValue] | None"

MAX_DEPTH = 64
_INDENT = "    "
_INLINE_WIDTH = 72

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER_RE = re.compile(
    r"""-?(?:
        0x(?P<hex>[0-9A-Za-z_]*)
      | 0o(?P<oct>[0-9A-Za-z_]*)
      | 0b(?P<bin>[0-9A-Za-z_]*)
      | (?P<int>[0-9][0-9_]*)(?:\.(?P<frac>[0-9_]+))?(?:[eE](?P<exp>[+-]?[0-9_]+))?
    )""",
    re.VERBOSE,
)
_BASES = ((16, "hex", "0123456789abcdefABCDEF"), (8, "oct", "01234567"), (2, "bin", "01"))
_ESCAPES = {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", '"': b'"', "'": b"'"}
_WORDS: Mapping[str, ZonValue] = {
    "true": True,
    "false": False,
    "null": None,
    "inf": math.inf,
    "nan": math.nan,
}
# Names that must be written .@"name" as a field: Zig keywords and the primitive values.
_RESERVED = frozenset(
    (
        "addrspace",
        "align",
        "allowzero",
        "and",
        "anyframe",
        "anytype",
        "asm",
        "break",
        "callconv",
        "catch",
        "comptime",
        "const",
        "continue",
        "defer",
        "else",
        "enum",
        "errdefer",
        "error",
        "export",
        "extern",
        "fn",
        "for",
        "if",
        "inline",
        "linksection",
        "noalias",
        "noinline",
        "nosuspend",
        "opaque",
        "or",
        "orelse",
        "packed",
        "pub",
        "resume",
        "return",
        "struct",
        "suspend",
        "switch",
        "test",
        "threadlocal",
        "try",
        "union",
        "unreachable",
        "var",
        "volatile",
        "while",
        "true",
        "false",
        "null",
        "undefined",
    )
)


@attrs.frozen(kw_only=True)
class ZonDocument:
    """A parsed value and the 1-based line of each value in it, by dotted path."""

    value: ZonValue
    lines: Mapping[str, int]


def parse(text: str, *, filename: str) -> ZonValue:
    """Parse ZON text. A syntax error is ``invalid_params.config`` naming file and line."""
    return parse_document(text, filename=filename).value


def parse_document(text: str, *, filename: str) -> ZonDocument:
    """Parse ZON text, keeping the line of every field and tuple element."""
    parser = _Parser(text, filename)
    parser.skip()
    value = parser.value("", 0)
    parser.skip()
    if parser.pos < len(text):
        raise parser.error("unexpected text after the value")
    return ZonDocument(value=value, lines=parser.lines)


class _Parser:
    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.pos = 0
        self.lines: dict[str, int] = {}
        self._newlines = [i for i, c in enumerate(text) if c == "\n"]

    # -- positions and errors ------------------------------------------------------------------

    def line_at(self, pos: int) -> int:
        return bisect.bisect_left(self._newlines, pos) + 1

    def error(self, what: str, pos: int | None = None) -> VenomError:
        line = self.line_at(self.pos if pos is None else pos)
        return VenomError(
            "invalid_params.config",
            f"{self.filename}:{line}: {what}",
            {"file": self.filename, "line": line},
        )

    def peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def skip(self) -> None:
        """Skip whitespace and ``//`` comments."""
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    # -- values --------------------------------------------------------------------------------

    def value(self, path: str, depth: int) -> ZonValue:
        self.lines[path] = self.line_at(self.pos)
        c = self.peek()
        if c == "":
            raise self.error("unexpected end of file; expected a value")
        if c == "." and self.peek(1) == "{":
            if depth >= MAX_DEPTH:
                raise self.error(f"nested deeper than {MAX_DEPTH} levels")
            return self.container(path, depth + 1)
        if c == '"':
            return self.string()
        if c == "\\" and self.peek(1) == "\\":
            return self.multiline_string()
        if c == "-" or c.isdigit():
            return self.number()
        if c == "." and _IDENT_RE.match(self.text, self.pos + 1):
            raise self.error("enum literals are not supported; write the value as a string")
        if c == "'":
            raise self.error("character literals are not supported; write a string or a number")
        ident = _IDENT_RE.match(self.text, self.pos)
        if ident is not None:
            word = ident.group()
            if word in _WORDS:
                self.pos = ident.end()
                return _WORDS[word]
            # The word itself is not quoted back: a key pasted without quotes is a secret
            # (embeddings.api_key), and this message reaches whoever started the daemon.
            raise self.error("unexpected bare word; write strings in double quotes")
        raise self.error(f"unexpected character {c!r}; expected a value")

    def container(self, path: str, depth: int) -> ZonValue:
        self.pos += 2  # .{
        self.skip()
        if self.peek() == "}":
            self.pos += 1
            return {}
        if self._at_field():
            return self.struct(path, depth)
        return self.tuple(path, depth)

    def _at_field(self) -> bool:
        if self.peek() != ".":
            return False
        nxt = self.peek(1)
        return nxt in {"@", "_"} or (nxt.isascii() and nxt.isalpha())

    def _end_item(self, what: str) -> bool:
        """After an item: consume ``,`` and/or ``}``; True when the container is closed."""
        self.skip()
        if self.peek() == ",":
            self.pos += 1
            self.skip()
        elif self.peek() not in ("}", ""):
            raise self.error(f"expected ',' or '}}' after a {what} item")
        if self.peek() == "}":
            self.pos += 1
            return True
        if self.peek() == "":
            raise self.error(f"unexpected end of file; a {what} is missing its '}}'")
        return False

    def struct(self, path: str, depth: int) -> dict[str, ZonValue]:
        result: dict[str, ZonValue] = {}
        while True:
            start = self.pos
            if not self._at_field():
                raise self.error("expected a field '.name = value' (a struct can't mix in values)")
            self.pos += 1
            key = self.field_name()
            if key in result:
                raise self.error(f"duplicate field .{key}", start)
            self.skip()
            if self.peek() != "=":
                raise self.error(f"expected '=' after .{key}")
            self.pos += 1
            self.skip()
            child = f"{path}.{key}" if path else key
            result[key] = self.value(child, depth)
            self.lines[child] = self.line_at(start)
            if self._end_item("struct"):
                return result

    def field_name(self) -> str:
        if self.peek() == "@":
            if self.peek(1) != '"':
                raise self.error("expected '\"' after '@' in a field name")
            self.pos += 1
            name = self.string()
            if not name:
                raise self.error("a field name can't be empty")
            return name
        ident = _IDENT_RE.match(self.text, self.pos)
        if ident is None:  # pragma: no cover - _at_field checked the first character
            raise self.error("expected a field name")
        self.pos = ident.end()
        return ident.group()

    def tuple(self, path: str, depth: int) -> list[ZonValue]:
        result: list[ZonValue] = []
        while True:
            if self._at_field():
                raise self.error("expected a value (a tuple can't mix in fields)")
            child = f"{path}.{len(result)}" if path else str(len(result))
            result.append(self.value(child, depth))
            if self._end_item("tuple"):
                return result

    def string(self) -> str:
        start = self.pos
        text = self.text
        i = self.pos + 1
        out = bytearray()
        while True:
            if i >= len(text) or text[i] == "\n":
                raise self.error("unterminated string", start)
            c = text[i]
            if c == '"':
                break
            if c == "\\":
                i = self._escape(i, out)
                continue
            if c != "\t" and (c < " " or c == "\x7f"):
                raise self.error("control character in a string; write it as an escape", i)
            try:
                out += c.encode("utf-8")
            except UnicodeEncodeError:
                raise self.error("a string holds an unencodable character", i) from None
            i += 1
        self.pos = i + 1
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError:
            raise self.error("a string is not valid UTF-8 (check its \\x escapes)", start) from None

    def _escape(self, i: int, out: bytearray) -> int:
        """Decode the escape at ``text[i] == '\\'`` into ``out``; return the next index."""
        text = self.text
        kind = text[i + 1] if i + 1 < len(text) else ""
        if kind in _ESCAPES:
            out += _ESCAPES[kind]
            return i + 2
        if kind == "x":
            digits = text[i + 2 : i + 4]
            if len(digits) != 2 or not _is_hex(digits):
                raise self.error("\\x needs two hex digits", i)
            out.append(int(digits, 16))
            return i + 4
        if kind == "u":
            close = text.find("}", i + 3)
            digits = text[i + 3 : close] if text[i + 2 : i + 3] == "{" and close > 0 else ""
            if not (1 <= len(digits) <= 6 and _is_hex(digits)):
                raise self.error("\\u needs the form \\u{NNNN} with 1 to 6 hex digits", i)
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise self.error(f"\\u{{{digits}}} is not a Unicode scalar value", i)
            out += chr(code).encode("utf-8")
            return close + 1
        if kind in ("", "\n"):
            raise self.error("unterminated string", i)
        shown = kind if kind.isprintable() else f"U+{ord(kind):04X}"
        raise self.error(f"invalid escape '\\{shown}' in a string", i)

    def multiline_string(self) -> str:
        parts: list[str] = []
        text = self.text
        while text.startswith("\\\\", self.pos):
            end = text.find("\n", self.pos)
            end = len(text) if end < 0 else end
            parts.append(text[self.pos + 2 : end].removesuffix("\r"))
            self.pos = end
            # The next line continues the string when it starts with \\ after indentation.
            look = end + 1
            while look < len(text) and text[look] in " \t":
                look += 1
            if end < len(text) and text.startswith("\\\\", look):
                self.pos = look
        return "\n".join(parts)

    def number(self) -> int | float:
        start = self.pos
        if self.text.startswith("-inf", start) and not _ident_char(self.text, start + 4):
            self.pos += 4
            return -math.inf
        match = _NUMBER_RE.match(self.text, start)
        if match is None:
            raise self.error("expected a number after '-'")
        literal = match.group()
        if _ident_char(self.text, match.end()) or self.text.startswith(".", match.end()):
            raise self.error("invalid number (letters or a dot follow its digits)")
        self.pos = match.end()
        sign = -1 if literal.startswith("-") else 1
        for base, name, digits in _BASES:
            body = match.group(name)
            if body is not None:
                if not _digits_ok(body, digits):
                    raise self.error("invalid number (bad digits for its base)", start)
                return sign * int(body.replace("_", ""), base)
        whole, frac, exp = match.group("int"), match.group("frac"), match.group("exp")
        for part in (whole, frac, exp.lstrip("+-") if exp is not None else None):
            if part is not None and not _digits_ok(part, "0123456789"):
                raise self.error("invalid number (misplaced _ or a missing digit)", start)
        if len(whole) > 1 and whole.startswith("0"):
            raise self.error("invalid number: leading zeros are not allowed", start)
        if frac is None and exp is None:
            return sign * int(whole.replace("_", ""))
        value = float(literal.replace("_", ""))
        if math.isinf(value):
            raise self.error("number out of range for a float", start)
        return value


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


def _digits_ok(body: str, digits: str) -> bool:
    """Digits of the base, with single underscores only between digits."""
    if not body or body[0] == "_" or body[-1] == "_" or "__" in body:
        return False
    return all(c in digits or c == "_" for c in body)


def _ident_char(text: str, pos: int) -> bool:
    return pos < len(text) and (text[pos].isalnum() or text[pos] == "_")


# -- writing -------------------------------------------------------------------------------------


def dumps(value: object) -> str:
    """Write a value as readable ZON (4-space indent, trailing commas), without a final newline.

    Accepts what :func:`parse` returns: ``None``, ``bool``, ``int``, ``float``, ``str``,
    lists and tuples, and mappings with non-empty string keys. Anything else is a
    ``TypeError``; an empty key is a ``ValueError``.
    """
    return _dump(value, 0)


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def _dump(value: object, level: int) -> str:
    if _is_scalar(value):
        return _scalar(value)
    if isinstance(value, Mapping):
        items = [f"{_field(k)} = {_dump(v, level + 1)}" for k, v in value.items()]
        inline_ok = len(items) <= 2 and all(_is_scalar(v) for v in value.values())
    elif isinstance(value, list | tuple):
        items = [_dump(v, level + 1) for v in value]
        inline_ok = all(_is_scalar(v) for v in value)
    else:
        raise TypeError(f"can't write a {type(value).__name__} as ZON")
    if not items:
        return ".{}"
    inline = ".{ " + ", ".join(items) + " }"
    # A struct at the top (a whole config file) is always written one field a line.
    top_struct = level == 0 and isinstance(value, Mapping)
    if inline_ok and not top_struct and len(inline) + len(_INDENT) * level <= _INLINE_WIDTH:
        return inline
    pad = _INDENT * (level + 1)
    body = "".join(f"{pad}{item},\n" for item in items)
    return ".{\n" + body + _INDENT * level + "}"


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    assert isinstance(value, str)
    return _quote(value)


def _quote(text: str) -> str:
    out = ['"']
    for c in text:
        if c in '\\"':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif c < " " or c == "\x7f":
            out.append(f"\\x{ord(c):02x}")
        elif not c.isprintable() and c != " ":
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _field(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"a ZON field name is a string, not {type(key).__name__}")
    if not key:
        raise ValueError("a ZON field name can't be empty")
    if _IDENT_RE.fullmatch(key) and key not in _RESERVED and key not in _WORDS:
        return "." + key
    return ".@" + _quote(key)
