"""English stopwords for ``query_mode = "natural"`` (docs/adr/0015, 0023).

NLTK's English list (179 words), as the ``nltk_data`` corpus ``stopwords/english`` ships it,
and the six function words of questions it lacks: the modal auxiliaries ``would``,
``could``, ``might``, ``must`` and ``shall`` (it has ``should``, ``can`` and ``will``), and
``whose`` (it has ``who`` and ``whom``). ``may`` stays a search word: it is also the month.
It holds the question words ("what", "when", "how", "did") that chat text is full of, which
short lists such as Lucene's 33 words leave in, and the fragments that splitting a
contraction at its apostrophe leaves behind ("don" and "t" of "don't"). The ADR has the
figures for both lists.
"""

from __future__ import annotations

__all__ = ["ENGLISH_STOPWORDS"]

_WORDS = """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them
    their theirs themselves what which who whom this that that'll these those am is are was
    were be been being have has had having do does did doing a an the and but if or because
    as until while of at by for with about against between into through during before after
    above below to from up down in out on off over under again further then once here there
    when where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don don't should should've now d ll m o re ve y
    ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven
    haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
    shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
"""
_QUESTION_WORDS = "would could might must shall whose"
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_WORDS.split() + _QUESTION_WORDS.split())
