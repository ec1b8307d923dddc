"""Filling a template: the root edge, the second subgraph, the decoy and every slot.

Templates are data (``resources/templates.json``, checked by :mod:`covr.questions.templates`);
this module gives each word of their vocabulary one implementation in a registry, the way the
operators are registered (clevr-dataset-gen's question engine works the same way):

- :data:`DECOYS` -- per ``decoy.position``: where the decoy sits in ``g`` and the true name;
- :data:`SLOT_FILLERS` -- per slot kind (``number``, ``choice``, ``subgraph``, ``value``), filled
  in that order (:data:`SLOT_ORDER`) so that counts exist before the phrases that agree with them;
- :data:`VALUE_KINDS` -- per ``value`` slot: the text or option pair it stands for.

Every random choice comes from the one ``rng`` of the filling, in a fixed order (edge, second
subgraph, decoy, values, text), so equal seeds give equal questions.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from covr.questions import word_knowledge
from covr.questions.degeneracy import is_degenerate
from covr.questions.example import Step
from covr.questions.mass_nouns import counted_names, is_mass, uncountable
from covr.questions.render import (
    edge_clause,
    finish,
    is_finite_verb,
    phrase,
    pronoun,
    root_edges,
    root_is_plural,
    view,
    wh_clause,
    with_article,
)
from covr.questions.signature_rules import resolve_position, rule_holds, signature_parts
from covr.questions.templates import Template, compile_program
from covr.questions.world import AttributeTypes
from covr.related.api import RelatedImage
from covr.scene.edits import Position, position
from covr.scene.subgraph import Subgraph

SIMILARITY_TYPES = ("color", "material", "shape")
"""Attribute types a nested similarity reference may switch to (closure_nested)."""


@dataclass
class Related:
    """One subgraph's source image, positives and distractors (what every template shares)."""

    source: str
    g: Subgraph
    positives: list[str]
    distractors: list[RelatedImage]
    positive_set: frozenset[str] = frozenset()
    sigs: dict[str, list[str]] = field(default_factory=dict)
    structure: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        g = self.g
        size = len(g.objects) + sum(o.attribute is not None for o in g.objects)
        self.structure = (size + len(g.relations) + len(g.relmods), g.depth())
        self.positive_set = frozenset([self.source, *self.positives])
        for r in self.distractors:
            self.sigs.setdefault(r.image_id, []).append(r.signature)


@dataclass
class Instance:
    """A filled template: text, program and the images it must include."""

    template: Template
    text: str
    program: list[Step]
    subgraphs: dict[str, str]
    required: list[str]
    edge: int | None
    anchor: str | None = None
    """An image the template avoids where the referent has the decoy instead of the truth: the
    anchor of a second example whose answer is the decoy (issue 16: two answers per text)."""


Allowed = Callable[[Template, Related, str, int | None], bool]
"""Whether a template may show an image (its signatures break none of the template's rules)."""


@dataclass
class Filling:
    """The state of one template being filled."""

    template: Template
    rel: Related
    rng: random.Random
    closed: Mapping[str, Any]
    types: AttributeTypes
    allowed: Allowed
    edge: int | None = None
    g2: Subgraph | None = None
    decoy: str | None = None
    truth: str | None = None
    anchor: str | None = None
    required: list[str] = field(default_factory=list)
    subgraphs: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    plural: dict[str, bool] = field(default_factory=dict)
    views: dict[str, Subgraph] = field(default_factory=dict)

    @property
    def g(self) -> Subgraph:
        return self.rel.g


# -- edge and second subgraph ------------------------------------------------------------------


PROXIMITY = frozenset({"near", "next to", "beside", "by", "close to", "around"})
"""Relations that hold between an object and most things around it: "What is the man near?"
has as many answers as there are things near him, of which the graph annotates one (the issue
36 audit: a man at a desk with a laptop, "near" annotated only to a figurine at the image's
edge). Open questions (``query_object``) do not ask about them."""
WORN = frozenset({"wearing", "wears", "dressed in", "has on"})
"""Relations to clothes: a person wears several at once and the graph often links one ("What
is the boy wearing? uniform" with his shirt and shorts inside it, unlinked: issue 36 audit)."""
SEVERAL_ANSWERS = PROXIMITY | WORN
"""What ``edge_one_answer`` keeps open questions from asking about."""


def choose_edge(template: Template, g: Subgraph, rng: random.Random) -> int | bool | None:
    """The root edge the template asks about; ``None`` if it needs none, ``False`` if no edge
    qualifies."""
    if not template.uses_edge:
        return None
    options = []
    for j in root_edges(g):
        if g.mods_of(j):
            continue  # rel-mod edges are not asked about (see docs/questions.md)
        target = g.relations[j].object
        if "root_edge_leaf" in template.subgraph and g.children(target):
            continue
        if "edge_not_finite_verb" in template.subgraph and is_finite_verb(g.relations[j].name):
            continue
        if "edge_one_answer" in template.subgraph and g.relations[j].name in SEVERAL_ANSWERS:
            continue
        options.append(j)
    return rng.choice(options) if options else False


