"""The in-memory matcher: related images over scene graphs in RAM, by definition (DESIGN.md §5).

Written over in-memory :class:`~covr.scene.model.SceneGraph` objects with plain dictionaries and
independently of the Cypher path. It has three users: the in-memory provider
(:mod:`covr.related.memory`) runs on it, containment checks (:func:`contains`, through
:mod:`covr.related.api`) use it, and the tests use it as the oracle the Cypher provider must
agree with (the independence of the two implementations is what makes that check worth having).
Definitions:

- A **match** of ``g`` in an image is an injective embedding: each subgraph object goes to a
  distinct image object with the same name; an object with an attribute needs that attribute
  among the image object's attributes; each relation (rel-mod) goes to an image relation (rel-mod
  of the mapped relation) with the same name between the mapped objects.
- **Positives**: images with at least one match of ``g``.
- **Overlap-relaxed copy** of ``g``: an embedding of ``g``'s shape where every node's image name
  ``y`` equals ``g``'s ``x`` or is not exclusive with it (``m(type, x, y) <= 0.5``); for an
  attribute node, *some* attribute of the mapped object must qualify. ``g`` itself is one.
- **Distractor** of ``g`` at distance ``d`` (1 <= d <= ``max_distance``): an image that has *no*
  overlap-relaxed copy of ``g`` but has an embedding of ``g``'s shape in which exactly ``d``
  positions carry a different name ``y`` with ``m(type, x, y) > 0.5`` and all others equal
  ``g``'s names, and whose concrete subgraph ``g'`` is itself valid (no noun twice).
  The **signature** is the set of changed positions in ``g``'s numbering (see
  :mod:`covr.scene.edits`).

Reporting: one :class:`Distractor` per ``(image, signature)``; its ``subgraph`` is the concrete
``g'`` with the lexicographically smallest key, and ``alternatives`` holds every concrete ``g'``
found for that pair (sorted by key). An image may appear under several signatures — e.g. with
``object@1`` changed through one embedding and ``relation@0`` through another. Results are
sorted by image id, then by signature (size, then positions). The ``presence_filter`` hook then
receives ``(g, results)`` and returns the results to keep (identity by default).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from covr.related.exclusivity import EXCLUSIVE_THRESHOLD, Exclusivity
from covr.scene.edits import (
    NodeType,
    Position,
    name_at,
    positions,
    signature,
    signature_sort_key,
    substitute,
)
from covr.scene.model import Object, Relation, SceneGraph
from covr.scene.subgraph import Subgraph, SubgraphError


@dataclass(frozen=True, slots=True)
class Distractor:
    """An image related to ``g`` by the edits in ``signature`` (the module docstring defines
    it); every provider reports these (re-exported by :mod:`covr.related.api`)."""

    image_id: str
    signature: str
    subgraph: Subgraph
    alternatives: tuple[Subgraph, ...]

    @property
    def distance(self) -> int:
        return self.signature.count("+") + 1


PresenceFilter = Callable[[Subgraph, list[Distractor]], list[Distractor]]
"""Hook that removes distractors in which ``g`` is probably present though unannotated."""


def no_presence_filter(g: Subgraph, results: list[Distractor]) -> list[Distractor]:
    """The identity hook (no presence filter)."""
    return results


@dataclass(frozen=True, slots=True)
class Match:
    """One embedding: image ids of the matched objects, relations and rel-mods, by g index.

    ``relmods`` entries are ``(relation id, rel-mod id)`` because rel-mod ids are only unique
    within their relation.
    """

    image_id: str
    objects: tuple[str, ...]
    relations: tuple[str, ...] = ()
    relmods: tuple[tuple[str, str], ...] = ()


# -- index -------------------------------------------------------------------------------------


class _Scene:
    """One image prepared for matching: objects by id, outgoing relations by subject."""

    __slots__ = ("graph", "names", "objects", "out")

    def __init__(self, graph: SceneGraph) -> None:
        self.graph = graph
        self.objects: dict[str, Object] = {o.id: o for o in graph.objects}
        self.out: dict[str, list[Relation]] = defaultdict(list)
        for rel in graph.relations:
            if rel.subject in self.objects and rel.object in self.objects:
                self.out[rel.subject].append(rel)
        names: set[tuple[NodeType, str]] = set()
        for obj in graph.objects:
            names.add(("object", obj.name))
            names.update(("attribute", a) for a in obj.attributes)
        for rel in graph.relations:
            names.add(("relation", rel.name))
            names.update(("relmod", m.name) for m in rel.mods)
        self.names = frozenset(names)


class SceneIndex:
    """Scene graphs indexed by image id and by the names they contain (build once, query often)."""

    def __init__(self, scenes: Iterable[SceneGraph]) -> None:
        self.scenes: dict[str, _Scene] = {}
        self.postings: dict[tuple[NodeType, str], set[str]] = defaultdict(set)
        for graph in scenes:
            image_id = graph.image_id
            if image_id in self.scenes:
                raise ValueError(f"image {image_id!r} is given twice")
            scene = _Scene(graph)
            self.scenes[image_id] = scene
            for name in scene.names:
                self.postings[name].add(image_id)

    def candidates(self, g: Subgraph, max_changes: int) -> list[str]:
        """Images holding at least ``|positions| - max_changes`` of ``g``'s names (sorted).

        A necessary condition for an embedding with at most ``max_changes`` substitutions.
        """
        wanted = [_typed(g, p) for p in positions(g)]
        needed = len(wanted) - max_changes
        if needed <= 0:
            return sorted(self.scenes)
        counts: Counter[str] = Counter()
        for name in wanted:
            counts.update(self.postings.get(name, ()))
        return sorted(i for i, c in counts.items() if c >= needed)


def _typed(g: Subgraph, pos: Position) -> tuple[NodeType, str]:
    return pos.kind, name_at(g, pos)


def as_index(scenes: Iterable[SceneGraph] | SceneIndex) -> SceneIndex:
    return scenes if isinstance(scenes, SceneIndex) else SceneIndex(scenes)


# -- embedding ---------------------------------------------------------------------------------

Judge = Callable[[str, str], int | None]
"""``judge(position, image_name)``: 0 = counts as equal, 1 = a substitution, None = reject."""


_Shape = tuple[
    tuple[tuple[str, int], ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]
]
_SHAPES: dict[int, tuple[Subgraph, _Shape]] = {}
"""``id(g) -> (g, shape)``: the entry keeps ``g`` alive, so its id is not reused meanwhile (a
dataclass hash of ``g`` on every call would cost more than the shape saves)."""


def _shape(g: Subgraph) -> _Shape:
    """What :func:`_embed` needs of ``g``'s shape, computed once per subgraph (an in-memory
    lookup embeds the same ``g`` in thousands of candidate images): how each object is reached
    (``root``, or the relation / rel-mod leading to it) and the position texts by index.

    The texts are plain ``str``: the matcher's innermost dicts (judge caches, names per
    embedding) keep CPython's fast lookup path for dicts whose keys are all exact ``str``.
    """
    hit = _SHAPES.get(id(g))
    if hit is not None and hit[0] is g:
        return hit[1]
    n = len(g.objects)
    incoming: list[tuple[str, int]] = [("root", 0)] * n
    for j, rel in enumerate(g.relations):
        incoming[rel.object] = ("relation", j)
    for k, mod in enumerate(g.relmods):
        incoming[mod.object] = ("relmod", k)
    shape = (
        tuple(incoming),
        tuple(f"object@{i}" for i in range(n)),
        tuple(f"attribute@{i}" for i in range(n)),
        tuple(f"relation@{j}" for j in range(len(g.relations))),
        tuple(f"relmod@{k}" for k in range(len(g.relmods))),
    )
    if len(_SHAPES) >= 4096:
        _SHAPES.clear()
    _SHAPES[id(g)] = (g, shape)
    return shape


def _embed(
    scene: _Scene, g: Subgraph, judge: Judge, max_changes: int
) -> Iterator[tuple[Match, dict[str, str]]]:
    """Every embedding of ``g``'s shape accepted by ``judge`` with at most ``max_changes``.

    Yields the match and the image name at every position (one result per attribute choice).
    Objects are assigned in index order: canonical order puts each object after the relation
    or rel-mod that leads to it, so its parent is always mapped already.
    """
    incoming, object_pos, attribute_pos, relation_pos, relmod_pos = _shape(g)
    n = len(incoming)
    objs: list[str] = [""] * n
    rels: list[Relation | None] = [None] * len(relation_pos)
    mods: list[tuple[str, str]] = [("", "")] * len(relmod_pos)
    names: dict[str, str] = {}
    image_id = scene.graph.image_id

    def place(i: int, obj: Object, changes: int) -> Iterator[int]:
        """Check object ``i`` -> ``obj`` (name, attribute); yield the new change counts."""
        if obj.id in objs[:i]:
            return
        cost = judge(object_pos[i], obj.name)
        if cost is None or changes + cost > max_changes:
            return
        objs[i] = obj.id
        names[object_pos[i]] = obj.name
        if g.objects[i].attribute is None:
            yield changes + cost
            return
        for attribute in dict.fromkeys(obj.attributes):
            extra = judge(attribute_pos[i], attribute)
            if extra is None or changes + cost + extra > max_changes:
                continue
            names[attribute_pos[i]] = attribute
            yield changes + cost + extra

    def walk(i: int, changes: int) -> Iterator[tuple[Match, dict[str, str]]]:
        if i == n:
            relations = tuple(r.id for r in rels if r is not None)
            yield Match(image_id, tuple(objs), relations, tuple(mods)), dict(names)
            return
        kind, index = incoming[i]
        if kind == "root":
            for obj in scene.graph.objects:
                for c in place(i, obj, changes):
                    yield from walk(i + 1, c)
        elif kind == "relation":
            subject = objs[g.relations[index].subject]
            for rel in scene.out.get(subject, ()):
                cost = judge(relation_pos[index], rel.name)
                if cost is None or changes + cost > max_changes:
                    continue
                rels[index] = rel
                names[relation_pos[index]] = rel.name
                for c in place(i, scene.objects[rel.object], changes + cost):
                    yield from walk(i + 1, c)
        else:
            host = rels[g.relmods[index].relation]
            assert host is not None
            for mod in host.mods:
                target = scene.objects.get(mod.object)
                cost = judge(relmod_pos[index], mod.name)
                if target is None or cost is None or changes + cost > max_changes:
                    continue
                mods[index] = (host.id, mod.id)
                names[relmod_pos[index]] = mod.name
                for c in place(i, target, changes + cost):
                    yield from walk(i + 1, c)

    yield from walk(0, 0)


def _exact_judge(g: Subgraph) -> Judge:
    expected: dict[str, str] = {str(p): name_at(g, p) for p in positions(g)}
    return lambda pos, name: 0 if expected[pos] == name else None


def _scored_judge(g: Subgraph, exclusivity: Exclusivity, *, relaxed: bool) -> Judge:
    """Relaxed: equal or non-exclusive names cost 0. Otherwise: exclusive names cost 1."""
    expected: dict[str, tuple[NodeType, str]] = {
        str(p): (p.kind, name_at(g, p)) for p in positions(g)
    }
    cache: dict[tuple[str, str], int | None] = {}

    def judge(pos: str, name: str) -> int | None:
        key = (pos, name)
        if key not in cache:
            node_type, x = expected[pos]
            if x == name:
                cache[key] = 0
            else:
                exclusive = exclusivity.m(node_type, x, name) > EXCLUSIVE_THRESHOLD
                if relaxed:
                    cache[key] = None if exclusive else 0
                else:
                    cache[key] = 1 if exclusive else None
        return cache[key]

    return judge


# -- public API --------------------------------------------------------------------------------


def matches(scene: SceneGraph, g: Subgraph) -> list[Match]:
    """Every match of ``g`` in ``scene`` (see the module docstring), in a deterministic order."""
    return [m for m, _ in _embed(_Scene(scene), g, _exact_judge(g), 0)]


def contains(scene: SceneGraph, g: Subgraph) -> bool:
    """Whether ``scene`` has at least one match of ``g``."""
    return any(True for _ in _embed(_Scene(scene), g, _exact_judge(g), 0))


def contains_relaxed(scene: SceneGraph, g: Subgraph, exclusivity: Exclusivity) -> bool:
    """Whether ``scene`` has ``g`` or an overlap-relaxed copy of it."""
    judge = _scored_judge(g, exclusivity, relaxed=True)
    return any(True for _ in _embed(_Scene(scene), g, judge, 0))


def positives(scenes: Iterable[SceneGraph] | SceneIndex, g: Subgraph) -> list[str]:
    """Sorted ids of the images that contain ``g`` (edit distance 0)."""
    index = as_index(scenes)
    judge = _exact_judge(g)
    return [
        image_id
        for image_id in index.candidates(g, 0)
        if any(True for _ in _embed(index.scenes[image_id], g, judge, 0))
    ]


def distractors(
    scenes: Iterable[SceneGraph] | SceneIndex,
    g: Subgraph,
    exclusivity: Exclusivity,
    max_distance: int = 2,
    presence_filter: PresenceFilter = no_presence_filter,
) -> list[Distractor]:
    """Distractor images of ``g`` up to ``max_distance`` edits (see the module docstring)."""
    if max_distance < 0:
        raise ValueError("max_distance must be >= 0")
    index = as_index(scenes)
    results: list[Distractor] = []
    if max_distance == 0:
        return presence_filter(g, results)
    relaxed = _scored_judge(g, exclusivity, relaxed=True)
    edited = _scored_judge(g, exclusivity, relaxed=False)
    expected: dict[str, str] = {str(p): name_at(g, p) for p in positions(g)}
    concrete_of: dict[tuple[tuple[str, str], ...], tuple[str, Subgraph] | None] = {}
    for image_id in index.candidates(g, max_distance):
        scene = index.scenes[image_id]
        found: dict[str, set[Subgraph]] = defaultdict(set)
        for _, names in _embed(scene, g, edited, max_distance):
            changes = tuple(sorted((p, y) for p, y in names.items() if y != expected[p]))
            if not changes:
                continue
            if changes not in concrete_of:
                try:
                    sig = signature(p for p, _ in changes)
                    concrete_of[changes] = (sig, substitute(g, dict(changes)))
                except SubgraphError:  # e.g. the substitute repeats a noun: not a valid subgraph
                    concrete_of[changes] = None
            hit = concrete_of[changes]
            if hit is not None:
                found[hit[0]].add(hit[1])
        if not found or any(True for _ in _embed(scene, g, relaxed, 0)):
            continue
        for sig in sorted(found, key=signature_sort_key):
            ordered = tuple(sorted(found[sig], key=lambda s: s.key))
            results.append(Distractor(image_id, sig, ordered[0], ordered))
    return presence_filter(g, results)


def related(
    scenes: Iterable[SceneGraph] | SceneIndex,
    g: Subgraph,
    exclusivity: Exclusivity,
    max_distance: int = 2,
    presence_filter: PresenceFilter = no_presence_filter,
) -> tuple[list[str], list[Distractor]]:
    """Positives and distractors over one index (convenience for tests and benchmarks)."""
    index = as_index(scenes)
    return positives(index, g), distractors(index, g, exclusivity, max_distance, presence_filter)


def by_signature(results: Iterable[Distractor]) -> Mapping[str, list[str]]:
    """``signature -> sorted image ids``: the shape congruence tests compare."""
    out: dict[str, list[str]] = defaultdict(list)
    for r in results:
        out[r.signature].append(r.image_id)
    return {sig: sorted(ids) for sig, ids in sorted(out.items())}
