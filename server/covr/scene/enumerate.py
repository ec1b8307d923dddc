"""Enumerate the subgraphs of a scene graph (DESIGN.md §4, paper §2.1).

Every eligible object is tried as the root; every attribute choice (none or one of the object's
attributes) is taken; every combination of 0, 1 or 2 outgoing relations per object, with every
subset of a relation's rel-mods, is built as long as the structure rules hold (≤ 2 relations on
any root-to-leaf path, no noun twice, rel-mod objects are leaves) and the total number of
relations stays within ``max_relations`` (2 by default: single, hop, chain, V-shape, and frames;
3 or 4 also allow a V under a chain, which the rules permit but DESIGN's shape list omits).

What is left out, as in the reference generator:
- objects named in ``ignored_nouns`` and objects whose box area is ``<= min_object_area`` (objects
  without a box, e.g. imSitu, are kept);
- relations named in ``ignored_relations`` (rel-mod connectors are never ignored);
- a relation ``(relation, target noun)`` in ``ignored_pairs`` ("wearing shirt") unless the target
  carries an attribute in that subgraph ("wearing a striped shirt" is kept).

The result is deduplicated (an image with two hats yields "hat" once) and sorted by size
(relations, rel-mods, objects) and then by key, so the output is deterministic and the per-image
cap ``max_subgraphs`` keeps the smallest subgraphs.

This module does not read the service settings (the scene room imports nothing above it);
callers build :class:`EnumerationOptions` from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import combinations

from covr.scene.model import Object, Relation, RelMod, SceneGraph
from covr.scene.subgraph import MAX_RELATIONS_PER_PATH, Subgraph
from covr.scene.tree import TreeEdge, TreeMod, TreeNode, canonical_tree

REFERENCE_IGNORED_NOUNS = frozenset(
    {"head", "snow", "ground", "sky", "road", "grass", "field", "wall", "sidewalk", "street"}
)
REFERENCE_IGNORED_RELATIONS = frozenset({"of", "with", "to the left of", "to the right of"})
REFERENCE_IGNORED_PAIRS = frozenset(
    {
        ("wearing", "shirt"),
        ("wearing", "shoe"),
        ("wearing", "shoes"),
        ("wearing", "sock"),
        ("wearing", "socks"),
        ("wearing", "pants"),
        ("wearing", "clothes"),
    }
)


@dataclass(frozen=True)
class EnumerationOptions:
    """Knobs of :func:`enumerate_subgraphs`; the defaults are the reference generator's values."""

    ignored_nouns: frozenset[str] = REFERENCE_IGNORED_NOUNS
    ignored_relations: frozenset[str] = REFERENCE_IGNORED_RELATIONS
    ignored_pairs: frozenset[tuple[str, str]] = field(default=REFERENCE_IGNORED_PAIRS)
    min_object_area: float = 400.0
    max_subgraphs: int | None = 1000
    max_relations: int = 2
    include_relmods: bool = True

    def __post_init__(self) -> None:
        if self.max_subgraphs is not None and self.max_subgraphs < 0:
            raise ValueError("max_subgraphs must be >= 0 or None")
        if not 0 <= self.max_relations <= 2 * MAX_RELATIONS_PER_PATH:
            raise ValueError("max_relations must be between 0 and 4")
        if self.min_object_area < 0:
            raise ValueError("min_object_area must be >= 0")


@dataclass(frozen=True, slots=True)
class _Fragment:
    node: TreeNode
    names: frozenset[str]
    relations: int


@dataclass(frozen=True, slots=True)
class _EdgeOption:
    relation_id: str
    edge: TreeEdge
    names: frozenset[str]
    relations: int


