"""The irregular forms a natural query brings along (docs/adr/0023)."""

from __future__ import annotations

import pytest

from venom_mem_core.fts import porter_stem
from venom_mem_core.inflections import IRREGULAR_FORMS, irregular_group
from venom_mem_core.ranking import with_irregular_forms
from venom_mem_core.stopwords import ENGLISH_STOPWORDS


def _groups() -> set[tuple[str, ...]]:
    return set(IRREGULAR_FORMS.values())


def test_no_two_forms_of_a_group_are_one_term_to_the_stemmer() -> None:
    """Else bm25 would count that term twice for the same word."""
    for group in _groups():
        stems = [porter_stem(form) for form in group]
        assert len(set(stems)) == len(stems), group


def test_each_form_belongs_to_one_group_and_groups_are_what_the_stemmer_misses() -> None:
    seen: dict[str, tuple[str, ...]] = {}
    for group in _groups():
        for form in group:
            assert seen.setdefault(form, group) == group, form
    # The auxiliaries and modals are left to the stopword list.
    assert not {"be", "have", "do", "can", "will"} & IRREGULAR_FORMS.keys()
    # Forms that are common unrelated words are left out with their verbs.
    assert not {"rose", "bit", "lie", "born", "ground", "wound"} & IRREGULAR_FORMS.keys()
    assert ENGLISH_STOPWORDS & IRREGULAR_FORMS.keys() == {"won"}


@pytest.mark.parametrize(
    ("word", "group"),
    [
        ("went", ("go", "went", "gone")),
        ("go", ("go", "went", "gone")),
        ("goes", ("go", "went", "gone")),
        ("giving", ("give", "gave", "given")),
        ("swimming", ("swim", "swam", "swum")),
        ("learned", ("learn", "learnt")),
        ("children", ("child", "children")),
        ("found", ("find", "found")),
        ("founded", ()),  # "found" is a form, not a base: no regular forms of it here
        ("speech", ()),
        ("sings", ("sing", "sang", "sung")),
        ("is", ()),
    ],
)
def test_irregular_group(word: str, group: tuple[str, ...]) -> None:
    assert irregular_group(word) == group


def test_with_irregular_forms_keeps_the_word_and_adds_the_rest_once() -> None:
    assert with_irregular_forms(["Caroline", "Went", "gone", "school"]) == [
        "Caroline",
        "Went",
        "go",
        "gone",
        "school",
    ]
    # "won" is a stopword (the "won" of "won't", which the tokenizer splits): never added.
    assert with_irregular_forms(["win"]) == ["win"]
    # A regular form is replaced by the base, which the stemmer makes the same term.
    assert with_irregular_forms(["wins", "thinking"]) == ["win", "think", "thought"]
