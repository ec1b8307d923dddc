"""The subgraph model of COVR (DESIGN.md §4, paper §2.1): what a question is about.

A :class:`Subgraph` is pure data: objects (``objects[0]`` is the root), relations between them
and rel-mods hanging off relations, all referring to each other by index. It is frozen and
hashable, and always in *canonical order* so that two subgraphs with the same content are equal
dataclasses (and have the same :attr:`Subgraph.key`):

- edges of an object and rel-mods of a relation are sorted by their key text
  (see :mod:`covr.scene.tree`);
- objects, relations and rel-mods are numbered by a depth-first walk from the root that, for each
  relation in order, numbers the relation, then walks its target's subtree, then numbers each
  rel-mod and its target object.

So a parent object always has a smaller index than its children, and positions such as
``object@2`` (see :mod:`covr.scene.edits`) are stable for a given key.

Build subgraphs with :meth:`Subgraph.build` (any order, canonicalized), :meth:`Subgraph.from_key`
or :meth:`Subgraph.from_tree`; the plain constructor validates and insists on canonical order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from covr.scene.tree import (
    KeySyntaxError,
    TreeEdge,
    TreeMod,
    TreeNode,
    canonical_tree,
    format_node,
    format_shape,
    parse_key,
)

MAX_RELATIONS_PER_OBJECT = 2
MAX_RELATIONS_PER_PATH = 2


class SubgraphError(ValueError):
    """A subgraph breaks a structure rule; ``rule`` names it (e.g. ``"repeated-noun"``).

    Rules: ``empty``, ``name``, ``index``, ``key-syntax``, ``repeated-noun``, ``root``, ``tree``,
    ``out-degree``, ``depth``, ``relmod-leaf``, ``canonical-order``.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message


@dataclass(frozen=True, slots=True)
class SubgraphObject:
    """An object node with its optional attribute node."""

    name: str
    attribute: str | None = None


@dataclass(frozen=True, slots=True)
class SubgraphRelation:
    """A relation node from ``objects[subject]`` to ``objects[object]``."""

    name: str
    subject: int
    object: int


@dataclass(frozen=True, slots=True)
class SubgraphRelMod:
    """A rel-mod node hanging off ``relations[relation]``, pointing to ``objects[object]``."""

    name: str
    relation: int
    object: int