class _Enumerator:
    def __init__(self, scene: SceneGraph, options: EnumerationOptions) -> None:
        self.options = options
        self.objects: dict[str, Object] = {
            o.id: o for o in scene.objects if self._eligible_object(o)
        }
        self.out: dict[str, list[Relation]] = {oid: [] for oid in self.objects}
        for rel in scene.relations:
            if (
                rel.subject in self.objects
                and rel.object in self.objects
                and rel.subject != rel.object
                and rel.name not in options.ignored_relations
            ):
                self.out[rel.subject].append(rel)
        self.memo: dict[tuple[str, int, int], list[_Fragment]] = {}

    def _eligible_object(self, obj: Object) -> bool:
        if obj.name in self.options.ignored_nouns:
            return False
        return obj.box is None or obj.box.area > self.options.min_object_area

    def _attributes(self, obj: Object) -> list[str | None]:
        return [None, *dict.fromkeys(obj.attributes)]

    def _mod_options(self, rel: Relation) -> list[tuple[tuple[TreeMod, ...], frozenset[str]]]:
        """Every subset of the relation's eligible rel-mods, with every attribute choice."""
        mods: list[tuple[RelMod, Object]] = [
            (m, self.objects[m.object])
            for m in rel.mods
            if m.object in self.objects and m.object not in (rel.subject, rel.object)
        ]
        if not self.options.include_relmods:
            mods = []
        out: list[tuple[tuple[TreeMod, ...], frozenset[str]]] = [((), frozenset())]
        for mod, obj in mods:
            grown = list(out)
            for chosen, names in out:
                if obj.name in names:
                    continue
                for attribute in self._attributes(obj):
                    leaf = TreeNode(obj.name, attribute)
                    grown.append(((*chosen, TreeMod(mod.name, leaf)), names | {obj.name}))
            out = grown
        return out

    def _edge_options(self, oid: str, depth_left: int, budget: int) -> list[_EdgeOption]:
        subject = self.objects[oid]
        options: list[_EdgeOption] = []
        for rel in self.out[oid]:
            target = self.objects[rel.object]
            pair = (rel.name, target.name)
            for child in self.fragments(rel.object, depth_left - 1, budget - 1):
                if subject.name in child.names:
                    continue
                if pair in self.options.ignored_pairs and child.node.attribute is None:
                    continue
                for mods, mod_names in self._mod_options(rel):
                    if mod_names & (child.names | {subject.name}):
                        continue
                    edge = TreeEdge(rel.name, child.node, mods)
                    names = child.names | mod_names
                    options.append(_EdgeOption(rel.id, edge, names, child.relations + 1))
        return options

    def fragments(self, oid: str, depth_left: int, budget: int) -> list[_Fragment]:
        """Every subtree rooted at object ``oid`` within the depth and relation budget."""
        memo_key = (oid, depth_left, budget)
        if memo_key in self.memo:
            return self.memo[memo_key]
        obj = self.objects[oid]
        edge_sets: list[tuple[tuple[TreeEdge, ...], frozenset[str], int]] = [((), frozenset(), 0)]
        if depth_left > 0 and budget > 0:
            options = self._edge_options(oid, depth_left, budget)
            edge_sets += [((o.edge,), o.names, o.relations) for o in options]
            for a, b in combinations(options, 2):
                if a.relation_id == b.relation_id or a.names & b.names:
                    continue
                if a.relations + b.relations <= budget:
                    edge_sets.append(
                        ((a.edge, b.edge), a.names | b.names, a.relations + b.relations)
                    )
        result = [
            _Fragment(TreeNode(obj.name, attribute, edges), names | {obj.name}, n)
            for attribute in self._attributes(obj)
            for edges, names, n in edge_sets
        ]
        self.memo[memo_key] = result
        return result

    def trees(self) -> Iterator[TreeNode]:
        for oid in self.objects:
            budget = self.options.max_relations
            for fragment in self.fragments(oid, MAX_RELATIONS_PER_PATH, budget):
                yield canonical_tree(fragment.node)


def _size_key(g: Subgraph) -> tuple[int, int, int, str]:
    return len(g.relations), len(g.relmods), len(g.objects), g.key


def enumerate_subgraphs(
    scene: SceneGraph, options: EnumerationOptions | None = None
) -> list[Subgraph]:
    """All subgraphs of ``scene`` under the rules and ``options`` (see the module docstring)."""
    opts = options or EnumerationOptions()
    unique = set(_Enumerator(scene, opts).trees())
    subgraphs = sorted((Subgraph.of_canonical_tree(t) for t in unique), key=_size_key)
    if opts.max_subgraphs is not None:
        subgraphs = subgraphs[: opts.max_subgraphs]
    return subgraphs


def enumerate_many(
    scenes: Iterable[SceneGraph], options: EnumerationOptions | None = None
) -> Iterator[tuple[str, list[Subgraph]]]:
    """``(image id, subgraphs)`` for each scene, in input order."""
    for scene in scenes:
        yield scene.image_id, enumerate_subgraphs(scene, options)