def _second_subgraph(f: Filling) -> bool:
    spec = f.template.second_subgraph
    if spec is None:
        return True
    g = f.g
    mine = view(g, spec["view"])
    pool = [
        r
        for r in f.rel.distractors
        if not any(rule_holds(a, r.signature, g, f.edge) for a in spec.get("avoid", []))
        and view(r.subgraph, spec["view"]) != mine
    ]
    if not pool:
        return False
    pick = f.rng.choice(pool)
    f.g2 = pick.subgraph
    f.required.append(pick.image_id)
    f.subgraphs["g2"] = f.g2.key
    return True


# -- decoys ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decoy:
    """Where a decoy position sits in ``g`` and which name is the true one there."""

    locate: Callable[[Subgraph, int | None], Position | None]
    truth: Callable[[Subgraph, int | None, Position], str | None]


DECOYS: dict[str, Decoy] = {
    "edge_object": Decoy(
        lambda g, edge: resolve_position(g, "edge_object", edge),
        lambda g, edge, pos: g.objects[pos.number].name,
    ),
    "edge_relation": Decoy(
        lambda g, edge: resolve_position(g, "edge_relation", edge),
        lambda g, edge, pos: g.relations[edge].name if edge is not None else None,
    ),
    "root_attribute": Decoy(
        lambda g, edge: position("attribute", 0),
        lambda g, edge, pos: g.root.attribute,
    ),
}
"""One entry per ``decoy.position`` of the template vocabulary."""


def decoy_name(g: Subgraph, other: Subgraph, pos: Position) -> str | None:
    """The one name ``other`` has where ``g`` has another (None: not exactly one)."""
    if pos.kind == "object":
        a, b = Counter(o.name for o in g.objects), Counter(o.name for o in other.objects)
    elif pos.kind == "attribute":
        a = Counter(o.attribute for o in g.objects if o.attribute)
        b = Counter(o.attribute for o in other.objects if o.attribute)
    else:
        a, b = Counter(r.name for r in g.relations), Counter(r.name for r in other.relations)
    new = list((b - a).elements())
    return str(new[0]) if len(new) == 1 else None


def _same_type(types: AttributeTypes, a: str | None, b: str) -> bool:
    kinds = set(types.types(a or ""))
    return not kinds or bool(kinds & set(types.types(b)))


def _decoy(f: Filling) -> bool:
    """Pick the decoy word (and show its image when the template allows it)."""
    if f.template.decoy is None:
        return True
    spec = DECOYS[f.template.decoy["position"]]
    pos = spec.locate(f.g, f.edge)
    if pos is None:
        return False
    candidates: list[tuple[str, str]] = []
    for r in f.rel.distractors:
        parts = signature_parts(r.signature)
        if pos not in parts or sum(p.kind == pos.kind for p in parts) != 1:
            continue
        name = decoy_name(f.g, r.subgraph, pos)
        if name is None or (pos.kind == "relation" and is_finite_verb(name)):
            continue
        if pos.kind == "attribute" and not _same_type(f.types, f.g.root.attribute, name):
            continue  # "young or blue" is not a real choice
        if pos.kind == "attribute" and not word_knowledge.decoy_fits(
            f.g.root.name, f.g.root.attribute, name, f.types.types
        ):
            continue  # "lying or parked" for a dog: no dog is parked (issue 37)
        candidates.append((name, r.image_id))
    if not candidates:
        return False
    # Show the decoy's image only when the template allows it (a distractor that changes just
    # the asked object would repeat the referent); the word is valid either way.
    # A decoy from an image the template avoids (the same referent with the decoy instead of
    # the truth: "the fence" is metal there) comes first: it is a real alternative for this
    # referent, and that image is the anchor of a second example answered by the decoy (paper
    # §3: the same question with other images and another answer). Such an image is not shown
    # with the first example; an allowed decoy image is.
    shown = [c for c in candidates if f.allowed(f.template, f.rel, c[1], f.edge)]
    hidden = [c for c in candidates if c not in shown]
    f.decoy, decoy_image = f.rng.choice(sorted(hidden or shown))
    if hidden:
        f.anchor = decoy_image
    else:
        f.required.append(decoy_image)
    f.truth = spec.truth(f.g, f.edge, pos)
    return f.truth is not None and f.truth != f.decoy


# -- slots -------------------------------------------------------------------------------------


