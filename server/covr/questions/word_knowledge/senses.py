"""Which WordNet sense of a noun a picture means: its first *concrete* sense (issue 37). Shared
by the word-knowledge derivation (:mod:`covr.questions.word_knowledge.build`: a noun's classes,
the glosses of implied attributes, group and event nouns) and the part-whole table
(:mod:`covr.questions.part_whole`), which is why it is a module of its own: both import it, and
neither imports the other's builder for it. Used only when the shipped files are rebuilt
(``python -m covr.questions.word_knowledge``); generation never opens WordNet.
"""

from __future__ import annotations

from typing import Any

CONCRETE_LEXNAMES = frozenset(
    {
        "noun.artifact",
        "noun.object",
        "noun.animal",
        "noun.person",
        "noun.plant",
        "noun.body",
        "noun.food",
        "noun.substance",
    }
)
"""Lexicographer files of things one can see; a noun's class is taken from its first sense in one
of these (then in :data:`SECOND_LEXNAMES`), so "table" is furniture, not a table of data."""
SECOND_LEXNAMES = frozenset({"noun.location", "noun.phenomenon", "noun.shape", "noun.group"})
SENSES = 4
"""Senses of a noun looked at (WordNet orders them by frequency)."""


def concrete_sense(wordnet: Any, noun: str) -> Any:
    """The noun's first sense among :data:`SENSES` in :data:`CONCRETE_LEXNAMES` (else in
    :data:`SECOND_LEXNAMES`); a multi-word name WordNet does not know falls back to its last
    word when it has two ("street light" -> light; VG's "man riding a horse" is no horse).
    None if WordNet has neither."""
    options = [noun] if noun.count(" ") != 1 else [noun, noun.rpartition(" ")[2]]
    for words in options:
        senses = wordnet.synsets(words.replace(" ", "_"), "n")[:SENSES]
        for tier in (CONCRETE_LEXNAMES, SECOND_LEXNAMES):
            for s in senses:
                if s.lexname() in tier:
                    return s
    return None
