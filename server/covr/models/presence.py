"""The presence model ``p(g_s | image)`` for simple subgraphs (paper §2.2 and App. B).

The paper fine-tuned LXMERT on image features. Images are not available here, so the **default
model sees graphs, not pixels**: it scores a simple subgraph against the image's own annotated
scene graph (which names, attributes and relations it has, and how often the subgraph's parts
co-occur with them in the training graphs). Its ONNX signature also takes an optional image
feature vector (``image_features``, zeros when absent) so that a visual model can replace it
without changing the interface; the default model was trained with zeros there.

Simple subgraph: at most 2 objects, at most 1 relation, at most 1 attribute, no rel-mods.
:func:`simple_parts` splits any subgraph into simple ones that cover all its nodes; the paper
drops a candidate distractor when the model scores *all* simple parts of ``g`` above the
threshold of the changed node type (object 0.05, relation 0.1, attribute 0.5 by default;
the calibrated values are in the model metadata).
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from covr.models.errors import ModelInputError, ModelResourceError
from covr.models.features import FloatArray, Lexicon
from covr.models.onnx_io import OnnxHead
from covr.scene.edits import parse_signature
from covr.scene.model import Object, Relation, SceneGraph
from covr.scene.subgraph import Subgraph, SubgraphError, SubgraphObject, SubgraphRelation
from covr.scene.text import singular

PRESENCE_GRAPH_INPUT = "graph_features"
PRESENCE_IMAGE_INPUT = "image_features"
PRESENCE_OUTPUT = "present_probability"
IMAGE_FEATURES = 32
PRESENCE_FEATURES_VERSION = 2
PAPER_THRESHOLDS = {"object": 0.05, "relation": 0.1, "attribute": 0.5}
GRAPH_FEATURE_NAMES_V1 = (
    "has_second_object",
    "has_relation",
    "has_attribute",
    "attribute_on_second",
    "log_objects",
    "log_relations",
    "log_count_a",
    "log_count_b",
    "any_a",
    "any_b",
    "log_attr_any",
    "log_host_with_attr",
    "host_attr_fraction",
    "host_conflicting_attr",
    "host_same_category_other",
    "log_rel_any",
    "log_rel_from_a",
    "log_rel_to_b",
    "log_any_rel_a_to_b",
    "log_any_rel_b_to_a",
    "b_has_incoming_r",
    "a_has_outgoing_r",
    "prior_attr_given_host",
    "prior_rel_given_pair",
    "prior_rel_given_subject",
    "prior_rel_given_object",
    "cooc_a_max",
    "cooc_a_mean",
    "cooc_b_max",
    "cooc_b_mean",
    "log_freq_a",
    "log_freq_b",
    "log_freq_attr",
    "log_freq_rel",
    "a_b_pair_seen",
)
"""Version 1's layout (the synthetic-trained model of 22-26 Nov): version 2 appends to it, so a
version-1 file still loads and reads the first columns (``covr models eval presence --model``
compares the two on the same images)."""
PART_FEATURE_NAMES = (
    "cond_a_max",
    "cond_b_max",
    "class_cond_a_max",
    "class_cond_b_max",
    "a_is_body_part",
    "b_is_body_part",
    "scene_has_person",
    "scene_has_animal",
)
"""Version 2 (issue 37): part-whole and co-occurrence knowledge. ``cond_*``: the largest
P(noun in image | another noun of the scene) of the training graphs; ``class_cond_*``: the same
given a WordNet class (lexicographer file of the first noun sense: person, animal, body, ...)
of the scene's other nouns, so that "a person implies a hand" carries over to person words the
training images never paired with a hand; then the noun's own class (body part) and whether the
scene shows a person or an animal."""
GRAPH_FEATURE_NAMES = GRAPH_FEATURE_NAMES_V1 + PART_FEATURE_NAMES
FEATURE_LAYOUTS = {1: GRAPH_FEATURE_NAMES_V1, 2: GRAPH_FEATURE_NAMES}


def is_simple(g: Subgraph) -> bool:
    """At most 2 objects, 1 relation, 1 attribute and no rel-mods (paper §2.2)."""
    attributes = sum(1 for o in g.objects if o.attribute is not None)
    return len(g.objects) <= 2 and len(g.relations) <= 1 and attributes <= 1 and not g.relmods


def simple_parts(g: Subgraph) -> list[Subgraph]:
    """Simple subgraphs covering every node of ``g``: each object with its attribute, and each
    relation between its two bare objects (rel-mods become hops from the relation's subject)."""
    parts: dict[str, Subgraph] = {}
    for obj in g.objects:
        s = Subgraph.single(obj.name, obj.attribute)
        parts.setdefault(s.key, s)
    for rel in g.relations:
        s = Subgraph.build(
            [
                SubgraphObject(g.objects[rel.subject].name),
                SubgraphObject(g.objects[rel.object].name),
            ],
            [SubgraphRelation(rel.name, 0, 1)],
        )
        parts.setdefault(s.key, s)
    for mod in g.relmods:
        subject = g.objects[g.relations[mod.relation].subject].name
        target = g.objects[mod.object].name
        if subject != target:
            s = Subgraph.build(
                [SubgraphObject(subject), SubgraphObject(target)],
                [SubgraphRelation(mod.name, 0, 1)],
            )
            parts.setdefault(s.key, s)
    return list(parts.values())


@dataclass(frozen=True, slots=True)
class SimpleParts:
    """A simple subgraph's parts: root ``a``, optional ``b`` and relation, one attribute."""

    a: str
    b: str | None
    relation: str | None
    attribute: str | None
    attribute_on_b: bool


def parts_of(g: Subgraph, field: str = "subgraph") -> SimpleParts:
    if not isinstance(g, Subgraph):
        raise ModelInputError(field, f"must be a Subgraph, got {type(g).__name__}")
    if not is_simple(g):
        raise ModelInputError(
            field,
            f"{g.key!r} is not simple (at most 2 objects, 1 relation, 1 attribute, no rel-mods); "
            "split it with simple_parts()",
        )
    a = g.objects[0]
    b = g.objects[1] if len(g.objects) > 1 else None
    attr_b = b is not None and b.attribute is not None
    return SimpleParts(
        a=_n(a.name),
        b=_n(b.name) if b is not None else None,
        relation=_n(g.relations[0].name) if g.relations else None,
        attribute=_n(b.attribute)
        if attr_b and b is not None and b.attribute
        else (_n(a.attribute) if a.attribute else None),
        attribute_on_b=attr_b,
    )


@lru_cache(maxsize=1 << 14)
def _n(name: str) -> str:
    """The feature key of a name; memoized because every candidate row normalizes the same few
    names again (about 200,000 calls for 30 source images)."""
    return " ".join(singular(name).lower().split())


def noun_key(name: str) -> str:
    """How the model's statistics and classes spell a name (singular, lower case)."""
    return _n(name)


# -- statistics of the training graphs -----------------------------------------------------------


class CoStats:
    """Image-level counts from training graphs (stored in the model's metadata)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.images = max(int(data.get("images", 1)), 1)
        self.noun: dict[str, int] = dict(data.get("noun", {}))
        self.attr: dict[str, int] = dict(data.get("attr", {}))
        self.rel: dict[str, int] = dict(data.get("rel", {}))
        self.noun_attr: dict[str, int] = dict(data.get("noun_attr", {}))
        self.noun_obj: dict[str, int] = dict(data.get("noun_obj", {}))
        self.triple: dict[str, int] = dict(data.get("triple", {}))
        self.pair: dict[str, int] = dict(data.get("pair", {}))
        self.subj_rel: dict[str, int] = dict(data.get("subj_rel", {}))
        self.rel_obj: dict[str, int] = dict(data.get("rel_obj", {}))
        self.cooc: dict[str, int] = dict(data.get("cooc", {}))
        self.noun_class: dict[str, str] = {
            noun: cls for cls, nouns in data.get("classes", {}).items() for noun in nouns
        }
        self.cls: dict[str, int] = dict(data.get("class", {}))
        self.class_noun: dict[str, int] = dict(data.get("class_noun", {}))

    def cond(self, a: str, c: str) -> float:
        """P(``a`` in an image | ``c`` in it), smoothed towards 0 for rare ``c``."""
        key = f"{a}|{c}" if a < c else f"{c}|{a}"
        return (self.cooc.get(key, 0) + 0.1) / (self.noun.get(c, 0) + 1.0)

    def class_cond(self, a: str, cls: str) -> float:
        """P(``a`` in an image | another noun of class ``cls`` in it)."""
        return (self.class_noun.get(f"{cls}|{a}", 0) + 0.1) / (self.cls.get(cls, 0) + 1.0)

    def pmi(self, a: str, c: str) -> float:
        key = f"{a}|{c}" if a < c else f"{c}|{a}"
        both = self.cooc.get(key, 0)
        na, nc = self.noun.get(a, 0), self.noun.get(c, 0)
        return math.log((both + 0.5) * self.images / ((na + 1.0) * (nc + 1.0)))


def collect_stats(
    scenes: Sequence[SceneGraph],
    *,
    min_count: int = 2,
    classes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The counts :class:`CoStats` reads, pruned to keys seen ``min_count`` times; with
    ``classes`` (normalized noun -> WordNet class) also the class table and, per image, which
    nouns appear beside another noun of each class (``class``, ``class_noun``)."""
    classes = dict(classes or {})
    c: dict[str, Counter[str]] = {
        k: Counter()
        for k in (
            "noun",
            "attr",
            "rel",
            "noun_attr",
            "noun_obj",
            "triple",
            "pair",
            "subj_rel",
            "rel_obj",
            "cooc",
            "class",
            "class_noun",
        )
    }
    for scene in scenes:
        names = {o.id: _n(o.name) for o in scene.objects}
        distinct = sorted(set(names.values()))
        c["noun"].update(distinct)
        c["noun_obj"].update(names.values())
        c["attr"].update({_n(a) for o in scene.objects for a in o.attributes})
        c["noun_attr"].update(
            {f"{names[o.id]}|{_n(a)}" for o in scene.objects for a in o.attributes}
        )
        rels = [(names.get(r.subject), _n(r.name), names.get(r.object)) for r in scene.relations]
        rels = [(s, r, o) for s, r, o in rels if s and o]
        c["rel"].update({r for _, r, _ in rels})
        c["triple"].update({f"{s}|{r}|{o}" for s, r, o in rels})
        c["pair"].update({f"{s}|{o}" for s, _, o in rels})
        c["subj_rel"].update({f"{s}|{r}" for s, r, _ in rels})
        c["rel_obj"].update({f"{r}|{o}" for _, r, o in rels})
        for i, a in enumerate(distinct):
            for b in distinct[i + 1 :]:
                c["cooc"][f"{a}|{b}"] += 1
        if classes:
            present = Counter(classes[n] for n in distinct if n in classes)
            c["class"].update(present.keys())
            for a in distinct:
                own = classes.get(a)
                c["class_noun"].update(f"{k}|{a}" for k, n in present.items() if k != own or n > 1)
    out: dict[str, Any] = {"images": len(scenes)}
    for key, counter in c.items():
        if key in ("class", "class_noun") and not classes:
            continue
        floor = 1 if key in ("noun", "attr", "rel", "noun_obj", "class") else min_count
        out[key] = {k: v for k, v in sorted(counter.items()) if v >= floor}
    if classes:
        by_class: dict[str, list[str]] = {}
        for noun, cls in sorted(classes.items()):
            by_class.setdefault(cls, []).append(noun)
        out["classes"] = by_class
    return out


# -- features ----------------------------------------------------------------------------------

SceneNouns = tuple[dict[str, str], list[str]]
"""A scene's normalized name per object id, and its distinct normalized names (sorted)."""


def scene_nouns_of(scene: SceneGraph) -> SceneNouns:
    names = {o.id: _n(o.name) for o in scene.objects}
    return names, sorted(set(names.values()))


def _log(n: float) -> float:
    return math.log1p(n)


def _relation_counts(
    r: str | None, ids_a: set[str], ids_b: set[str], scene: SceneGraph
) -> tuple[int, int, int, int, int, int, int]:
    """(relations named ``r``, of them from an ``a``, of them to a ``b``, any relation a->b,
    any b->a, a ``b`` has an incoming ``r``, an ``a`` has an outgoing ``r``); zeros without ``r``."""
    if r is None:
        return 0, 0, 0, 0, 0, 0, 0
    rel_any = rel_from_a = rel_to_b = a_to_b = b_to_a = 0
    rels = scene.relations
    for rel in rels:
        if _n(rel.name) == r:
            rel_any += 1
            rel_from_a += rel.subject in ids_a
            rel_to_b += rel.object in ids_b
        a_to_b += rel.subject in ids_a and rel.object in ids_b
        b_to_a += rel.subject in ids_b and rel.object in ids_a
    b_in_r = int(any(rel.object in ids_b and _n(rel.name) == r for rel in rels))
    a_out_r = int(any(rel.subject in ids_a and _n(rel.name) == r for rel in rels))
    return rel_any, rel_from_a, rel_to_b, a_to_b, b_to_a, b_in_r, a_out_r


class PresenceFeaturizer:
    """Graph features of ``(simple subgraph, scene graph)`` (order: GRAPH_FEATURE_NAMES)."""

    def __init__(self, stats: CoStats, lexicon: Lexicon) -> None:
        self.stats = stats
        self.lexicon = lexicon

    def row(
        self,
        g: Subgraph,
        scene: SceneGraph,
        field: str = "subgraph",
        nouns: SceneNouns | None = None,
    ) -> list[float]:
        """One feature row: the subgraph's shape, how much of it the scene shows, priors from
        the training graphs, and co-occurrence of its nouns with the scene's (``nouns``: the
        scene's :func:`scene_nouns_of`, when the caller already has them)."""
        p = parts_of(g, field)
        st = self.stats
        names, scene_nouns = nouns or scene_nouns_of(scene)
        objs_a = [o for o in scene.objects if names[o.id] == p.a]
        objs_b = [o for o in scene.objects if p.b is not None and names[o.id] == p.b]
        host = objs_b if p.attribute_on_b else objs_a
        attr = self._attribute_counts(p.attribute, host, scene)
        rel = _relation_counts(p.relation, {o.id for o in objs_a}, {o.id for o in objs_b}, scene)
        cooc_a = [st.pmi(p.a, c) for c in scene_nouns if c != p.a]
        cooc_b = [st.pmi(p.b, c) for c in scene_nouns if p.b is not None and c != p.b]
        return [
            float(p.b is not None),
            float(p.relation is not None),
            float(p.attribute is not None),
            float(p.attribute_on_b),
            _log(len(scene.objects)),
            _log(len(scene.relations)),
            _log(len(objs_a)),
            _log(len(objs_b)),
            float(bool(objs_a)),
            float(bool(objs_b)),
            _log(attr[0]),
            _log(attr[1]),
            attr[2] / len(host) if host else 0.0,
            _log(attr[3]),
            _log(attr[4]),
            *(_log(n) for n in rel[:5]),
            float(rel[5]),
            float(rel[6]),
            *self._priors(p),
            max(cooc_a, default=0.0),
            sum(cooc_a) / len(cooc_a) if cooc_a else 0.0,
            max(cooc_b, default=0.0),
            sum(cooc_b) / len(cooc_b) if cooc_b else 0.0,
            _log(st.noun.get(p.a, 0)),
            _log(st.noun.get(p.b, 0)) if p.b else 0.0,
            _log(st.attr.get(p.attribute, 0)) if p.attribute else 0.0,
            _log(st.rel.get(p.relation, 0)) if p.relation else 0.0,
            float(p.b is not None and st.pair.get(f"{p.a}|{p.b}", 0) > 0),
            *self._part_whole(p, scene_nouns),
        ]

    def _part_whole(self, p: SimpleParts, scene_nouns: Sequence[str]) -> list[float]:
        """PART_FEATURE_NAMES: what the scene's other nouns and their classes say about the
        subgraph's nouns (a person implies hair and hands, an animal legs and a neck)."""
        st = self.stats
        klass = st.noun_class
        scene_classes = [klass.get(c, "") for c in scene_nouns]

        def cond(x: str | None) -> tuple[float, float]:
            if x is None:
                return 0.0, 0.0
            by_noun = max((st.cond(x, c) for c in scene_nouns if c != x), default=0.0)
            kinds = {k for c, k in zip(scene_nouns, scene_classes, strict=True) if k and c != x}
            by_class = max((st.class_cond(x, k) for k in kinds), default=0.0)
            return by_noun, by_class

        cond_a, class_a = cond(p.a)
        cond_b, class_b = cond(p.b)
        return [
            cond_a,
            cond_b,
            class_a,
            class_b,
            float(klass.get(p.a) == "body"),
            float(p.b is not None and klass.get(p.b) == "body"),
            float("person" in scene_classes),
            float("animal" in scene_classes),
        ]

    def _attribute_counts(
        self, attr: str | None, host: Sequence[Object], scene: SceneGraph
    ) -> tuple[int, int, int, int, int]:
        """(objects with ``attr``, hosts with it, hosts with any attribute, conflicting values
        on hosts, same-category other values on hosts); zeros without an attribute."""
        if attr is None:
            return 0, 0, 0, 0, 0
        attr_any = sum(1 for o in scene.objects if attr in {_n(x) for x in o.attributes})
        host_with = host_attr_any = conflict = same_cat = 0
        scales = self._scales(attr)
        for o in host:
            values = {_n(x) for x in o.attributes}
            host_with += attr in values
            host_attr_any += bool(values)
            for v in values - {attr}:
                other = self._scales(v)
                for cat, groups in scales.items():
                    if cat in other:
                        same_cat += 1
                        if not groups & other[cat]:
                            conflict += 1
        return attr_any, host_with, host_attr_any, conflict, same_cat

    def _priors(self, p: SimpleParts) -> tuple[float, float, float, float]:
        """Log priors from the training graphs: attribute given host, relation given the pair,
        given the subject and given the object (0 when the part is absent)."""
        st = self.stats
        attr, r = p.attribute, p.relation
        host_name = p.b if p.attribute_on_b and p.b else p.a
        prior_attr = prior_pair = prior_subj = prior_obj = 0.0
        if attr is not None:
            prior_attr = math.log(
                (st.noun_attr.get(f"{host_name}|{attr}", 0) + 0.5) / (st.noun.get(host_name, 0) + 1)
            )
        if r is not None and p.b is not None:
            prior_pair = math.log(
                (st.triple.get(f"{p.a}|{r}|{p.b}", 0) + 0.5) / (st.pair.get(f"{p.a}|{p.b}", 0) + 1)
            )
            prior_subj = math.log(
                (st.subj_rel.get(f"{p.a}|{r}", 0) + 0.5) / (st.noun.get(p.a, 0) + 1)
            )
            prior_obj = math.log(
                (st.rel_obj.get(f"{r}|{p.b}", 0) + 0.5) / (st.noun.get(p.b, 0) + 1)
            )
        return prior_attr, prior_pair, prior_subj, prior_obj

    def _scales(self, attr: str) -> dict[str, set[int]]:
        return {cat: set(idx[attr]) for cat, idx in self.lexicon.scales if attr in idx}

    def rows(
        self, items: Sequence[tuple[Subgraph, SceneGraph]], field: str = "items"
    ) -> FloatArray:
        out = np.zeros((len(items), len(GRAPH_FEATURE_NAMES)), dtype=np.float32)
        nouns: dict[int, SceneNouns] = {}  # a batch often scores several parts per scene
        for i, (g, scene) in enumerate(items):
            if not isinstance(scene, SceneGraph):
                raise ModelInputError(f"{field}[{i}].scene_graph", "must be a SceneGraph")
            known = nouns.get(id(scene))
            if known is None:
                known = nouns[id(scene)] = scene_nouns_of(scene)
            out[i] = self.row(g, scene, f"{field}[{i}].subgraph", known)
        return out


def _threshold(signature: str, taus: Mapping[str, float]) -> float:
    """The threshold a candidate of ``signature`` is judged with: the largest of its changed
    node types' (rel-mods count as relations)."""
    try:
        kinds: set[str] = {p.kind for p in parse_signature(signature)}
    except SubgraphError:
        kinds = set()  # not a signature: reported below like one without a threshold
    kinds = {"relation" if k == "relmod" else k for k in kinds}
    if not kinds or kinds - set(taus):
        raise ModelInputError(
            "signature", f"no changed node type with a threshold in {signature!r}"
        )
    return max(taus[k] for k in kinds)


# -- hiding a present subgraph (evaluation and training positives) ---------------------------------


def simple_matches(
    scene: SceneGraph, g: Subgraph
) -> list[tuple[Object, Object | None, Relation | None]]:
    """Every embedding of a simple subgraph (exact names, as in the reference matcher)."""
    if not is_simple(g):
        raise ModelInputError("subgraph", f"{g.key!r} is not simple")
    a, b = g.objects[0], (g.objects[1] if len(g.objects) > 1 else None)

    def fits(obj: Object, want: Any) -> bool:
        return bool(
            obj.name == want.name and (want.attribute is None or want.attribute in obj.attributes)
        )

    out: list[tuple[Object, Object | None, Relation | None]] = []
    by_id = {o.id: o for o in scene.objects}
    for oa in scene.objects:
        if not fits(oa, a):
            continue
        if b is None:
            out.append((oa, None, None))
            continue
        rel_name = g.relations[0].name
        for rel in scene.relations:
            if rel.subject == oa.id and rel.name == rel_name:
                ob = by_id.get(rel.object)
                if ob is not None and ob.id != oa.id and fits(ob, b):
                    out.append((oa, ob, rel))
    return out


def hide(scene: SceneGraph, g: Subgraph, node_type: str, pick: int = 0) -> SceneGraph | None:
    """``scene`` with every match of ``g`` broken at a node of ``node_type`` (object /
    attribute / relation): the attribute removed from the object, the relation removed, or the
    object removed with its relations. ``None`` when ``g`` has no such node or no match."""
    matches = simple_matches(scene, g)
    if not matches:
        return None
    drop_objects: set[str] = set()
    drop_relations: set[str] = set()
    drop_attr: dict[str, str] = {}
    attr_on_b = len(g.objects) > 1 and g.objects[1].attribute is not None
    for oa, ob, rel in matches:
        if node_type == "relation":
            if rel is None:
                return None
            drop_relations.add(rel.id)
        elif node_type == "attribute":
            host, want = (ob, g.objects[1]) if attr_on_b else (oa, g.objects[0])
            if host is None or want.attribute is None:
                return None
            drop_attr[host.id] = want.attribute
        elif node_type == "object":
            target = ob if (ob is not None and pick % 2 == 1) else oa
            drop_objects.add(target.id)
        else:
            raise ModelInputError("node_type", f"cannot hide a {node_type!r} node")
    objects = []
    for obj in scene.objects:
        if obj.id in drop_objects:
            continue
        if obj.id in drop_attr:
            obj = Object(
                obj.id,
                obj.name,
                tuple(a for a in obj.attributes if a != drop_attr[obj.id]),
                obj.box,
                obj.synsets,
                obj.names,
            )
        objects.append(obj)
    relations = [
        r
        for r in scene.relations
        if r.id not in drop_relations
        and r.subject not in drop_objects
        and r.object not in drop_objects
    ]
    return SceneGraph.build(
        source=scene.source,
        original_id=scene.original_id,
        split=scene.split,
        objects=objects,
        relations=relations,
        width=scene.width,
        height=scene.height,
        extras=dict(scene.extras),
    )


# -- serving -----------------------------------------------------------------------------------


class PresenceModel:
    """``score(subgraph, scene_graph, features=None)``: probability the simple subgraph is in the
    image though maybe not annotated; ``thresholds`` are the calibrated per-type values."""

    def __init__(self, path: Path, *, threads: int = 1) -> None:
        head = OnnxHead(path, threads=threads)
        meta = head.metadata
        if meta.get("model_name") != "covr-presence":
            raise ModelResourceError(f"{path} is not a presence model")
        spec = head.json_meta("features")
        layout = FEATURE_LAYOUTS.get(spec.get("version", 0))
        if layout is None or tuple(spec.get("names", ())) != layout:
            raise ModelResourceError(f"{path}: feature layout differs from this code's; retrain")
        self.feature_count = len(layout)
        """Columns of :data:`GRAPH_FEATURE_NAMES` the file reads (35 for a version-1 file)."""
        self.path = path
        self.metadata = meta
        self.version = meta.get("version", "")
        self.thresholds: dict[str, float] = {
            k: float(v) for k, v in head.json_meta("thresholds").items()
        }
        self.image_width = dict(head.inputs)[PRESENCE_IMAGE_INPUT]
        self._head = head
        self._featurizer = PresenceFeaturizer(
            CoStats(head.json_meta("stats")), Lexicon(head.json_meta("lexicon"))
        )
        self._lock = threading.Lock()

    def score(
        self, subgraph: Subgraph, scene_graph: SceneGraph, features: Sequence[float] | None = None
    ) -> float:
        return float(self.score_batch([(subgraph, scene_graph, features)])[0])

    def score_batch(
        self, items: Sequence[tuple[Subgraph, SceneGraph, Sequence[float] | None]]
    ) -> FloatArray:
        """Scores for many ``(subgraph, scene_graph, image features or None)`` triples."""
        graph = self._featurizer.rows([(g, s) for g, s, _ in items])
        image = np.zeros((len(items), self.image_width), dtype=np.float32)
        for i, (_, _, vec) in enumerate(items):
            if vec is None:
                continue
            arr = np.asarray(vec, dtype=np.float32).reshape(-1)
            if arr.shape[0] != self.image_width or not np.all(np.isfinite(arr)):
                raise ModelInputError(
                    f"items[{i}].features",
                    f"must be {self.image_width} finite numbers, got shape {arr.shape}",
                )
            image[i] = arr
        if self.feature_count < graph.shape[1]:
            graph = np.ascontiguousarray(graph[:, : self.feature_count])
        return self.run(graph, image)

    def likely_present(
        self,
        g: Subgraph,
        scene_graph: SceneGraph,
        signature: str,
        features: Sequence[float] | None = None,
        thresholds: Mapping[str, float] | None = None,
    ) -> bool:
        """The paper's filter (App. B): ``g`` is probably in this candidate distractor when
        every simple part of ``g`` scores above the threshold of the changed node type; with
        several changed types the largest threshold applies (rel-mods count as relations)."""
        tau = _threshold(signature, dict(self.thresholds if thresholds is None else thresholds))
        parts = simple_parts(g)
        scores = self.score_batch([(p, scene_graph, features) for p in parts])
        return bool(np.all(scores > tau))

    def likely_present_many(
        self,
        g: Subgraph,
        candidates: Sequence[tuple[SceneGraph, str]],
        thresholds: Mapping[str, float] | None = None,
    ) -> list[bool | None]:
        """:meth:`likely_present` for many ``(scene graph, signature)`` candidates of one ``g``,
        in one model run with each distinct scene's rows computed once; ``None`` where the
        signature has no changed node type with a threshold (``likely_present`` raises there).
        Why: the related lookup filters a round's candidates together, and one run per
        candidate was most of the filter's cost (scores do not depend on the batch: tested)."""
        taus = dict(self.thresholds if thresholds is None else thresholds)
        limits: list[float | None] = []
        for i, (scene, signature) in enumerate(candidates):
            if not isinstance(scene, SceneGraph):  # named by candidate, not by batch row
                raise ModelInputError(f"candidates[{i}].scene_graph", "must be a SceneGraph")
            try:
                limits.append(_threshold(signature, taus))
            except ModelInputError:
                limits.append(None)
        parts = simple_parts(g)
        scenes = list({id(scene): scene for scene, _ in candidates}.values())  # first-seen order
        row_of = {id(scene): n for n, scene in enumerate(scenes)}
        flat = self.score_batch([(p, scene, None) for scene in scenes for p in parts])
        scores = flat.reshape(len(scenes), len(parts))
        return [
            None if tau is None else bool(np.all(scores[row_of[id(scene)]] > tau))
            for (scene, _), tau in zip(candidates, limits, strict=True)
        ]

    def run(self, graph: FloatArray, image: FloatArray) -> FloatArray:
        return self._head.run({PRESENCE_GRAPH_INPUT: graph, PRESENCE_IMAGE_INPUT: image})

    @property
    def featurizer(self) -> PresenceFeaturizer:
        return self._featurizer
