"""Manifest.verb is the lookup every request makes: it must name each verb, and only those."""

from __future__ import annotations

from venom_mem_core.manifest import MANIFEST


def test_every_verb_is_found_by_its_name() -> None:
    names = [verb.name for verb in MANIFEST.verbs]
    assert len(names) == len(set(names))  # a dict lookup keeps one verb per name
    for verb in MANIFEST.verbs:
        assert MANIFEST.verb(verb.name) is verb


def test_an_unknown_name_is_none() -> None:
    assert MANIFEST.verb("memory.nope") is None
    assert MANIFEST.verb("") is None
    assert MANIFEST.verb("MEMORY.ADD") is None


def test_a_replaced_manifest_looks_up_its_own_verbs() -> None:
    fewer = MANIFEST.replace(verbs=MANIFEST.verbs[:2])
    assert fewer.verb(MANIFEST.verbs[0].name) is MANIFEST.verbs[0]
    assert fewer.verb(MANIFEST.verbs[2].name) is None
    assert fewer == MANIFEST.replace(verbs=MANIFEST.verbs[:2])
    assert "_by_name" not in repr(fewer)
