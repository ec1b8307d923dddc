"""Mutual exclusivity of node names (DESIGN.md §6, paper §2.2 and App. A).

``m(node_type, x, x_prime)`` is the probability that an image annotated with ``x_prime`` at a
position where the question's subgraph has ``x`` is a *valid distractor*, i.e. that ``x`` and
``x_prime`` cannot both describe that node. A substitution counts for edit distance only when
``m > 0.5`` (:data:`EXCLUSIVE_THRESHOLD`); identical names always score 0.

The :class:`Exclusivity` protocol is what the related-image code depends on; the ONNX classifier of
the model issue implements the same protocol. :class:`ResourceExclusivity` is the default, built
from three small reviewed JSON files under ``resources/`` so that lookups work before any model:

- objects (nouns): exclusive unless identical, synonyms, singular/plural forms of each other,
  hypernym/hyponym (transitively) or on the two sides of a cross-cutting pair (``man`` vs
  ``player``). Unknown nouns are exclusive, as in the paper ("high for all but synonyms,
  hypernyms and hyponyms"). Score 0.95 / 0.05.
- attributes: exclusive when some *scale* (color, material, size, height, …) lists both in
  different groups and no group of that scale contains both (``red``/``blue``, ``tall``/``short``);
  synonyms and same-group values are not (``gray``/``grey``, ``large``/``huge``). Attributes on no
  common scale — different categories or unknown words — score 0.0: a conservative default,
  because a wrong "exclusive" makes an ambiguous question while a wrong "not exclusive" only loses a
  distractor. Score 0.9 / 0.05 / 0.0.
- relations: directional. Equivalent relations (``holding``/``using``) 0.05; if the candidate
  ``x_prime`` entails the question's ``x`` (``riding on`` ⇒ ``near``) 0.1; if ``x`` entails
  ``x_prime`` or ``x_prime`` is a general relation (``near``, ``next to``, ``has``) 0.85–0.9,
  because annotators write the most specific relation; a general ``x`` against a specific
  ``x_prime`` 0.2; otherwise (distinct specific relations, unknown words) 0.75.
- rel-mods (imSitu connectors): equivalent groups (``with``/``using``) 0.05, otherwise 0.8.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any, Protocol, runtime_checkable

from covr.scene.edits import NodeType
from covr.scene.text import singular

__all__ = [
    "EXCLUSIVE_THRESHOLD",
    "Exclusivity",
    "NodeType",
    "ResourceExclusivity",
    "default_exclusivity",
    "is_exclusive",
]
NAMES_CACHE = 200_000
"""Names the word lists' per-name memo tables hold when no size is given (the default of
``COVR_RELATED_CACHE_NAMES``, which the lookups pass: tests/unit/test_settings.py)."""
EXCLUSIVE_THRESHOLD = 0.5


@runtime_checkable
class Exclusivity(Protocol):
    """Scores whether a candidate's name excludes the question's name at one position."""

    def m(self, node_type: NodeType, x: str, x_prime: str) -> float:
        """Probability that ``x`` and ``x_prime`` are mutually exclusive (directional)."""
        ...

    def m_batch(self, pairs: Sequence[tuple[NodeType, str, str]]) -> list[float]:
        """:meth:`m` for many ``(node_type, x, x_prime)`` triples, in order."""
        ...


def scores_against(
    exclusivity: Exclusivity, node_type: NodeType, x: str, names: Sequence[str]
) -> Sequence[float]:
    """``m_batch`` of ``x`` against each of ``names``: one call of the scorer's own
    ``scores_against`` when it has one (the ONNX model reads it as a slice of a cached row; a
    lookup asks this for every queried name against its whole vocabulary)."""
    against = getattr(exclusivity, "scores_against", None)
    if callable(against):
        scores: Sequence[float] = against(node_type, x, names)
        return scores
    return exclusivity.m_batch([(node_type, x, n) for n in names])


def is_exclusive(exclusivity: Exclusivity, node_type: NodeType, x: str, x_prime: str) -> bool:
    """Whether substituting ``x`` by ``x_prime`` makes a valid distractor (``m > 0.5``)."""
    return exclusivity.m(node_type, x, x_prime) > EXCLUSIVE_THRESHOLD


def normalize(name: str) -> str:
    """Lower case with single spaces: the form resource lookups use."""
    return " ".join(name.lower().split())


def load_resource(name: str) -> dict[str, Any]:
    """A JSON resource shipped in ``covr/related/resources``."""
    text = resources.files("covr.related").joinpath("resources", name).read_text("utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"resource {name} must hold a JSON object")
    return data


def _groups(raw: Iterable[Iterable[str]]) -> dict[str, set[int]]:
    """name -> ids of the groups that contain it."""
    out: dict[str, set[int]] = {}
    for gid, group in enumerate(raw):
        for name in group:
            out.setdefault(normalize(name), set()).add(gid)
    return out


def _share(index: Mapping[str, set[int]], a: str, b: str) -> bool:
    return bool(index.get(a, set()) & index.get(b, set()))


class _Nouns:
    def __init__(self, data: Mapping[str, Any], cache_names: int) -> None:
        self.synonyms = _groups(data.get("synonyms", []))
        parents: dict[str, set[str]] = {}
        for hyper, hypos in data.get("hyponyms", {}).items():
            for hypo in hypos:
                parents.setdefault(normalize(hypo), set()).add(normalize(hyper))
        self.parents = parents
        self.cross = [
            ({normalize(n) for n in left}, {normalize(n) for n in right})
            for left, right in data.get("cross_cutting", [])
        ]
        self.members: dict[int, set[str]] = {}
        for member, ids in self.synonyms.items():
            for gid in ids:
                self.members.setdefault(gid, set()).add(member)
        # Question generation scores many new pairs for a long time: forms and ancestors were
        # recomputed per pair (a scan of every synonym group each), ~45 % of its CPU at 1x.
        self._forms: dict[str, frozenset[str]] = {}
        self._ancestors: dict[frozenset[str], frozenset[str]] = {}
        self._cache_names = cache_names
        """Names (and name-form sets) whose derived forms are kept; beyond it, recomputed."""

    def forms(self, name: str) -> frozenset[str]:
        """The name, its singular, and every synonym of either."""
        hit = self._forms.get(name)
        if hit is not None:
            return hit
        base = {normalize(name), normalize(singular(name))}
        out = set(base)
        for form in base:
            for gid in self.synonyms.get(form, ()):
                out |= self.members[gid]
        found = frozenset(out)
        if len(self._forms) < self._cache_names:
            self._forms[name] = found
        return found

    def ancestors(self, forms: frozenset[str]) -> frozenset[str]:
        hit = self._ancestors.get(forms)
        if hit is not None:
            return hit
        seen: set[str] = set()
        stack = list(forms)
        while stack:
            name = stack.pop()
            for parent in self.parents.get(name, ()):
                for form in self.forms(parent):
                    if form not in seen:
                        seen.add(form)
                        stack.append(form)
        found = frozenset(seen)
        if len(self._ancestors) < self._cache_names:
            self._ancestors[forms] = found
        return found

    def compatible(self, a: str, b: str) -> bool:
        fa, fb = self.forms(a), self.forms(b)
        if fa & fb:
            return True
        if fa & self.ancestors(fb) or fb & self.ancestors(fa):
            return True
        return any(
            (fa & left and fb & right) or (fb & left and fa & right) for left, right in self.cross
        )


class _Attributes:
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.scales: list[tuple[str, dict[str, set[int]]]] = [
            (scale["category"], _groups(scale["groups"])) for scale in data.get("scales", [])
        ]
        self.synonyms = _groups(data.get("synonyms", []))

    def score(self, a: str, b: str) -> float:
        if a == b or _share(self.synonyms, a, b):
            return 0.0
        exclusive = False
        for _category, groups in self.scales:
            if a in groups and b in groups:
                if _share(groups, a, b):
                    return 0.05
                exclusive = True
        return 0.9 if exclusive else 0.0

    def categories(self, attribute: str) -> tuple[str, ...]:
        name = normalize(attribute)
        return tuple(dict.fromkeys(c for c, groups in self.scales if name in groups))


class _Relations:
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.equivalent = _groups(data.get("equivalent", []))
        self.general = {normalize(n) for n in data.get("general", [])}
        self.prepositions = sorted(
            (normalize(p) for p in data.get("prepositions", [])), key=len, reverse=True
        )
        self.implies: dict[str, set[str]] = {
            normalize(k): {normalize(v) for v in vs} for k, vs in data.get("implies", {}).items()
        }
        self.relmods = _groups(data.get("relmod_equivalent", []))

    def _direct(self, name: str) -> set[str]:
        out = set(self.implies.get(name, ()))
        for prep in self.prepositions:  # "standing in front of" entails "in front of"
            if name != prep and name.endswith(" " + prep):
                out.add(prep)
                break
        return out

    def entailed(self, name: str) -> set[str]:
        """Every relation ``name`` entails, transitively (through equivalents too)."""
        seen: set[str] = set()
        stack = [name]
        while stack:
            current = stack.pop()
            for nxt in self._direct(current):
                if nxt not in seen and nxt != name:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    def score(self, x: str, y: str) -> float:
        if x == y or _share(self.equivalent, x, y):
            return 0.05 if x != y else 0.0
        if x in self.entailed(y):
            return 0.1  # the candidate's relation entails the question's: not a distractor
        if y in self.entailed(x):
            return 0.9  # the candidate only has the general relation the question's entails
        x_general, y_general = x in self.general, y in self.general
        if y_general and not x_general:
            return 0.85
        if x_general:
            return 0.2
        return 0.75

    def relmod_score(self, x: str, y: str) -> float:
        if x == y:
            return 0.0
        return 0.05 if _share(self.relmods, x, y) else 0.8


class ResourceExclusivity:
    """The default :class:`Exclusivity`, from the JSON resources (see the module docstring)."""

    def __init__(
        self,
        *,
        nouns: Mapping[str, Any] | None = None,
        attributes: Mapping[str, Any] | None = None,
        relations: Mapping[str, Any] | None = None,
        cache_names: int = NAMES_CACHE,
    ) -> None:
        """``cache_names`` bounds the per-name memo tables (``COVR_RELATED_CACHE_NAMES``: the
        lookups pass their settings section's), so a long-running service's memory stays
        bounded."""
        self._nouns = _Nouns(
            nouns if nouns is not None else load_resource("nouns.json"), cache_names
        )
        self._attributes = _Attributes(
            attributes if attributes is not None else load_resource("attributes.json")
        )
        self._relations = _Relations(
            relations if relations is not None else load_resource("relations.json")
        )
        self._cache: dict[tuple[str, str, str], float] = {}

    def m(self, node_type: NodeType, x: str, x_prime: str) -> float:
        if x == x_prime:
            return 0.0
        key = (node_type, x, x_prime)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._score(node_type, normalize(x), normalize(x_prime))
            self._cache[key] = cached
        return cached

    def m_batch(self, pairs: Sequence[tuple[NodeType, str, str]]) -> list[float]:
        return [self.m(t, x, y) for t, x, y in pairs]

    def _score(self, node_type: NodeType, x: str, y: str) -> float:
        if x == y:
            return 0.0
        if node_type == "object":
            return 0.05 if self._nouns.compatible(x, y) else 0.95
        if node_type == "attribute":
            return self._attributes.score(x, y)
        if node_type == "relation":
            return self._relations.score(x, y)
        if node_type == "relmod":
            return self._relations.relmod_score(x, y)
        raise ValueError(f"unknown node type {node_type!r}")

    def attribute_categories(self, attribute: str) -> tuple[str, ...]:
        """The categories (color, material, …) an attribute belongs to, possibly none."""
        return self._attributes.categories(attribute)


@cache
def default_exclusivity(cache_names: int = NAMES_CACHE) -> ResourceExclusivity:
    """A shared :class:`ResourceExclusivity` over the packaged resources (one per memo size:
    the lookups pass ``COVR_RELATED_CACHE_NAMES`` from their settings section)."""
    return ResourceExclusivity(cache_names=cache_names)
