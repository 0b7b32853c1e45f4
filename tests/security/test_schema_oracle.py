"""The input schemas ``tools/list`` publishes agree with the daemon's checks (ADR 0024).

jsonschema is the oracle here, and only here: at run time the manifest's checks are the one
validator. For every tool, hypothesis generates arguments from the verb's manifest types
(tests/security/strategies.py: mostly the right JSON types with hostile content and values
each side of a limit); the published schema's verdict must be the daemon's: rejected by the
schema exactly when the daemon's dispatch and use case answer ``invalid_params.*``.

The daemon's verdict comes from what it runs, :func:`venom_mem_core.dispatch.prepare` and
the use case, in process (``LocalClient`` on an in-memory store, as the owner, so no right is
lacking). The oracle reads the schema as JSON Schema 2020-12 with ECMA-262 patterns (``$`` is
the end of the text) and JSON's integers (``1.0`` is a number, as the daemon reads it).

The disagreements allowed are the ones ADR 0024 names, each recognised precisely:
- a byte limit published as ``maxLength``: a string of fewer code points than the limit but
  more UTF-8 bytes passes the schema and is ``invalid_params.range``;
- an ID whose number is above 2^63-1 has the published ``m<N>`` shape;
- the token check also reads the text's NFKC form without format characters;
- rules no schema states: a query with no words, config values, a link from a memory to
  itself (memory.link and memory.unlink's ``from`` equal to ``to``, ADR 0042).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from tests.reliability.support import record
from tests.security.strategies import near_examples, params_for
from venom_mem_adapters.mcp.tools import ToolSpec, build_catalog
from venom_mem_core import App, LocalClient
from venom_mem_core.clock import SystemClock
from venom_mem_core.errors import VenomError
from venom_mem_core.grammar import python_regex
from venom_mem_core.ids import MAX_ID
from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.usecases.principals import OWNER
from venom_mem_core.validation import SECRET_RE

EXAMPLES = 60
CATALOG = build_catalog(MANIFEST)  # the owner's: every tool
# Rules that need more than a value's grammar: the tokenizer, the config schema.
UNPUBLISHED = frozenset({"invalid_params.query", "invalid_params.config"})
_BIG_ID = re.compile(r"(?:^|:)[msg]([0-9]{19})$")


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not re.search(python_regex(pattern), instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _json_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


Oracle = validators.extend(
    Draft202012Validator,
    validators={"pattern": _ecma_pattern},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _json_integer),
)


def sendable(arguments: Any) -> bool:
    """What JSON-RPC can carry: no lone surrogates, no NaN."""
    try:
        json.dumps(arguments, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def refusal(client: LocalClient, verb: str, arguments: dict[str, Any]) -> VenomError | None:
    """The daemon's ``invalid_params.*`` error for the arguments, or ``None``."""
    try:
        client.call(verb, arguments)
    except VenomError as error:
        return error if error.code.startswith("invalid_params.") else None
    return None


def _strings(value: Any) -> list[str]:
    """The strings in a param's value: itself, its items, its items' members."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    if isinstance(value, dict):
        return [text for member in value.values() for text in _strings(member)]
    return []


def allowed_gap(spec: ToolSpec, arguments: dict[str, Any], code: str, param: str) -> bool:
    """Whether the daemon's refusal of schema-valid arguments is one ADR 0024 names."""
    if code in UNPUBLISHED:
        return True
    if code == "invalid_params.link_self":  # no JSON Schema keyword says two members differ
        return "from" in arguments and arguments.get("from") == arguments.get("to")
    texts = _strings(arguments.get(param))
    prop = spec.input_schema["properties"].get(param, {})
    limit = prop.get("items", prop).get("maxLength")
    if code == "invalid_params.range" and limit is not None:
        return any(len(t) <= limit < len(t.encode()) for t in texts)
    if code in ("invalid_params.type", "invalid_params.grant_scope"):
        return any((big := _BIG_ID.search(t)) and int(big[1]) > MAX_ID for t in texts)
    if code == "invalid_params.secret_content":
        return not any(SECRET_RE.search(t) for t in texts)
    return False


@pytest.fixture(scope="module")
def client() -> LocalClient:
    return LocalClient(App(store=InMemoryStore(), clock=SystemClock()), OWNER)


@pytest.mark.parametrize("spec", CATALOG.values(), ids=list(CATALOG))
def test_the_published_schema_agrees_with_the_daemon(client: LocalClient, spec: ToolSpec) -> None:
    oracle = Oracle(spec.input_schema)
    verdicts: Counter[str] = Counter()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(
        arguments=st.one_of(
            params_for(spec.verb), near_examples(spec.verb), near_examples(spec.verb)
        )
    )
    def agree(arguments: Any) -> None:
        assume(isinstance(arguments, dict) and sendable(arguments))
        schema_ok = oracle.is_valid(arguments)
        error = refusal(client, spec.verb.name, arguments)
        if not schema_ok:
            first = next(iter(oracle.iter_errors(arguments))).message
            assert error is not None, f"the schema refuses {arguments!r} ({first}), the daemon not"
            verdicts["both refuse"] += 1
        elif error is None:
            verdicts["both accept"] += 1
        else:
            param = str(error.data.get("param"))
            assert allowed_gap(spec, arguments, error.code, param), (
                f"the schema accepts {arguments!r}, the daemon says {error!r}"
            )
            verdicts["named gap"] += 1

    agree()
    record(
        "security",
        "schema oracle (tools x generated arguments)",
        tools=1,
        both_accept=verdicts["both accept"],
        both_refuse=verdicts["both refuse"],
        named_gaps=verdicts["named gap"],
    )
    # Both sides of the line are exercised for every tool that takes params.
    if spec.verb.params:
        assert verdicts["both refuse"] > 0, verdicts
    assert verdicts["both accept"] > 0, verdicts


def test_the_oracle_can_disagree() -> None:
    """A schema without the manifest's grammar (tags' uniqueness, say) is caught."""
    spec = CATALOG["memory_dadd"]
    loose = json.loads(json.dumps(spec.input_schema))
    del loose["properties"]["tags"]["uniqueItems"]
    arguments = {"space": "user", "content": "x", "tags": ["zig", "zig"]}
    client = LocalClient(App(store=InMemoryStore(), clock=SystemClock()), OWNER)
    assert Oracle(loose).is_valid(arguments)
    error = refusal(client, "memory.add", arguments)
    assert error is not None
    assert error.code == "invalid_params.tag"
    assert not allowed_gap(spec, arguments, error.code, "tags")
    assert not Oracle(spec.input_schema).is_valid(arguments)