def _check_name(value: object, where: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise SubgraphError("name", f"{where} must be a non-empty string, got {value!r}")
    if "\x00" in value:
        raise SubgraphError("name", f"{where} may not contain a NUL character")


@dataclass(frozen=True)
class Subgraph:
    """A COVR subgraph in canonical order; see the module docstring for the rules."""

    objects: tuple[SubgraphObject, ...]
    relations: tuple[SubgraphRelation, ...] = ()
    relmods: tuple[SubgraphRelMod, ...] = ()

    def __post_init__(self) -> None:
        tree = _validated_tree(self.objects, self.relations, self.relmods)
        flat = _flatten(canonical_tree(tree))
        if flat != (self.objects, self.relations, self.relmods):
            raise SubgraphError(
                "canonical-order", "parts are not in canonical order; use Subgraph.build()"
            )

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        objects: Iterable[SubgraphObject],
        relations: Iterable[SubgraphRelation] = (),
        relmods: Iterable[SubgraphRelMod] = (),
    ) -> Subgraph:
        """Validate parts given in any order (``objects[0]`` is the root) and canonicalize."""
        tree = _validated_tree(tuple(objects), tuple(relations), tuple(relmods))
        return cls._canonical(*_flatten(canonical_tree(tree)))

    @classmethod
    def _canonical(
        cls,
        objects: tuple[SubgraphObject, ...],
        relations: tuple[SubgraphRelation, ...],
        relmods: tuple[SubgraphRelMod, ...],
    ) -> Subgraph:
        """A subgraph of parts just validated and flattened from a canonical tree, without
        :meth:`__post_init__` doing both again: the lookups build a concrete ``g'`` per store
        row (``edits.substitute``), and the second validation was ~3 % of a generate run."""
        made = object.__new__(cls)
        object.__setattr__(made, "objects", objects)
        object.__setattr__(made, "relations", relations)
        object.__setattr__(made, "relmods", relmods)
        return made

    @classmethod
    def from_tree(cls, tree: TreeNode) -> Subgraph:
        """The subgraph of a nested tree (validated, canonicalized)."""
        objects, relations, relmods = _flatten(canonical_tree(tree))
        return cls(objects, relations, relmods)

    @classmethod
    def of_canonical_tree(cls, tree: TreeNode) -> Subgraph:
        """The subgraph of a tree that is canonical already and whose names a scene graph
        checked (the enumerator's own trees): :meth:`from_tree` canonicalizes, and its
        validation canonicalizes again, which was ~5 % of a generate run (358 subgraphs per
        image, each built twice over)."""
        return cls._canonical(*_flatten(tree))

    @classmethod
    def from_key(cls, key: str) -> Subgraph:
        """Parse a :attr:`key`; malformed text or broken rules raise :class:`SubgraphError`."""
        if not isinstance(key, str) or not key:
            raise SubgraphError("empty", "a subgraph key must be a non-empty string")
        try:
            tree = parse_key(key)
        except KeySyntaxError as exc:
            raise SubgraphError("key-syntax", str(exc)) from exc
        return cls.from_tree(tree)

    @classmethod
    def single(cls, name: str, attribute: str | None = None) -> Subgraph:
        """A one-object subgraph."""
        return cls((SubgraphObject(name, attribute),))

    # -- views ---------------------------------------------------------------------------------

    def tree(self) -> TreeNode:
        """The nested form rooted at ``objects[0]``."""
        return _tree(self.objects, self.relations, self.relmods, 0)

    @cached_property
    def key(self) -> str:
        """Canonical, human-readable, parseable text, e.g. ``man[tall]-(wearing)->hat[red]``."""
        return format_node(self.tree())

    @cached_property
    def shape_key(self) -> str:
        """The anonymized shape, e.g. ``O[A]-(R)->O``; equal for subgraphs of equal shape."""
        return format_shape(self.tree())

    @property
    def root(self) -> SubgraphObject:
        return self.objects[0]

    @property
    def shape(self) -> str:
        """``single``, ``hop``, ``chain``, ``v``, ``frame`` (has rel-mods) or ``tree`` (larger)."""
        if self.relmods:
            return "frame"
        n = len(self.relations)
        if n == 0:
            return "single"
        if n == 1:
            return "hop"
        if n == 2:
            return "v" if self.relations[1].subject == 0 else "chain"
        return "tree"

    def depth(self) -> int:
        """The largest number of relations on a root-to-leaf path."""
        return tree_depth(self.tree())

    def children(self, index: int) -> tuple[int, ...]:
        """Indices of the relations whose subject is ``objects[index]``."""
        return tuple(j for j, r in enumerate(self.relations) if r.subject == index)

    def mods_of(self, relation: int) -> tuple[int, ...]:
        """Indices of the rel-mods of ``relations[relation]``."""
        return tuple(k for k, m in enumerate(self.relmods) if m.relation == relation)

    def __str__(self) -> str:
        return self.key


# -- validation --------------------------------------------------------------------------------


