"""Irregular English word forms for ``query_mode = "natural"`` (docs/adr/0023).

FTS5's Porter stemmer joins the regular forms of a word (``give``, ``gives``, ``giving`` all
become ``give``) but not the irregular ones: ``gave`` and ``given`` stay apart from ``give``,
``went`` from ``go``, ``children`` from ``child``. A question asks "When did Caroline go to
the support group?" and the memory says "I went to a support group yesterday". So a natural
query's word that is one of the forms below is searched as all of its group's forms, OR-ed
like any other terms; the regular forms still come from the stemmer.

The groups are the common irregular verbs of English grammars (base, past, past participle),
without the auxiliaries and modals (``be``, ``have``, ``do``, ``can``...: stopwords anyway) and
without the verbs whose irregular forms are also common, unrelated words (``rose`` of
``rise``, ``bit`` of ``bite``, ``lay`` of ``lie``, ``bore``/``born`` of ``bear``, ``ground``
of ``grind``, ``wound`` of ``wind``, ``spring``, ``tear``, ``lie``); and the irregular plurals
whose singular is not an ending away (``children``, ``people``, ``women``, ``feet``...,
without ``lives`` and ``leaves``, which are verbs too). Within a group no two forms share a
Porter stem (a unit test checks it), so no form counts twice in bm25.
"""

from __future__ import annotations

__all__ = ["IRREGULAR_FORMS", "irregular_group"]

# One group a line: base, then its irregular forms (a form equal to the base is left out).
_GROUPS = """
    arise arose arisen
    awake awoke awoken
    beat beaten
    become became
    begin began begun
    bend bent
    bleed bled
    blow blew blown
    break broke broken
    breed bred
    bring brought
    build built
    burn burnt
    buy bought
    catch caught
    choose chose chosen
    cling clung
    come came
    creep crept
    deal dealt
    dig dug
    draw drew drawn
    dream dreamt
    drink drank drunk
    drive drove driven
    eat ate eaten
    fall fell fallen
    feed fed
    feel felt
    fight fought
    find found
    flee fled
    fling flung
    fly flew flown
    forbid forbade forbidden
    forget forgot forgotten
    forgive forgave forgiven
    freeze froze frozen
    get got gotten
    give gave given
    go went gone
    grow grew grown
    hang hung
    hear heard
    hide hid hidden
    hold held
    keep kept
    kneel knelt
    know knew known
    lay laid
    lead led
    leap leapt
    learn learnt
    leave left
    lend lent
    light lit
    lose lost
    make made
    mean meant
    meet met
    mistake mistook mistaken
    overcome overcame
    pay paid
    prove proven
    ride rode ridden
    ring rang rung
    run ran
    say said
    see saw seen
    seek sought
    sell sold
    send sent
    shake shook shaken
    shine shone
    shoot shot
    show shown
    shrink shrank shrunk
    sing sang sung
    sink sank sunk
    sit sat
    sleep slept
    slide slid
    speak spoke spoken
    speed sped
    spend spent
    spin spun
    stand stood
    steal stole stolen
    stick stuck
    sting stung
    stink stank stunk
    strike struck stricken
    string strung
    swear swore sworn
    sweep swept
    swim swam swum
    swing swung
    take took taken
    teach taught
    tell told
    think thought
    throw threw thrown
    understand understood
    undergo underwent undergone
    wake woke woken
    wear wore worn
    weave wove woven
    weep wept
    win won
    withdraw withdrew withdrawn
    write wrote written
    child children
    person people
    man men
    woman women
    mouse mice
    foot feet
    tooth teeth
    goose geese
    wife wives
    knife knives
    wolf wolves
    half halves
    shelf shelves
    thief thieves
"""


def _groups() -> dict[str, tuple[str, ...]]:
    forms: dict[str, tuple[str, ...]] = {}
    for line in _GROUPS.strip().splitlines():
        group = tuple(line.split())
        for form in group:
            forms[form] = group
    return forms


IRREGULAR_FORMS: dict[str, tuple[str, ...]] = _groups()
"""Each irregular form, and each base, to its whole group (base first)."""


def _bases(word: str) -> list[str]:
    """The bases ``word`` may be a regular form of: "giving" -> giv, give; "swimming" ->
    swimm, swimme, swim; "goes" -> go, goe; "learned" -> learn, learne."""
    bases = []
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            stem = word[: -len(ending)]
            bases += [stem, stem + "e"] + ([stem[:-1]] if stem[-1] == stem[-2] else [])
    for ending in ("es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            bases.append(word[: -len(ending)])
    return bases


def irregular_group(word: str) -> tuple[str, ...]:
    """The forms to search for ``word`` (lowercase): its irregular group when it is one of
    its forms (``went`` -> go went gone) or a regular form of its base (``goes``, ``giving``),
    else ``()``."""
    group = IRREGULAR_FORMS.get(word)
    if group is not None:
        return group
    for base in _bases(word):
        found = IRREGULAR_FORMS.get(base)
        if found is not None and found[0] == base:
            return found
    return ()
