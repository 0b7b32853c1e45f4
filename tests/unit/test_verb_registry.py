"""The verb registry: one binding per verb a daemon serves, each read the same way by the
daemon's dispatch, LocalClient and the MCP catalog."""

from __future__ import annotations

from venom_mem_adapters.daemon.ops import HANDLERS
from venom_mem_adapters.mcp.tools import build_catalog
from venom_mem_core.manifest import MANIFEST
from venom_mem_core.usecases.verbs import VERBS


def test_every_served_manifest_verb_has_one_binding() -> None:
    served = [verb.name for verb in MANIFEST.verbs if not verb.local]
    assert list(VERBS) == served  # manifest order, none missing, none extra
    for name, binding in VERBS.items():
        assert binding.verb.name == name
        assert (binding.handler is None) == (binding.runs == "daemon"), name


def test_writes_and_admin_run_on_the_writer_reads_on_the_pool() -> None:
    for name, binding in VERBS.items():
        if binding.runs == "daemon":
            continue
        expected = "writer" if binding.verb.right in ("write", "admin") else "reader"
        assert binding.runs == expected, name


def test_the_daemon_answers_each_daemon_verb_but_its_handshake() -> None:
    daemon_only = {name for name, binding in VERBS.items() if binding.runs == "daemon"}
    assert set(HANDLERS) == daemon_only - {"hello"}


def test_audited_verbs_are_the_ones_that_issue_or_revoke_tokens() -> None:
    audited = {name for name, binding in VERBS.items() if binding.audited}
    assert audited == {"client.add", "client.remove", "grant.issue", "grant.revoke"}
    assert all(VERBS[name].runs == "writer" for name in audited)


def test_only_memory_search_embeds_a_query() -> None:
    assert {name for name, binding in VERBS.items() if binding.embeds is not None} == {
        "memory.search"
    }


def test_mcp_read_only_hints_come_from_the_registry() -> None:
    for spec in build_catalog(MANIFEST).values():
        assert spec.read_only == VERBS[spec.verb.name].read_only, spec.name
