"""The one verb table: the manifest says where each verb runs, and every host builds its
dispatch from it, refusing a verb whose function is missing by the verb's name
(docs/adr/0033). tests/integration/test_one_verb_table.py adds a verb to a copy of the
sources and watches it appear everywhere."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from venom_mem_adapters.daemon.ops import _OnFirstCall, handlers
from venom_mem_cli.local import check_local
from venom_mem_core.errors import VenomError
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.manifest_types import Manifest, Param, Type, Verb
from venom_mem_core.usecases.verbs import use_cases


def _with(*verbs: Verb) -> Manifest:
    return MANIFEST.replace(verbs=(*MANIFEST.verbs, *verbs))


def test_each_verb_runs_where_its_right_and_its_runner_say() -> None:
    runs = {verb.name: verb.runs for verb in MANIFEST.verbs}
    assert runs["memory.add"] == runs["client.list"] == runs["grant.list"] == "writer"
    assert runs["memory.search"] == runs["whoami"] == runs["store.status"] == "reader"
    assert runs["ping"] == runs["doctor"] == runs["events"] == runs["stop"] == "daemon"
    assert runs["serve"] == runs["mcp"] == runs["setup"] == "cli"
    assert runs["hello"] is None  # the connection's own handshake


def test_audited_verbs_are_the_ones_that_issue_or_revoke_tokens() -> None:
    audited = {verb.name for verb in MANIFEST.verbs if verb.audited}
    assert audited == {"client.add", "client.remove", "grant.issue", "grant.revoke"}
    assert {MANIFEST.verbs[0].runs} == {v.runs for v in MANIFEST.verbs if v.audited}


def test_only_memory_search_embeds_a_query() -> None:
    assert {verb.name for verb in MANIFEST.verbs if verb.embeds} == {"memory.search"}


def test_every_verb_on_the_store_names_the_team_stores_unavailable_codes() -> None:
    """A team store's server away is ``unavailable.store`` for whatever reads or writes it
    (and hello: a token's check reads it), a lock held too long ``store_busy`` for a write
    (docs/adr/0030, 0031): each such verb's errors say so, and no other verb's do."""
    for verb in MANIFEST.verbs:
        codes = {error.code for error in verb.errors}
        on_store = verb.runs in ("reader", "writer") or verb.handshake
        assert ("unavailable.store" in codes) == on_store, verb.name
        assert ("unavailable.store_busy" in codes) == (verb.runs == "writer"), verb.name
        assert len(codes) == len(verb.errors), f"{verb.name} names a code twice"


def test_mcp_offers_what_the_daemon_answers_but_stop_and_the_export_pages() -> None:
    offered = {verb.name for verb in MANIFEST.verbs if verb.mcp}
    answered = {v.name for v in MANIFEST.verbs if v.runs in ("reader", "writer", "daemon")}
    assert offered == answered - {"stop", "store.export", "store.copy"}


def test_every_host_finds_every_function_the_manifest_names() -> None:
    core, ops = use_cases(), handlers()
    assert set(core) == {v.name for v in MANIFEST.verbs if v.use_case}
    assert set(ops) == {v.name for v in MANIFEST.verbs if v.op}
    assert core["memory.search"].embeds is not None
    check_local(MANIFEST)  # no error: every local verb and switch has its function


def test_a_daemon_looks_each_op_up_when_its_verb_is_first_called() -> None:
    """A daemon's start loads no op's module (docs/adr/0038): its table knows the verbs from
    the manifest and finds each function on first use, refusing a missing one as
    :func:`handlers` does; the test above holds that every one is there."""
    table = _OnFirstCall(_with(Verb("probe.x", "A verb whose op is missing", op="stop.no_op")))
    assert "probe.x" in table
    assert set(table) == {*handlers(), "probe.x"}
    with pytest.raises(VenomError) as raised:
        table["probe.x"]
    assert raised.value.code == "failed.internal"
    assert raised.value.message.startswith("verb probe.x: its op")
    assert {name: table[name] for name in handlers()} == handlers()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("use_case", "memories.no_such_use_case", "verb probe.x: its use_case"),
        ("use_case", "no_such_module.run", "verb probe.x: its use_case"),
        ("op", "stop.no_such_op", "verb probe.x: its op"),
        ("local", "no_such_runner", "verb probe.x: its local"),
    ],
)
def test_a_missing_function_is_refused_naming_its_verb(
    field: str, value: str, message: str
) -> None:
    manifest = _with(Verb("probe.x", "A verb whose function is missing").replace(**{field: value}))
    hosts: dict[str, Callable[[Manifest], object]] = {
        "use_case": use_cases,
        "op": handlers,
        "local": check_local,
    }
    with pytest.raises(VenomError) as raised:
        hosts[field](manifest)
    assert raised.value.code == "failed.internal"
    assert raised.value.message.startswith(message)
    assert raised.value.data["verb"] == "probe.x"


def test_a_missing_switch_is_refused_naming_its_verb() -> None:
    switch = Param("loop", "Loop", Type("boolean"), default=False, cli_only="no_such_switch")
    with pytest.raises(VenomError) as raised:
        check_local(_with(Verb("probe.x", "x", params=(switch,), op="stop.ping_verb")))
    assert raised.value.data["verb"] == "probe.x"
    assert "loop switch" in raised.value.message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"use_case": "a.b", "op": "c.d"}, "runs in one place"),
        ({"op": "c.d", "local": "e"}, "runs in one place"),
        ({"op": "c.d", "audited": True}, "only a use case is audited"),
        ({"local": "e", "embeds": "a.b"}, "only a use case is audited or embeds"),
        ({"local": "e", "mcp": True}, "an MCP tool is a verb the daemon answers"),
        ({"mcp": True}, "an MCP tool is a verb the daemon answers"),
        ({"handshake": True, "op": "a.b"}, "the handshake runs on the connection"),
        ({"handshake": True, "local": "e"}, "the handshake runs on the connection"),
    ],
)
def test_a_verb_that_runs_in_two_places_or_offers_what_nothing_answers_is_refused(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=f"verb probe.x.*{message}"):
        Verb("probe.x", "x", **fields)  # type: ignore[arg-type]  # the wrong combinations


def test_an_mcp_tool_by_default_is_a_verb_the_daemon_answers() -> None:
    assert Verb("p.a", "x", use_case="a.b").mcp
    assert Verb("p.b", "x", op="a.b").mcp
    assert not Verb("p.c", "x", op="a.b", mcp=False).mcp
    assert not Verb("p.d", "x", local="e").mcp
    assert not Verb("hello", "x").mcp


def test_the_handshake_is_the_manifests_word_and_a_verb_no_host_answers_stops_the_daemon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The daemon, the CLI's command tree and the skill leave out the verb the manifest
    marks as the connection's handshake, not a name they know; a verb with no place that is
    not the handshake stops the daemon at start, naming it."""
    from venom_mem_adapters.daemon import server
    from venom_mem_cli.app import build_cli
    from venom_mem_core.skill import skill_verbs

    assert [verb.name for verb in MANIFEST.verbs if verb.handshake] == ["hello"]
    core, ops = use_cases(), handlers()

    class _Ops:
        handlers = ops

    server._check_served(core, _Ops())  # type: ignore[arg-type]  # hello needs no function
    assert "hello" not in build_cli().commands
    assert "hello" not in {verb.name for verb in skill_verbs()}
    greeting = Verb("greet", "A second handshake", right=None, handshake=True)
    monkeypatch.setattr(server, "MANIFEST", _with(greeting))
    server._check_served(core, _Ops())  # type: ignore[arg-type]
    monkeypatch.setattr(server, "MANIFEST", _with(Verb("probe.nowhere", "Answered by nothing")))
    with pytest.raises(VenomError, match=r"verb probe\.nowhere is answered by nothing"):
        server._check_served(core, _Ops())  # type: ignore[arg-type]
