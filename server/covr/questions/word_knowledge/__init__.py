"""Word knowledge from the data (issue 37 item 3): which attribute categories a noun takes, which
attributes a noun implies, which nouns name groups or events rather than countable things.

Why: measured on 100 real GQA images the templates asked "What is the ripeness of the jacket?"
(``green`` is a color *and* a ripeness), "Is the dog lying or parked?" (a decoy value no dog
takes), "Do the bus and the crab have the same size?" (a relative scale across two kinds of
thing), "How many images contain a young boy?" answered 1 where a reader, seeing a plain "boy"
in a second image, says 2, and counted "audience" or "game" as objects. The generator needs a few
small tables to avoid these; they are derived once (:mod:`covr.questions.word_knowledge.build`,
by the rules below) from the real GQA and VG samples, the bundled samples and WordNet 3.0,
reviewed, and committed under ``resources/`` with the source of every entry (JSON, so the
packaging rules for ``**/*.json`` ship them). Generation reads the files only, through this
module. Regenerate them with::

    .venv/bin/python -m covr.questions.word_knowledge [--real DIR]   # DIR: ../shared/data/real

(``COVR_DATA_DIR=<scratch dir>`` recommended, as for :mod:`covr.questions.mass_nouns`, which this
command also rewrites.)

The package keeps the reader apart from the derivation (issue 38): this module reads the
shipped tables and is what generation imports; :mod:`~covr.questions.word_knowledge.build`
derives them, with the reviewed lists and the command (``__main__``), and imports the
other word-knowledge builders (:mod:`covr.questions.mass_nouns`,
:mod:`covr.questions.part_whole`), which import only readers, never it. The WordNet sense
choice both derivations use is :mod:`~covr.questions.word_knowledge.senses`.

The files:

- ``noun_attributes.json``: per noun the attribute categories it takes, each with its source
  (:func:`categories`), the attribute values the data shows on it (:func:`takes_value`), and its
  WordNet classes. The rule:

  * *Data*: a noun takes a category when an object of that noun in the samples carries an
    *evidence value* of the category: a value of exactly one category of the project's scales
    (``covr/related/resources/attributes.json``) that is not in :data:`~.build.NOT_EVIDENCE`.
    ``green`` (color and ripeness), ``short`` (height and length) or ``old`` (age and
    freshness) show no category by themselves, nor does ``clear`` (a clear glass is no weather).
  * *Class*: 200 images are few, so a noun also takes a category that at least
    :data:`~.build.CLASS_GIVERS` other data nouns of one of its WordNet classes show: the synset
    of its first concrete sense and its hypernyms up to :data:`~.build.CLASS_HOPS` levels up,
    each kept only if it has at most :data:`~.build.CLASS_MAX` hyponyms (``furniture.n.01``
    carries a shape from desks and tables to a chair, ``motor_vehicle.n.01`` a size from cars,
    motorcycles and trucks to a jeep; ``artifact.n.01`` or ``vehicle.n.01`` are far too wide to
    be a class).
  * *Default*: the categories the data shows on at least half of its nouns with any evidence
    value (color): every noun takes them, also one the file does not know.

  Values work the same way without the evidence filter and with one giver: a noun takes a value
  when the data shows it, or a value of the same group of the scales ("steel" for "metal"), on
  the noun or on another data noun of one of its classes.
- ``implied_attributes.json``: attributes a noun implies ("boy" -> young, little), reviewed
  (:data:`~.build.IMPLIED`), each checked against the noun's WordNet gloss. A question never
  uses them.
- ``uncountable_nouns.json``: nouns that are not countable objects in a picture: groups
  ("audience", "crowd") and events or times ("game", "race", "day"), from WordNet's lexicographer
  files over the vocabulary, reviewed (:data:`~.build.COUNTABLE`, :data:`~.build.GROUPS`,
  :data:`~.build.EVENTS`).
- :data:`RELATIVE_SCALES`: categories whose values are relative to the kind of thing (a small bus
  is larger than a large crab), compared only between objects of one noun.

How generation applies them (docs/questions.md, "Word knowledge"): :mod:`covr.questions.slots`
picks an asked category only among those the noun takes, a decoy only where :func:`decoy_fits`,
a relative scale only for two objects of one noun, and drops a filling whose program uses an
implied attribute (:func:`implied_uses`); no mass, group or event noun is counted
(:func:`covr.questions.mass_nouns.uncountable`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from covr.scene.text import singular

CATEGORIES_RESOURCE = "noun_attributes.json"
IMPLIED_RESOURCE = "implied_attributes.json"
UNCOUNTABLE_RESOURCE = "uncountable_nouns.json"

RELATIVE_SCALES: dict[str, str] = {
    "size": "a small bus is larger than a large crab",
    "height": "a short tree is taller than a tall dog",
    "length": "long hair is shorter than a short train",
    "thickness": "a thin trunk is thicker than a thick wire",
    "age": "a young tree is older than an old dog",
}
"""Attribute categories whose values are judged against the noun's own kind: two objects are
compared on them ("have the same size") only when they are of the same noun. Hand-written (the
project's scales hold 24 categories; these five are the ones whose values are relative)."""

# -- runtime lookups ---------------------------------------------------------------------------


PLURAL_KEYS: dict[str, str] = {"people": "person", "cattle": "cow"}
"""Collective plurals without a singular of their own, read as their members' noun."""


def noun_key(name: str) -> str:
    """The form the files use: lower case, single spaces, singular ("Leaves" -> "leaf",
    "people" -> "person")."""
    text = singular(" ".join(name.lower().split()))
    return PLURAL_KEYS.get(text, text)


@dataclass(frozen=True)
class NounKnowledge:
    """The shipped tables, loaded once (see the module docstring for what each holds)."""

    categories: Mapping[str, frozenset[str]]
    values: Mapping[str, frozenset[str]]
    classes: Mapping[str, tuple[str, ...]]
    default_categories: frozenset[str]
    implied: Mapping[str, frozenset[str]]
    groups: frozenset[str]
    events: frozenset[str]
    class_values: Mapping[str, frozenset[str]] = field(default_factory=dict)


def _resource(name: str) -> dict[str, Any]:
    text = resources.files("covr.questions").joinpath("resources", name).read_text("utf-8")
    data = json.loads(text)
    assert isinstance(data, dict), name
    return data


@cache
def knowledge() -> NounKnowledge:
    """The shipped word knowledge (the three files of this module under ``resources/``)."""
    cats = _resource(CATEGORIES_RESOURCE)
    nouns: Mapping[str, Any] = cats["nouns"]
    class_values: dict[str, set[str]] = defaultdict(set)
    for entry in nouns.values():
        for k in entry.get("classes", ()):
            class_values[k] |= set(entry.get("values", ()))
    implied = _resource(IMPLIED_RESOURCE)["nouns"]
    uncountable = _resource(UNCOUNTABLE_RESOURCE)
    return NounKnowledge(
        categories={n: frozenset(e.get("categories", {})) for n, e in nouns.items()},
        values={n: frozenset(e.get("values", ())) for n, e in nouns.items()},
        classes={n: tuple(e.get("classes", ())) for n, e in nouns.items()},
        default_categories=frozenset(cats["default_categories"]),
        implied={n: frozenset(e["attributes"]) for n, e in implied.items()},
        groups=frozenset(uncountable["groups"]),
        events=frozenset(uncountable["events"]),
        class_values={k: frozenset(v) for k, v in class_values.items()},
    )


@lru_cache(maxsize=1 << 14)
def categories(name: str) -> frozenset[str]:
    """The attribute categories a noun takes (data, its classes, the defaults)."""
    kb = knowledge()
    return kb.categories.get(noun_key(name), frozenset()) | kb.default_categories


@lru_cache(maxsize=1 << 14)
def _values(name: str) -> frozenset[str]:
    kb = knowledge()
    key = noun_key(name)
    out = set(kb.values.get(key, ()))
    for k in kb.classes.get(key, ()):
        out |= kb.class_values.get(k, frozenset())
    return frozenset(out)


def takes_value(name: str, value: str) -> bool:
    """Whether the data shows the attribute value, or a value of the same group of the scales
    ("steel" for "metal": the groups hold compatible values), on this noun or on another noun of
    one of its classes ("parked": cars and bikes, never a dog)."""
    seen = _values(name)
    return any(v in seen for v in value_group(value))


@lru_cache(maxsize=1 << 12)
def value_group(value: str) -> frozenset[str]:
    """The value with every value sharing a group of the scales with it (canonical forms)."""
    own = canonical_value(value)
    out = {own}
    for group in _scale_groups():
        if own in group:
            out |= group
    return frozenset(out)


@cache
def _scale_groups() -> tuple[frozenset[str], ...]:
    from covr.related.exclusivity import load_resource

    return tuple(
        frozenset(canonical_value(str(v)) for v in group)
        for scale in load_resource("attributes.json").get("scales", [])
        for group in scale["groups"]
    )


def decoy_fits(noun: str, truth: str | None, decoy: str, types_of: Any) -> bool:
    """Whether ``decoy`` is a real alternative to the attribute ``truth`` of a ``noun`` ("Is the
    dog lying or parked?" is not). ``types_of(value)`` gives a value's categories. The category
    the two share must be one the noun takes; then the decoy is fine on a two-pole scale (a noun
    that takes a height can be tall or short) or a default category (any color), and otherwise
    the data must show it on the noun or its class (a pose, a material, a pattern). A decoy
    sharing no category with an untyped truth needs that data too."""
    shared = set(types_of(truth or "")) & set(types_of(decoy))
    if types_of(truth or ""):
        shared &= categories(noun)
        if not shared:
            return False
        if any(c in knowledge().default_categories or c in two_pole_categories() for c in shared):
            return True
    return takes_value(noun, decoy)


@cache
def two_pole_categories() -> frozenset[str]:
    """Categories whose every scale has two groups (tall/short, open/closed, young/old)."""
    from covr.related.exclusivity import load_resource

    groups: dict[str, list[int]] = defaultdict(list)
    for scale in load_resource("attributes.json").get("scales", []):
        groups[str(scale["category"])].append(len(scale["groups"]))
    return frozenset(c for c, sizes in groups.items() if all(n == 2 for n in sizes))


@lru_cache(maxsize=1 << 14)
def implied(name: str) -> frozenset[str]:
    """The attributes the noun implies ("boy" -> young, little); empty for most nouns."""
    return knowledge().implied.get(noun_key(name), frozenset())


def is_group(name: str) -> bool:
    """A singular noun for a group of things annotated as one object ("audience", "crowd")."""
    return noun_key(name) in knowledge().groups


def is_event(name: str) -> bool:
    """A noun for an event, act or time rather than a thing in the picture ("game", "day")."""
    return noun_key(name) in knowledge().events


@cache
def _synonyms() -> dict[str, str]:
    from covr.related.exclusivity import load_resource, normalize

    out: dict[str, str] = {}
    for group in load_resource("attributes.json").get("synonyms", []):
        first = normalize(str(group[0]))
        for value in group:
            out[normalize(str(value))] = first
    return out


def canonical_value(value: str) -> str:
    """An attribute value in the files' form: lower case, single spaces, the first of its
    synonym group in the scales ("grey" -> "gray", "laying" -> "lying")."""
    text = " ".join(value.lower().split())
    return _synonyms().get(text, text)


# -- what a program says about objects -----------------------------------------------------------

_FOLLOW = frozenset({"filter", "with_relation", "assert_unique", "unique"})
"""Steps whose output objects are (a subset of) their first dependency's objects."""
_ATTRIBUTE_STEPS = frozenset({"filter", "verify_attr", "choose_attr"})
_TYPE_STEPS = frozenset({"query_attr", "all_same", "same_attr"})


@dataclass(frozen=True)
class AttributeUse:
    """One attribute value or category a program applies to the objects of one noun."""

    noun: str
    operation: str
    attribute: str | None = None
    attr_type: str | None = None


def step_nouns(
    program: Sequence[Mapping[str, Any]], current: str | None = None
) -> list[str | None]:
    """Per step, the noun of the objects it outputs (``find``'s name, kept through filters,
    relations and ``unique``); None where the output is not objects of one noun. ``current`` is
    the noun of dependency -1 inside a nested condition program."""
    out: list[str | None] = []
    for step in program:
        op, deps = step["operation"], step["dependencies"]
        noun: str | None = None
        if op == "find":
            noun = str(step["arguments"][0])
        elif op in _FOLLOW and deps:
            noun = current if deps[0] < 0 else out[deps[0]]
        elif op == "with_relation_object" and len(deps) > 1:
            noun = current if deps[1] < 0 else out[deps[1]]
        out.append(noun)
    return out


def attribute_uses(
    program: Sequence[Mapping[str, Any]], current: str | None = None
) -> Iterator[AttributeUse]:
    """Every attribute value (``filter``, ``verify_attr``, ``choose_attr``) and category
    (``query_attr``, ``all_same``, ``same_attr``) the program applies, with the noun of the
    objects it is applied to; nested condition programs included."""
    nouns = step_nouns(program, current)
    for step in program:
        op, deps, args = step["operation"], step["dependencies"], step["arguments"]
        noun = (current if deps[0] < 0 else nouns[deps[0]]) if deps else None
        for arg in args:
            if isinstance(arg, list):
                yield from attribute_uses(arg, noun)
        if noun is None:
            continue
        if op in _ATTRIBUTE_STEPS:
            for a in args:
                yield AttributeUse(noun, op, attribute=str(a))
        elif op in _TYPE_STEPS:
            yield AttributeUse(noun, op, attr_type=str(args[0]))


def implied_uses(program: Sequence[Mapping[str, Any]], types_of: Any) -> Iterator[AttributeUse]:
    """Uses of an attribute the noun implies ("young boy", "Is the boy young or old?") or of a
    category one of its implied attributes answers ("What is the age of the boy?"): a plain
    "boy" in another image lacks the word but not the property, so such a question has two
    readings. ``types_of(value)`` gives a value's categories."""
    for use in attribute_uses(program):
        known = implied(use.noun)
        if not known:
            continue
        said = use.attribute is not None and " ".join(use.attribute.lower().split()) in known
        asked = use.attr_type is not None and any(use.attr_type in types_of(v) for v in known)
        if said or asked:
            yield use