def _fill_number(f: Filling, name: str, spec: Mapping[str, Any]) -> bool:
    f.values[name] = f.closed[name]
    f.texts[name] = str(f.values[name])
    f.plural[name] = f.values[name] != 1
    return True


def _fill_choice(f: Filling, name: str, spec: Mapping[str, Any]) -> bool:
    f.values[name] = f.closed[name]
    f.texts[name] = f.closed[name]["text"]
    return True


def _fill_subgraph(f: Filling, name: str, spec: Mapping[str, Any]) -> bool:
    base = f.g if spec["subgraph"] == "g" else f.g2
    assert base is not None
    v = view(base, spec["view"], f.edge if base is f.g else None)
    f.views[name] = v
    form = spec["form"]
    counted = form == "plural" or form.startswith("count:")
    if counted and _no_plural(v.root.name):
        return False  # "how many sand", "fewer airs", "2 audiences", "all games" (mass_nouns.py)
    if form.startswith("count:"):
        n = f.values[form[6:]]
        if n == 1 and root_is_plural(v):
            return False  # "exactly 1 people": no singular to count with
        f.texts[name] = phrase(v, "count", n)
        f.plural[name] = n != 1 or root_is_plural(v)
    else:
        f.texts[name] = phrase(v, form)
        f.plural[name] = form == "plural" or root_is_plural(v)
    return True


def _fill_value(f: Filling, name: str, spec: Mapping[str, Any]) -> bool:
    value = VALUE_KINDS[spec["value"]](f)
    if value is None:
        return False
    f.values[name] = value
    f.texts[name] = value["text"] if isinstance(value, dict) else str(value)
    return True


SlotFiller = Callable[[Filling, str, Mapping[str, Any]], bool]
SLOT_FILLERS: dict[str, SlotFiller] = {
    "number": _fill_number,
    "choice": _fill_choice,
    "subgraph": _fill_subgraph,
    "value": _fill_value,
}
"""One filler per slot kind; False rejects the filling."""
SLOT_ORDER = ("number", "choice", "subgraph", "value")


# -- value slots -------------------------------------------------------------------------------


def _no_plural(name: str) -> bool:
    """A mass, group or event noun: no plural or number may describe it (collective plurals such
    as "leaves" are plural already and are kept out of counts by :func:`instantiate`)."""
    return is_mass(name) or word_knowledge.is_group(name) or word_knowledge.is_event(name)


def asked_types(f: Filling) -> list[str]:
    """The categories of ``g``'s root attribute a question may ask about (issue 37): only those
    the root noun takes in the data ("the ripeness of the jacket": ``green`` is a ripeness too,
    but no jacket has one), and the second subgraph's root noun too when the form compares the
    two; a relative scale (:data:`~covr.questions.word_knowledge.RELATIVE_SCALES`: "the same
    size") only between two objects of one noun, never in a form that compares the referent with
    objects of any noun (``same_attr``)."""
    noun = f.g.root.name
    allowed = word_knowledge.categories(noun)
    kinds = [t for t in sorted(f.types.types(f.g.root.attribute or "")) if t in allowed]
    if "color" in kinds and "material" in kinds:
        # a value that names a color and a material ("silver", "gold") is read as the color:
        # "What is the material of the fork? silver" was wrong for a fork annotated
        # silver-colored (issue 36 audit); a green banana's ripeness stays askable
        kinds.remove("material")
    if _uses_operation(f.template, "same_attr"):
        return [t for t in kinds if t not in word_knowledge.RELATIVE_SCALES]
    if f.g2 is not None:  # the two referents are compared on the type (specific_same_attr)
        other = f.g2.root.name
        kinds = [t for t in kinds if t in word_knowledge.categories(other)]
        if word_knowledge.noun_key(other) != word_knowledge.noun_key(noun):
            kinds = [t for t in kinds if t not in word_knowledge.RELATIVE_SCALES]
    return kinds


def _uses_operation(template: Template, operation: str) -> bool:
    return _skeleton_uses(template.program, operation)


def _skeleton_uses(program: Any, operation: str) -> bool:
    for step in program:
        if step.get("op") == operation:
            return True
        for arg in step.get("args", ()):
            if isinstance(arg, Mapping) and _skeleton_uses(arg.get("program", ()), operation):
                return True
    return False


def _root_attribute_type(f: Filling) -> Any:
    types = asked_types(f)
    return f.rng.choice(types) if types else None


def _other_attribute_type(f: Filling) -> Any:
    # The second hop of a nested similarity reference (CLOSURE §3) uses another type than the
    # first, from the types every object can be compared on.
    own = set(f.types.types(f.g.root.attribute or ""))
    others = [t for t in SIMILARITY_TYPES if t not in own]
    return f.rng.choice(others) if others else None


