"""Hypothesis strategies for what a hostile or broken client can send: raw bytes, JSON with
deep nesting, huge numbers, NUL and lone surrogates, and request params generated from each
verb's manifest types (mostly the right JSON type with nasty content, sometimes anything).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Type, Verb

__all__ = [
    "FUZZED_VERBS",
    "frame_bytes",
    "json_values",
    "nasty_text",
    "near_examples",
    "params_for",
    "request_frames",
]

# Every verb a client can send over the socket (hello is the handshake, tested on its own;
# stop, sent as the owner, would end the daemon under the fuzz: it takes no params, and
# tests/integration/test_cli_human.py covers it).
FUZZED_VERBS: tuple[Verb, ...] = tuple(
    v for v in MANIFEST.verbs if not v.local and v.name not in ("hello", "stop")
)

_PIECES = (
    "\x00",
    "\ud800",
    "\udfff",
    "\ud83d",
    "\u2028",
    "\ufeff",
    "\x1b[2J",
    "\r\n",
    "\n",
    '"',
    "\\",
    "'; DROP TABLE memories; --",
    'NEAR("a" "b")',
    "*",
    "user",
    "project/x",
    "m1",
    "s1",
    "g1",
    "*:1",
    "vnt1.venom-mem.g1." + "A" * 43,
    "@owner",
    "%s%n",
    "../../etc/passwd",
    "é",
    "👍",
    "x" * 300,
)

nasty_text: st.SearchStrategy[str] = st.one_of(
    st.text(max_size=30),
    st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=8)), max_size=6).map("".join),
)

_ints = st.one_of(
    st.integers(min_value=-3, max_value=120),
    st.sampled_from([0, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**300]),
    st.integers(),
)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    _ints,
    st.floats(allow_nan=True, allow_infinity=True),
    nasty_text,
)

json_values: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(nasty_text, children, max_size=4)
    ),
    max_leaves=12,
)

_IDS = {
    "id": "m",
    "after": "m",
    "session": "s",
    "parent": "s",
    "principal": "g",
}


def _string_for(name: str, type_: Type) -> st.SearchStrategy[str]:
    options: list[st.SearchStrategy[str]] = [nasty_text]
    if type_.choices:
        options.append(st.sampled_from(type_.choices))
    if name in _IDS:
        prefix = _IDS[name]
        options.append(st.integers(min_value=1, max_value=8).map(lambda n: f"{prefix}{n}"))
        options.append(st.from_regex(rf"{prefix}-?[0-9]{{1,25}}", fullmatch=True))
    if name in ("space", "spaces"):
        options.append(st.sampled_from(("user", "project/fuzz", "project/x.y-z", "a" * 129)))
    if name == "tags":
        options.append(st.sampled_from(("zig", "build", "a" * 65, "Upper", "-x")))
    if name == "key":
        options.append(
            st.sampled_from(
                (
                    "memory.max_versions",
                    "search.min_similarity",
                    "grants.unknown",
                    "daemon.idle_timeout_ms",
                    "embeddings.base_url",
                    "memory",
                    "",
                )
            )
        )
    if name == "name":
        options.append(st.from_regex(r"[a-z0-9][a-z0-9-]{0,70}", fullmatch=True))
    if name == "scope":
        options.append(
            st.sampled_from(("*", "self", "space:user", "memory:m1", "session:*", "space:Bad"))
        )
    if name in ("branch", "branches"):
        options.append(st.sampled_from(("main", "feature/x", "a..b", "-x", "x.lock", "@", "b/")))
    if name in ("harness", "harness_session", "cwd", "title", "description"):
        options.append(st.sampled_from(("claude-code", "/home/u/x", "codex", "")))
    if type_.max_bytes is not None:  # each side of the limit, in bytes and in code points
        size = type_.max_bytes
        options.append(
            st.sampled_from(("x" * size, "x" * (size + 1), "é" * (size // 2 + 1), "/" + "é" * 9))
        )
    return st.one_of(*options)


def _typed(name: str, type_: Type) -> st.SearchStrategy[Any]:
    kind = type_.kind
    if kind == "string":
        return _string_for(name, type_)
    if kind == "integer":
        if name == "wait_ms":  # a long poll: keep it short so the fuzzer isn't waiting
            return st.integers(min_value=-1, max_value=20)
        if type_.min is not None or type_.max is not None:
            low = (type_.min or 0) - 2
            high = (type_.max if type_.max is not None else (type_.min or 0) + 100) + 2
            return st.one_of(st.integers(min_value=low, max_value=high), _ints)
        return _ints
    if kind == "number":
        return st.one_of(_ints, st.floats(allow_nan=True, allow_infinity=True))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = _typed(name, type_.items) if type_.items is not None else json_values
        return st.lists(items, max_size=18)
    if kind == "object" and type_.fields:
        known = {f.name: _typed(f.name, f.type) for f in type_.fields}
        return st.fixed_dictionaries({}, optional=known)
    return json_values


def _value(name: str, type_: Type) -> st.SearchStrategy[Any]:
    typed = _typed(name, type_)
    return st.one_of(typed, typed, typed, json_values)


def params_for(verb: Verb) -> st.SearchStrategy[Any]:
    """Params for ``verb``: usually an object with the required params and some optional
    ones; sometimes missing ones, unknown names, or not an object at all."""
    required = {p.name: _value(p.name, p.type) for p in verb.params if p.required}
    optional = {p.name: _value(p.name, p.type) for p in verb.params if not p.required}
    shaped = st.fixed_dictionaries(required, optional=optional)
    loose = st.fixed_dictionaries({}, optional={**required, **optional})
    unknown = st.tuples(shaped, st.dictionaries(nasty_text, json_values, min_size=1, max_size=2))
    return st.one_of(
        shaped,
        shaped,
        shaped,
        loose,
        unknown.map(lambda pair: {**pair[1], **pair[0]}),
        json_values,
    )


@st.composite
def _near(draw: st.DrawFn, verb: Verb) -> dict[str, Any]:
    example = dict(verb.examples[0]["params"]) if verb.examples else {}
    for p in verb.params:
        move = draw(st.integers(min_value=0, max_value=7))  # the simplest, 0, keeps it
        if move == 5 and (p.type.id_prefix or p.type.choices):  # a valid one, maybe new
            example[p.name] = f"{p.type.id_prefix}1" if p.type.id_prefix else p.type.choices[0]
        elif move == 6:
            example.pop(p.name, None)
        elif move == 7:
            example[p.name] = draw(_typed(p.name, p.type))
    return example


def near_examples(verb: Verb) -> st.SearchStrategy[Any]:
    """The verb's manifest example with some params dropped or replaced by generated values:
    valid arguments often, and invalid ones one param at a time."""
    return _near(verb)


def _encode(obj: Any) -> bytes:
    # ensure_ascii writes lone surrogates as \ud800 escapes; allow_nan writes NaN/Infinity,
    # which Python's parser (the daemon's) accepts, so they reach the request checks.
    return json.dumps(obj, ensure_ascii=True, allow_nan=True).encode("ascii")


# Not stop: sent after an owner hello it ends the daemon the whole module shares.
_verb_names = st.one_of(
    st.sampled_from([v.name for v in MANIFEST.verbs if v.name != "stop"]), nasty_text, json_values
)


@st.composite
def request_frames(draw: st.DrawFn) -> bytes:
    """One frame that is a JSON value, usually request-shaped: ids of every type, verbs known
    and not, params of any shape, extra members, or deep nesting."""
    shape = draw(st.integers(min_value=0, max_value=9))
    if shape == 0:
        depth = draw(st.sampled_from((10, 500, 1000, 5000, 100_000)))
        opener, closer = draw(st.sampled_from(((b"[", b"]"), (b'{"a":', b"}"))))
        return b'{"id":1,"verb":"ping","params":' + opener * depth + b"1" + closer * depth + b"}"
    if shape == 1:
        return _encode(draw(json_values))
    frame: dict[str, Any] = {
        "id": draw(st.one_of(_ints, nasty_text, json_values)),
        "verb": draw(_verb_names),
    }
    if draw(st.booleans()):
        frame["params"] = draw(json_values)
    if draw(st.integers(min_value=0, max_value=4)) == 0:
        frame.update(draw(st.dictionaries(nasty_text, json_values, max_size=2)))
    return _encode(frame)


frame_bytes: st.SearchStrategy[bytes] = st.one_of(
    st.binary(max_size=600),
    st.binary(max_size=60).map(lambda b: b'{"id":1,' + b),
    st.lists(
        st.sampled_from([b"{", b"}", b"[", b"]", b'"', b"\\u", b"\xff", b"\x00", b"1e99999"])
    ).map(b"".join),
)