def _validated_tree(
    objects: tuple[SubgraphObject, ...],
    relations: tuple[SubgraphRelation, ...],
    relmods: tuple[SubgraphRelMod, ...],
) -> TreeNode:
    """Check every rule of DESIGN §4 and return the tree rooted at ``objects[0]``."""
    if not objects:
        raise SubgraphError("empty", "a subgraph needs at least one object (its root)")
    for i, obj in enumerate(objects):
        _check_name(obj.name, f"objects[{i}].name")
        if obj.attribute is not None:
            _check_name(obj.attribute, f"objects[{i}].attribute")
    n = len(objects)
    for j, rel in enumerate(relations):
        _check_name(rel.name, f"relations[{j}].name")
        for end in (rel.subject, rel.object):
            if not isinstance(end, int) or isinstance(end, bool) or not 0 <= end < n:
                raise SubgraphError("index", f"relations[{j}] refers to object {end!r}")
    for k, mod in enumerate(relmods):
        _check_name(mod.name, f"relmods[{k}].name")
        if not isinstance(mod.relation, int) or not 0 <= mod.relation < len(relations):
            raise SubgraphError("index", f"relmods[{k}] refers to relation {mod.relation!r}")
        if (
            not isinstance(mod.object, int)
            or isinstance(mod.object, bool)
            or not 0 <= mod.object < n
        ):
            raise SubgraphError("index", f"relmods[{k}] refers to object {mod.object!r}")
    seen: dict[str, int] = {}
    for i, obj in enumerate(objects):
        if obj.name in seen:
            raise SubgraphError(
                "repeated-noun", f"{obj.name!r} names objects {seen[obj.name]} and {i}"
            )
        seen[obj.name] = i
    parents = [0] * n
    for end in [r.object for r in relations] + [m.object for m in relmods]:
        parents[end] += 1
    if parents[0]:
        raise SubgraphError("root", "the root (objects[0]) may not be the target of an edge")
    for i in range(1, n):
        if parents[i] != 1:
            raise SubgraphError(
                "tree", f"objects[{i}] has {parents[i]} incoming edges; every non-root needs one"
            )
    for i in range(n):
        out = sum(1 for r in relations if r.subject == i)
        if out > MAX_RELATIONS_PER_OBJECT:
            raise SubgraphError(
                "out-degree",
                f"objects[{i}] has {out} relations (at most {MAX_RELATIONS_PER_OBJECT})",
            )
    mod_targets = {m.object for m in relmods}
    for j, rel in enumerate(relations):
        if rel.subject in mod_targets:
            raise SubgraphError(
                "relmod-leaf", f"relations[{j}] starts at a rel-mod's object; those are leaves"
            )
    reachable = _reachable(n, relations, relmods)
    if len(reachable) != n:
        missing = sorted(set(range(n)) - reachable)
        raise SubgraphError("tree", f"objects {missing} are not connected to the root (cycle?)")
    tree = _tree(objects, relations, relmods, 0)
    depth = tree_depth(tree)
    if depth > MAX_RELATIONS_PER_PATH:
        raise SubgraphError(
            "depth", f"a root-to-leaf path has {depth} relations (at most {MAX_RELATIONS_PER_PATH})"
        )
    return tree


def _reachable(
    n: int, relations: tuple[SubgraphRelation, ...], relmods: tuple[SubgraphRelMod, ...]
) -> set[int]:
    seen = {0}
    stack = [0]
    while stack:
        i = stack.pop()
        for j, rel in enumerate(relations):
            if rel.subject != i:
                continue
            targets = [rel.object] + [m.object for m in relmods if m.relation == j]
            for t in targets:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
    return seen


def tree_depth(node: TreeNode) -> int:
    """The largest number of relations on a path from ``node`` down to a leaf."""
    best = 0
    for edge in node.edges:
        below = [tree_depth(edge.target), *(tree_depth(m.target) for m in edge.mods)]
        best = max(best, 1 + max(below))
    return best


# -- conversions -------------------------------------------------------------------------------


def _tree(
    objects: tuple[SubgraphObject, ...],
    relations: tuple[SubgraphRelation, ...],
    relmods: tuple[SubgraphRelMod, ...],
    index: int,
) -> TreeNode:
    obj = objects[index]
    edges = []
    for j, rel in enumerate(relations):
        if rel.subject != index:
            continue
        mods = tuple(
            TreeMod(m.name, _tree(objects, relations, relmods, m.object))
            for m in relmods
            if m.relation == j
        )
        edges.append(TreeEdge(rel.name, _tree(objects, relations, relmods, rel.object), mods))
    return TreeNode(obj.name, obj.attribute, tuple(edges))


def _flatten(
    tree: TreeNode,
) -> tuple[tuple[SubgraphObject, ...], tuple[SubgraphRelation, ...], tuple[SubgraphRelMod, ...]]:
    """Number a (canonical) tree depth-first: see the module docstring for the order."""
    objects: list[SubgraphObject] = []
    relations: list[SubgraphRelation] = []
    relmods: list[SubgraphRelMod] = []

    def visit(node: TreeNode) -> int:
        index = len(objects)
        objects.append(SubgraphObject(node.name, node.attribute))
        for edge in node.edges:
            j = len(relations)
            relations.append(SubgraphRelation(edge.name, index, -1))
            target = visit(edge.target)
            relations[j] = SubgraphRelation(edge.name, index, target)
            for mod in edge.mods:
                k = len(relmods)
                relmods.append(SubgraphRelMod(mod.name, j, -1))
                relmods[k] = SubgraphRelMod(mod.name, j, visit(mod.target))
        return index

    visit(tree)
    return tuple(objects), tuple(relations), tuple(relmods)