def _on_edge(make: Callable[[Subgraph, int], Any]) -> Callable[[Filling], Any]:
    """A value about the chosen root edge (None when the template has no edge)."""
    return lambda f: None if f.edge is None else make(f.g, f.edge)


def _options(with_articles: bool) -> Callable[[Filling], Any]:
    """The true name and the decoy in a seeded order: ``"a cup or a mug"``."""

    def options(f: Filling) -> Any:
        if f.decoy is None or f.truth is None:
            return None
        pair = [f.truth, f.decoy]
        f.rng.shuffle(pair)
        if with_articles:
            text = f"{with_article(pair[0])} or {with_article(pair[1])}"
        else:
            text = f"{pair[0]} or {pair[1]}"
        return {"first": pair[0], "second": pair[1], "text": text}

    return options


VALUE_KINDS: dict[str, Callable[[Filling], Any]] = {
    "root_attribute": lambda f: f.g.root.attribute,
    "root_attribute_type": _root_attribute_type,
    "other_attribute_type": _other_attribute_type,
    "edge_relation": _on_edge(lambda g, e: g.relations[e].name),
    "edge_clause_plural": _on_edge(
        lambda g, e: edge_clause(g.relations[e].name, phrase(view(g, "edge_target", e), "a"), True)
    ),
    "edge_wh_clause": _on_edge(
        lambda g, e: wh_clause(
            phrase(view(g, "no_edge", e), "the"),
            root_is_plural(view(g, "no_edge", e)),
            g.relations[e].name,
        )
    ),
    "edge_pronoun": _on_edge(lambda g, e: pronoun(view(g, "edge_target", e))),
    "object_options": _options(True),
    "relation_options": _options(False),
    "attribute_options": _options(False),
}
"""One entry per ``value`` slot of the template vocabulary; None rejects the filling."""


# -- the whole template ------------------------------------------------------------------------


def instantiate(
    template: Template,
    rel: Related,
    rng: random.Random,
    closed: Mapping[str, Any],
    types: AttributeTypes,
    allowed: Allowed,
    rejected: Counter[str],
) -> Instance | None:
    """Fill the template; ``closed`` gives the closed-class slot values, every other choice
    comes from ``rng`` (so equal seeds give equal fillings for different ``closed``).
    Degenerate questions (answer independent of the images) are counted in ``rejected``."""
    chosen_edge = choose_edge(template, rel.g, rng)
    if chosen_edge is False:
        return None
    f = Filling(template, rel, rng, closed, types, allowed)
    f.edge = chosen_edge if isinstance(chosen_edge, int) and chosen_edge is not True else None
    f.subgraphs["g"] = rel.g.key
    if not _second_subgraph(f) or not _decoy(f):
        return None
    for kind in SLOT_ORDER:
        fill = SLOT_FILLERS[kind]
        for name, spec in template.slots.items():
            if kind in spec and not fill(f, name, spec):
                return None
    text = rng.choice(template.text)
    utterance = finish(fill_text(text, f.values, f.texts, f.plural), question=template.question)
    program = compile_program(template.program, f.values, f.views)
    if is_degenerate(program):
        rejected["degenerate"] += 1
        return None
    for name in counted_names(program):
        why = uncountable(name)
        if why is not None:
            # "How many leaves ...": one object, many leaves; "exactly 1 game": no object
            rejected[why] += 1
            return None
    if next(word_knowledge.implied_uses(program, f.types.types), None) is not None:
        # "a young boy": a plain "boy" in another image is young too (issue 37)
        rejected["implied-attribute"] += 1
        return None
    return Instance(template, utterance, program, f.subgraphs, f.required, f.edge, f.anchor)


_AGREEMENT = {
    "is": ("are", "is"),
    "images": ("images", "image"),
    "contain": ("contain", "contains"),
}
"""Agreement words of the text placeholders: ``{is:SLOT}`` -> (plural, singular)."""


def fill_text(
    text: str, values: Mapping[str, Any], texts: Mapping[str, str], plural: Mapping[str, bool]
) -> str:
    """The template text with its ``{SLOT}``, ``{SLOT.field}`` and ``{is:SLOT}`` filled."""
    out = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            out.append(text[pos:])
            break
        end = text.index("}", start)
        out.append(text[pos:start])
        inner = text[start + 1 : end]
        agreement, _, target = inner.rpartition(":")
        slot, _, field_name = target.partition(".")
        if agreement in _AGREEMENT:
            many, one = _AGREEMENT[agreement]
            out.append(many if plural.get(slot, False) else one)
        elif field_name:
            out.append(str(values[slot][field_name]))
        else:
            out.append(texts[slot])
        pos = end + 1
    return "".join(out)
