"""Subgraph views and English for question slots (number agreement, articles, "the").

The templates resource names *views* of a subgraph (``full``, ``no_root_attribute``, ``no_edge``,
``edge_target``) and *forms* of its description (``a``, ``the``, ``plural``, ``count:N``); this
module computes them. Words come from :mod:`covr.scene.text` so questions and subgraph texts agree
("jeans", "people", "a/an").
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from covr.scene.subgraph import Subgraph
from covr.scene.text import FINITE_VERBS as FINITE_VERBS_BY_SINGULAR
from covr.scene.text import MASS_NOUNS, describe, indefinite_article, is_plural, noun_phrase
from covr.scene.tree import TreeNode

_BASE = FINITE_VERBS_BY_SINGULAR
"""Singular -> plural form of the relation words that are finite verbs (the scene room's table)."""
FINITE_VERBS = frozenset(_BASE) | frozenset(_BASE.values())
_SINGULAR = {v: k for k, v in _BASE.items()}


def is_finite_verb(relation: str) -> bool:
    """Relations that are finite verbs ("has") cannot follow "is" in a question."""
    return relation.split(" ", 1)[0].lower() in FINITE_VERBS


# -- views -------------------------------------------------------------------------------------


def root_edges(g: Subgraph) -> tuple[int, ...]:
    """Relation indices leaving the root, in the order of ``g.tree().edges``."""
    return g.children(0)


def edge_subtree(
    g: Subgraph, relation: int
) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    """Objects, relations and rel-mods under relation ``relation`` (the relation included)."""
    objects: set[int] = set()
    relations = {relation}
    relmods: set[int] = set()
    stack = [g.relations[relation].object]
    for k in g.mods_of(relation):
        relmods.add(k)
        stack.append(g.relmods[k].object)
    while stack:
        i = stack.pop()
        objects.add(i)
        for j in g.children(i):
            relations.add(j)
            stack.append(g.relations[j].object)
            for k in g.mods_of(j):
                relmods.add(k)
                stack.append(g.relmods[k].object)
    return frozenset(objects), frozenset(relations), frozenset(relmods)


def edge_positions(g: Subgraph, relation: int) -> frozenset[str]:
    """The edit positions inside a root edge (the relation and everything below it)."""
    objects, relations, relmods = edge_subtree(g, relation)
    out = {f"object@{i}" for i in objects}
    out |= {f"attribute@{i}" for i in objects if g.objects[i].attribute is not None}
    out |= {f"relation@{j}" for j in relations}
    out |= {f"relmod@{k}" for k in relmods}
    return frozenset(out)


def _edge_number(g: Subgraph, relation: int) -> int:
    return root_edges(g).index(relation)


@lru_cache(maxsize=8192)
def view(g: Subgraph, name: str, relation: int | None = None) -> Subgraph:
    """A view of ``g``: ``full``, ``no_root_attribute``, ``no_edge`` or ``edge_target``."""
    if name == "full":
        return g
    if name == "no_root_attribute":
        objects = (replace(g.objects[0], attribute=None), *g.objects[1:])
        return Subgraph.build(objects, g.relations, g.relmods)
    if relation is None:
        raise ValueError(f"view {name!r} needs an edge")
    tree = g.tree()
    k = _edge_number(g, relation)
    if name == "no_edge":
        return Subgraph.from_tree(
            TreeNode(tree.name, tree.attribute, tree.edges[:k] + tree.edges[k + 1 :])
        )
    if name == "edge_target":
        return Subgraph.from_tree(tree.edges[k].target)
    raise ValueError(f"unknown view {name!r}")


# -- words -------------------------------------------------------------------------------------


def root_is_plural(g: Subgraph) -> bool:
    return is_plural(g.root.name)


@lru_cache(maxsize=8192)
def phrase(g: Subgraph, form: str, n: int | None = None) -> str:
    """The description of ``g`` in a form: ``a`` (indefinite), ``the``, ``plural``, ``bare``
    (singular without article) or ``count`` (bare if ``n == 1`` else plural)."""
    if form == "plural" or (form == "count" and n != 1):
        return describe(g, plural=True)
    text = describe(g)
    if form == "a":
        return text
    bare = _strip_article(g, text)
    if form in ("bare", "count"):
        return bare
    if form == "the":
        return f"the {bare}"
    raise ValueError(f"unknown form {form!r}")


def _strip_article(g: Subgraph, text: str) -> str:
    head = noun_phrase(g.root.name, g.root.attribute)
    bare = noun_phrase(g.root.name, g.root.attribute, article=False)
    if head != bare and text.startswith(head):
        return bare + text[len(head) :]
    return text


def be(plural: bool) -> str:
    return "are" if plural else "is"


def with_article(name: str) -> str:
    """``a purse``, ``an apple``, ``jeans``, ``water``."""
    if is_plural(name) or name.strip().lower() in MASS_NOUNS:
        return name
    return f"{indefinite_article(name)} {name}"


def pronoun(g: Subgraph) -> str:
    return "them" if root_is_plural(g) else "it"


def _verb(first: str, plural: bool) -> str:
    """A finite verb in the number of its subject: has/have, contains/contain."""
    low = first.lower()
    singular_form = low if low in _BASE else _SINGULAR.get(low, low)
    return _BASE.get(singular_form, singular_form) if plural else singular_form


def edge_clause(relation: str, target_text: str, plural: bool) -> str:
    """``are wearing a hat`` / ``is on a table`` / ``have a tail``."""
    first, _, rest = relation.partition(" ")
    if first.lower() in FINITE_VERBS:
        verb = _verb(first, plural)
        words = f"{verb} {rest}" if rest else verb
        return f"{words} {target_text}"
    return f"{be(plural)} {relation} {target_text}"


def wh_clause(ref_text: str, ref_plural: bool, relation: str) -> str:
    """The rest of "What ...?" asking for a relation's object: ``is the man holding`` /
    ``does the man have``."""
    first, _, rest = relation.partition(" ")
    if first.lower() in FINITE_VERBS:
        base = _verb(first, True)
        words = f"{base} {rest}" if rest else base
        return f"{'do' if ref_plural else 'does'} {ref_text} {words}"
    return f"{be(ref_plural)} {ref_text} {relation}"


_SPACES = re.compile(r"\s+")


def finish(text: str, *, question: bool) -> str:
    """Single spaces, no parentheses, first letter capitalized (the rest untouched), and a final
    "?" exactly for questions."""
    text = _SPACES.sub(" ", text.replace("(", " ").replace(")", " ")).strip()
    text = text.rstrip("?.").rstrip()
    if text:
        text = text[0].upper() + text[1:]
    return f"{text}?" if question else text
