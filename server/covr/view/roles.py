"""What each image of an example is for, and which of its nodes to mark (issue 18, item 1).

A generated example records ``source_image``, its subgraphs (``{"g": key, "g2": key}``) and, per
image, the edit signatures through which it was picked (``[]`` for an image that contains ``g``).
It does **not** record the concrete substituted subgraph ``g'`` nor which scene nodes it matched,
so they are derived here from the image's scene graph with public functions of the related room:

- the match of ``g`` (or ``g2``) is :func:`covr.related.matcher.matches`;
- for a distractor with signature ``s``, :func:`covr.related.matcher.distractors` is run on that
  one scene with an exclusivity that treats *every* different name as exclusive: it returns the
  concrete ``g'`` per signature, exactly as the lookup defines them, but without the classifier's
  judgement (the image was already judged when it was picked). The nodes of ``g'`` whose names are
  not in ``g`` are the substituted ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from covr.questions.example import ExampleRecord
from covr.related.exclusivity import default_exclusivity
from covr.related.matcher import Match, distractors, matches
from covr.scene.edits import NodeType, name_at, parse_signature
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph, SubgraphError
from covr.view.scene_svg import Marks, NodeSet


class _EveryChangeExclusive:
    """An :class:`~covr.related.exclusivity.Exclusivity` for which any other name is exclusive."""

    def m(self, node_type: NodeType, x: str, x_prime: str) -> float:
        return 0.0 if x == x_prime else 1.0

    def m_batch(self, pairs: Sequence[tuple[NodeType, str, str]]) -> list[float]:
        return [self.m(t, x, y) for t, x, y in pairs]


@dataclass(frozen=True)
class Substitution:
    """One changed position of a distractor: ``position`` in ``g``, old and new names."""

    position: str
    old: str
    new: str


@dataclass(frozen=True)
class ImageRole:
    """One image of an example: its role and what to mark in its drawing.

    ``role`` is ``source``, ``positive`` (contains ``g``), ``positive:g2`` (contains another of
    the example's subgraphs), ``distractor`` or ``other``; ``signatures`` are the recorded edit
    signatures; ``substitutions`` the changed names of the first signature that could be traced;
    ``concrete`` the key of that distractor's subgraph ``g'``; ``missing`` is set when the image
    is not in the store.
    """

    image_id: str
    role: str
    signatures: tuple[str, ...] = ()
    substitutions: tuple[Substitution, ...] = ()
    concrete: str | None = None
    marks: Marks = field(default_factory=Marks)
    missing: bool = False

    @property
    def label(self) -> str:
        """Short caption: ``distractor object@0: blanket → pillow``."""
        if self.missing:
            return f"{self.role} (not in the store)"
        if self.role != "distractor":
            return self.role
        if self.substitutions:
            return "distractor " + ", ".join(
                f"{s.position}: {s.old} → {s.new}" for s in self.substitutions
            )
        return "distractor " + " | ".join(self.signatures)


def parse_subgraphs(example: ExampleRecord) -> dict[str, Subgraph]:
    """The example's subgraphs by name (``g``, ``g2``); unparsable keys are left out."""
    out: dict[str, Subgraph] = {}
    raw = example.get("subgraphs")
    if not isinstance(raw, Mapping):
        return out
    for name, key in raw.items():
        if isinstance(key, str):
            try:
                out[str(name)] = Subgraph.from_key(key)
            except (SubgraphError, ValueError):
                continue
    return out


def match_nodes(match: Match, g: Subgraph) -> NodeSet:
    """Scene node ids of one match of ``g`` (attributes included)."""
    attributes = frozenset(
        (oid, obj.attribute)
        for oid, obj in zip(match.objects, g.objects, strict=True)
        if obj.attribute is not None
    )
    return NodeSet(
        objects=frozenset(match.objects),
        attributes=attributes,
        relations=frozenset(match.relations),
        relmods=frozenset(match.relmods),
    )


def _new_names(old: Sequence[str], new: Sequence[str]) -> Counter[str]:
    return Counter(new) - Counter(old)


def _substituted(g: Subgraph, concrete: Subgraph, match: Match) -> NodeSet:
    """Nodes of ``match`` (of ``concrete``) whose names ``g`` does not have at that node type."""
    new_objects = _new_names([o.name for o in g.objects], [o.name for o in concrete.objects])
    new_attrs = _new_names(
        [o.attribute for o in g.objects if o.attribute],
        [o.attribute for o in concrete.objects if o.attribute],
    )
    new_rels = _new_names([r.name for r in g.relations], [r.name for r in concrete.relations])
    new_mods = _new_names([m.name for m in g.relmods], [m.name for m in concrete.relmods])
    objects = frozenset(
        oid for oid, o in zip(match.objects, concrete.objects, strict=True) if new_objects[o.name]
    )
    attributes = frozenset(
        (oid, o.attribute)
        for oid, o in zip(match.objects, concrete.objects, strict=True)
        if o.attribute is not None and new_attrs[o.attribute]
    )
    relations = frozenset(
        rid for rid, r in zip(match.relations, concrete.relations, strict=True) if new_rels[r.name]
    )
    relmods = frozenset(
        mid for mid, m in zip(match.relmods, concrete.relmods, strict=True) if new_mods[m.name]
    )
    return NodeSet(objects, attributes, relations, relmods)


def _substitutions(g: Subgraph, concrete: Subgraph, sig: str) -> tuple[Substitution, ...]:
    """Old → new names per changed position (new names matched by node type)."""
    kinds: dict[str, tuple[list[str], list[str]]] = {
        "object": ([o.name for o in g.objects], [o.name for o in concrete.objects]),
        "attribute": (
            [o.attribute for o in g.objects if o.attribute],
            [o.attribute for o in concrete.objects if o.attribute],
        ),
        "relation": ([r.name for r in g.relations], [r.name for r in concrete.relations]),
        "relmod": ([m.name for m in g.relmods], [m.name for m in concrete.relmods]),
    }
    fresh = {k: list(_new_names(old, new).elements()) for k, (old, new) in kinds.items()}
    out = []
    for pos in parse_signature(sig):
        new = fresh[pos.kind].pop(0) if fresh[pos.kind] else "?"
        out.append(Substitution(pos, name_at(g, pos), new))
    return tuple(out)


def image_roles(example: ExampleRecord, scenes: Mapping[str, SceneGraph | None]) -> list[ImageRole]:
    """One :class:`ImageRole` per image of ``example`` (in the example's order)."""
    subgraphs = parse_subgraphs(example)
    g = subgraphs.get("g")
    signatures = example.get("signatures") or {}
    source = example.get("source_image")
    out: list[ImageRole] = []
    for image_id in example.get("scenes") or []:
        sigs = tuple(str(s) for s in (signatures.get(image_id) or []))
        scene = scenes.get(image_id)
        base_role = "source" if image_id == source else "distractor" if sigs else "positive"
        if scene is None:
            out.append(ImageRole(image_id, base_role, sigs, missing=True))
            continue
        match_set = NodeSet()
        role = base_role
        contained: list[str] = []
        for name, sub in subgraphs.items():
            found = matches(scene, sub)
            if found:
                contained.append(name)
                match_set = match_set.union(match_nodes(found[0], sub))
        if role == "positive" and "g" not in contained:
            role = f"positive:{contained[0]}" if contained else "other"
        if not sigs or g is None:
            out.append(ImageRole(image_id, role, sigs, marks=Marks(match=match_set)))
            continue
        others = [s for name, s in subgraphs.items() if name != "g"]
        traced = _trace(scene, g, sigs, others)
        if traced is None:
            out.append(ImageRole(image_id, role, sigs, marks=Marks(match=match_set)))
            continue
        sig, concrete, match = traced
        out.append(
            ImageRole(
                image_id,
                role,
                sigs,
                substitutions=_substitutions(g, concrete, sig),
                concrete=concrete.key,
                marks=Marks(
                    match=match_set.union(match_nodes(match, concrete)),
                    substituted=_substituted(g, concrete, match),
                ),
            )
        )
    return out


def _trace(
    scene: SceneGraph, g: Subgraph, sigs: Sequence[str], others: Sequence[Subgraph] = ()
) -> tuple[str, Subgraph, Match] | None:
    """The first recorded signature found again in ``scene``: (signature, g', its match).

    Judged first with the packaged exclusivity resources (the substitution a reader would
    accept), then with every change counting; among several ``g'`` one that is another subgraph
    of the example (``g2``) wins, then the smallest key.
    """
    wanted = set(sigs)
    try:
        distance = max(len(parse_signature(s)) for s in sigs)
    except SubgraphError:
        return None
    for exclusivity in (default_exclusivity(), _EveryChangeExclusive()):
        found = distractors([scene], g, exclusivity, max_distance=distance)
        for hit in sorted(
            (h for h in found if h.signature in wanted), key=lambda h: sigs.index(h.signature)
        ):
            ranked = sorted(hit.alternatives, key=lambda s: (s not in others, s.key))
            for concrete in ranked:
                embedded = matches(scene, concrete)
                if embedded:
                    return hit.signature, concrete, embedded[0]
    return None


def scene_marks(scene: SceneGraph, key: str) -> Marks:
    """Marks of the first match of the subgraph ``key`` in ``scene`` (``--subgraph``, ``/image``).

    Raise :class:`LookupError` when ``scene`` does not contain it, ``ValueError`` for a bad key.
    """
    g = Subgraph.from_key(key)
    found = matches(scene, g)
    if not found:
        raise LookupError(f"subgraph {key!r} is not in {scene.image_id}")
    return Marks(match=match_nodes(found[0], g))
