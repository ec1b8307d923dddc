"""Parts and their wholes: a count or an existence never reads a whole's unannotated part as
absent (the issue 36 audit after issue 37).

Why: scene graphs annotate a bicycle without its tires, a car seen from the side without its
doors. "There are exactly 3 images that contain exactly 1 tire" was answered True from an
image of five cyclists in which only a car's tire was annotated; on the picture that image
has many tires. The body-part rule (:func:`covr.related.filters.model_name_presence`) covers
persons and animals; this file covers the other wholes. An image that shows a whole of a
part the program asks for, without that part annotated, is not used for the example.

Why a shipped data file: WordNet knows part-whole relations (``part_meronyms``) but is slow to
open; the generator needs a small table. It is derived once from WordNet over the datasets'
vocabulary (:func:`build`) by the word-knowledge command (``python -m
covr.questions.word_knowledge``), which rewrites ``resources/part_whole.json`` with the other
word-knowledge files. The rule: the parts of a noun's first concrete sense, of its hypernyms up
to :data:`HYPERNYM_HOPS` up, and of those parts again (a bicycle has wheels, a wheel a tire),
each part named by its own lemmas, and by a hypernym's lemma that is the head of a compound
lemma (a "car door" is a "door"). Pairs WordNet
gives in another sense than a photograph's are removed by hand (:data:`NOT_PARTS`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from covr.questions.word_knowledge.senses import concrete_sense

RESOURCE = "part_whole.json"
HYPERNYM_HOPS = 3
PART_DEPTH = 2
NOT_PARTS: Mapping[str, str] = {
    "wing": "a car's or a bicycle's wing is a British mudguard, not a wing a picture shows",
    "seat": "WordNet's seat of a house is a residence, not a chair",
}
"""Parts removed for every whole, with why (reviewed on the real samples' vocabulary)."""
ADDED_PARTS: Mapping[str, tuple[str, ...]] = {
    "laptop": ("keyboard", "screen"),
    "tree": ("leaf",),
}
"""Parts WordNet does not give a whole within :data:`HYPERNYM_HOPS` (a laptop is four hops
below "computer"; a tree's leaves are the foliage of a plant), added when the table is read,
with the issue 36 audit's cases: an open laptop's keyboard, a tree in leaf without its leaves."""


def _lemmas(synset: Any) -> set[str]:
    return {lemma.name().replace("_", " ").lower() for lemma in synset.lemmas()}


def parts_of(wordnet: Any, noun: str) -> set[str]:
    """Every part name WordNet gives for ``noun`` (see the module docstring)."""
    sense = concrete_sense(wordnet, noun)
    if sense is None:
        return set()
    frontier = [sense, *sense.closure(lambda s: s.hypernyms(), depth=HYPERNYM_HOPS)]
    seen: set[Any] = set()
    found: set[str] = set()
    for _ in range(PART_DEPTH):
        following = []
        for whole in frontier:
            for part in whole.part_meronyms():
                if part in seen:
                    continue
                seen.add(part)
                following.append(part)
                own = _lemmas(part)
                # a name counts when this part is what the name usually means (a structural
                # "plate" or "foot" is not what a scene graph's plate or foot is)
                found |= {o for o in own if concrete_sense(wordnet, o) == part}
                # a compound names its head's kind: a "car door" is a "door", a "bicycle
                # wheel" a "wheel" (other hypernyms are too general: "covering", "frame")
                for kind in part.hypernyms():
                    found |= {
                        h
                        for h in _lemmas(kind)
                        if any(o.endswith(" " + h) for o in own)
                        and concrete_sense(wordnet, h) == kind
                    }
        frontier = following
    return found


def build(wordnet: Any, vocabulary: Iterable[str]) -> dict[str, Any]:
    """The document of ``resources/part_whole.json``: for each noun of the vocabulary, the
    nouns of the vocabulary that WordNet names as its parts."""
    words = sorted(set(vocabulary))
    known = set(words)
    wholes: dict[str, list[str]] = {}
    for noun in words:
        parts = sorted((parts_of(wordnet, noun) & known) - {noun} - set(NOT_PARTS))
        if parts:
            wholes[noun] = parts
    return {
        "about": "Parts of each noun (WordNet part meronyms of its first concrete sense, its "
        "hypernyms and their parts, named by lemmas and their hypernyms), restricted to the "
        "datasets' vocabulary; an image showing a whole without the asked part annotated is "
        "not used for a count or an existence of the part.",
        "sources": [{"dataset": "wordnet", "path": "WordNet 3.0 (Debian wordnet-base)"}],
        "not_parts": dict(NOT_PARTS),
        "wholes": wholes,
    }


@cache
def _wholes_by_part() -> Mapping[str, frozenset[str]]:
    text = resources.files("covr.questions").joinpath("resources", RESOURCE).read_text("utf-8")
    by_part: dict[str, set[str]] = {}
    tables = (json.loads(text)["wholes"].items(), ADDED_PARTS.items())
    for whole, parts in (pair for table in tables for pair in table):
        for part in parts:
            by_part.setdefault(part, set()).add(whole)
    return {part: frozenset(wholes) for part, wholes in by_part.items()}


def wholes_of(part: str) -> frozenset[str]:
    """The nouns that have ``part`` (a normalized noun: singular, lower case)."""
    return _wholes_by_part().get(part, frozenset())
