"""Name equivalence: which object names a reader may take to mean the same thing (issue 16 item 3).

Why: scene graphs name one kind of thing several ways. In an image with ``person`` ×4, ``man`` ×1
and ``people`` ×2, "How many people are there?" has no answer a careful annotator would sign:
the program counts one name, a reader counts what they see. Two names *co-refer* when they are
singular and plural of each other, synonyms, or one is a (transitive) hyponym of the other in the
related-image noun groups (``covr/related/resources/nouns.json``: person ⊃ man, woman, people,
...). Siblings (man/woman) do not co-refer. An image set in which a queried noun has a different,
co-referring name present is not used for that example (:func:`ambiguous_images`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from covr.scene.text import singular

_NAME_OPERATIONS = frozenset({"find", "choose_name"})
"""Operations whose arguments are object names a reader has to recognize in the images."""


PICTURE_SYNONYMS: tuple[tuple[str, ...], ...] = (("pole", "post", "sign post", "signpost"),)
"""Names a reader of a photograph takes for one thing although the noun groups keep them apart
(issue 36 audit: "Some signs are on a sign post" answered False beside a stop sign on a
``pole``). Kept here, not in the related room's noun groups, which also shape distractors and
the models' features."""


def _norm(name: str) -> str:
    return singular(" ".join(name.lower().split()))


@cache
def _groups() -> tuple[dict[str, frozenset[str]], dict[str, set[str]]]:
    """Synonym sets and the transitive hyponym closure of the noun groups (singular forms)."""
    raw = resources.files("covr.related").joinpath("resources", "nouns.json").read_text()
    data = json.loads(raw)
    synonyms: dict[str, frozenset[str]] = {}
    for group in [*data["synonyms"], *PICTURE_SYNONYMS]:
        members = frozenset(_norm(w) for w in group)
        for w in members:
            synonyms[w] = synonyms.get(w, frozenset()) | members
    below: dict[str, set[str]] = {}
    for parent, children in data["hyponyms"].items():
        below.setdefault(_norm(parent), set()).update(_norm(c) for c in children)
    changed = True
    while changed:  # transitive closure (the table is small: a few dozen entries)
        changed = False
        for parent, children in below.items():
            more = set().union(*(below.get(c, set()) for c in children)) - children - {parent}
            if more:
                children |= more
                changed = True
    return synonyms, below


def _family(name: str) -> frozenset[str]:
    """The singular name with its synonyms (the unit hyponymy is judged on)."""
    synonyms, _ = _groups()
    one = _norm(name)
    return synonyms.get(one, frozenset()) | {one}


@cache
def corefer(a: str, b: str) -> bool:
    """Whether two different names may refer to the same object ("man"/"person", "men"/"man",
    "guy"/"man"); ``False`` for identical names and for siblings ("man"/"woman")."""
    if " ".join(a.lower().split()) == " ".join(b.lower().split()):
        return False
    fa, fb = _family(a), _family(b)
    if fa & fb:
        return True
    _, below = _groups()
    return any(y in below.get(x, ()) or x in below.get(y, ()) for x in fa for y in fb)


def queried_names(program: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every object name the program looks for (``find`` and ``choose_name``), nested too."""
    out: set[str] = set()
    for step in program:
        for arg in step["arguments"]:
            if isinstance(arg, list):
                out |= queried_names(arg)
            elif step["operation"] in _NAME_OPERATIONS and isinstance(arg, str):
                out.add(arg)
    return out


_ATTRIBUTE_TESTS = frozenset({"filter", "verify_attr", "choose_attr"})
"""Operations that test objects for attribute values (their arguments are the values)."""
_SAME_OBJECTS = frozenset({"filter", "unique", "assert_unique"})
"""Operations whose output objects are some of their input's (a name passes through)."""


def tested_attributes(program: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """``(object name, attribute value)`` for every attribute test of the program on objects
    found by name ("all wheels are black": ``("wheel", "black")``), nested programs too (their
    dependency -1 is the objects of the step that holds them). A test on objects reached over
    a relation or a group is left out: its name is not traced."""
    out: set[tuple[str, str]] = set()
    _trace(program, None, out)
    return out


def _trace(
    program: Sequence[Mapping[str, Any]], outer: str | None, out: set[tuple[str, str]]
) -> None:
    names: list[str | None] = []
    for step in program:
        deps = step.get("dependencies", [])
        first = deps[0] if deps else None
        source = outer if first == -1 else (names[first] if first is not None else None)
        op = step["operation"]
        if op == "find":
            names.append(str(step["arguments"][0]))
            continue
        if op in _ATTRIBUTE_TESTS and source is not None:
            out.update((source, str(a)) for a in step["arguments"] if isinstance(a, str))
        for arg in step["arguments"]:
            if isinstance(arg, list):
                _trace(arg, source, out)
        names.append(source if op in _SAME_OBJECTS else None)


def ambiguous_images(
    queried: Iterable[str], names_by_image: Mapping[str, Iterable[str]]
) -> list[str]:
    """The images holding a name that co-refers with a queried one (sorted)."""
    wanted = frozenset(queried)
    return sorted(
        image
        for image, names in names_by_image.items()
        if holds_coreferent(wanted, frozenset(names))
    )


@lru_cache(maxsize=1 << 16)
def holds_coreferent(queried: frozenset[str], names: frozenset[str]) -> bool:
    """Whether a name of ``names`` co-refers with one of ``queried``. Memoized: the question
    engine asks it for every image of every image set it tries (about a million name pairs for
    30 source images), of few distinct programs and images."""
    return any(corefer(q, n) for q in queried for n in names)
