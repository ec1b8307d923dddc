"""An independent check of generated examples over networkx graphs built from the raw dataset
JSON (issue 16 acceptance, second line).

Written apart from the engine on purpose: it imports nothing from ``covr`` (no loader, no scene
model, no subgraph parser, no matcher, no executor). It reads the GQA ``*_sceneGraphs.json`` and
Visual Genome ``scene_graphs.json`` files itself, builds one ``networkx.MultiDiGraph`` per image
(node = object with its name and attribute set, edge = relation keyed by its name), parses the
example's subgraph key with its own small parser, finds subgraphs with networkx's
``DiGraphMatcher`` (monomorphism), and re-executes the example's program with its own
interpreter written from the operator table of docs/questions.md. The only thing shared with the
engine is data: the attribute-type resource (which value is a color, a material, ...), read as
JSON by path.

:func:`check_example` returns a list of problems (empty: the example is right): the answer
differs or the program fails; an image marked as a distractor holds ``g``; an image marked as
containing ``g`` does not; fewer distractors (images without ``g``) than one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx  # type: ignore[import-untyped]
from networkx.algorithms import isomorphism  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[2]
ATTRIBUTES_JSON = ROOT / "server" / "covr" / "related" / "resources" / "attributes.json"


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


# -- raw data ----------------------------------------------------------------------------------


def read_gqa(path: Path, prefix: str = "gqa:") -> dict[str, nx.MultiDiGraph]:
    """One graph per image of a GQA scene-graph file (``{image: {objects: {id: {...}}}}``)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    graphs: dict[str, nx.MultiDiGraph] = {}
    for image, record in raw.items():
        graph = nx.MultiDiGraph()
        for oid, obj in record["objects"].items():
            graph.add_node(
                str(oid), name=_norm(obj["name"]), attrs={_norm(a) for a in obj["attributes"]}
            )
        for oid, obj in record["objects"].items():
            for rel in obj.get("relations", []):
                if str(rel["object"]) in graph:
                    graph.add_edge(str(oid), str(rel["object"]), key=_norm(rel["name"]))
        graphs[f"{prefix}{image}"] = graph
    return graphs


def read_vg(path: Path, prefix: str = "vg:") -> dict[str, nx.MultiDiGraph]:
    """One graph per image of a Visual Genome ``scene_graphs.json`` (first name = the name)."""
    graphs: dict[str, nx.MultiDiGraph] = {}
    for record in json.loads(path.read_text(encoding="utf-8")):
        graph = nx.MultiDiGraph()
        for obj in record["objects"]:
            graph.add_node(
                str(obj["object_id"]),
                name=_norm(obj["names"][0]),
                attrs={_norm(a) for a in obj.get("attributes", [])},
            )
        for rel in record.get("relationships", []):
            s, o = str(rel["subject_id"]), str(rel["object_id"])
            if s in graph and o in graph:
                graph.add_edge(s, o, key=_norm(rel["predicate"]))
        graphs[f"{prefix}{record['image_id']}"] = graph
    return graphs


def attribute_types(path: Path = ATTRIBUTES_JSON) -> dict[str, set[str]]:
    """value -> its types (color, material, ...) from the attribute scales resource."""
    out: dict[str, set[str]] = {}
    for scale in json.loads(path.read_text(encoding="utf-8"))["scales"]:
        for group in scale["groups"]:
            for value in group:
                out.setdefault(_norm(value), set()).add(scale["category"])
    return out


# -- subgraph keys and matching ----------------------------------------------------------------


def parse_key(key: str) -> nx.DiGraph:
    """A subgraph key (``man[tall]-(wearing)->hat[red]``, ``a{-(r)->b,-(s)->c}``) as a pattern
    graph: nodes 0.. with ``name`` and ``attr`` (or None), edges with ``rel``. Rel-mods (imSitu)
    are not supported here."""
    pattern = nx.DiGraph()
    pos = 0

    def name(stops: str, *, noun: bool = False) -> str:
        nonlocal pos
        out = []
        while pos < len(key):
            c = key[pos]
            if c == "\\":
                out.append(key[pos + 1])
                pos += 2
                continue
            if c in stops or (noun and c == "-" and key.startswith("(", pos + 1)):
                break
            out.append(c)
            pos += 1
        return "".join(out)

    def node() -> int:
        nonlocal pos
        me = len(pattern)
        pattern.add_node(me, name=name("[]{}(),|:", noun=True), attr=None)
        if key.startswith("[", pos):
            pos += 1
            pattern.nodes[me]["attr"] = name("]")
            pos += 1
        if key.startswith("-(", pos):
            edge(me)
        elif key.startswith("{", pos):
            pos += 1
            edge(me)
            while key.startswith(",", pos):
                pos += 1
                edge(me)
            pos += 1  # "}"
        return me

    def edge(subject: int) -> None:
        nonlocal pos
        pos += 2  # "-("
        rel = name(")|")
        if key.startswith("|", pos):
            raise ValueError(f"rel-mods are not supported: {key!r}")
        pos += 3  # ")->"
        target = node()
        pattern.add_edge(subject, target, rel=rel)

    node()
    if pos != len(key):
        raise ValueError(f"trailing text at {pos} in {key!r}")
    return pattern


def contains(image: nx.MultiDiGraph, pattern: nx.DiGraph) -> bool:
    """Whether the image holds the pattern: distinct objects with the names (and attributes),
    linked by the relations (other objects and relations may be there too)."""
    target = nx.DiGraph()
    for n, data in image.nodes(data=True):
        target.add_node(n, **data)
    for s, o, rel in image.edges(keys=True):
        if target.has_edge(s, o):
            target.edges[s, o]["rels"].add(rel)
        else:
            target.add_edge(s, o, rels={rel})

    def node_match(t: Mapping[str, Any], p: Mapping[str, Any]) -> bool:
        return bool(t["name"] == p["name"] and (p["attr"] is None or p["attr"] in t["attrs"]))

    def edge_match(t: Mapping[str, Any], p: Mapping[str, Any]) -> bool:
        return p["rel"] in t["rels"]

    matcher = isomorphism.DiGraphMatcher(
        target, pattern, node_match=node_match, edge_match=edge_match
    )
    return bool(matcher.subgraph_is_monomorphic())


# -- the interpreter ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Failed:
    """The program cannot be answered over these images (the engine would not emit it)."""

    why: str


class _Stop(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


Obj = tuple[str, str]  # (image, object id)


@dataclass
class World:
    """The example's images as one networkx graph with (image, object) nodes."""

    images: list[str]
    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    types: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, graphs: Mapping[str, nx.MultiDiGraph], images: list[str], types: dict[str, set[str]]
    ) -> World:
        world = cls(list(images), nx.MultiDiGraph(), types)
        for image in images:
            relabel = {n: (image, n) for n in graphs[image].nodes}
            world.graph = nx.union(world.graph, nx.relabel_nodes(graphs[image], relabel))
        return world

    def name(self, o: Obj) -> str:
        return str(self.graph.nodes[o]["name"])

    def attrs(self, o: Obj) -> set[str]:
        return set(self.graph.nodes[o]["attrs"])

    def rels(self, s: Obj, o: Obj) -> set[str]:
        data = self.graph.get_edge_data(s, o) or {}
        return set(data)

    def values(self, o: Obj, kind: str) -> set[str]:
        return {a for a in self.attrs(o) if kind in self.types.get(a, set())}


def _one(objs: Any) -> Obj:
    if isinstance(objs, tuple):
        return (str(objs[0]), str(objs[1]))
    if not objs:
        raise _Stop("nothing found")
    if len(objs) > 1:
        raise _Stop("no unique referent")
    image, oid = next(iter(objs))
    return (str(image), str(oid))


def _single_value(world: World, o: Obj, kind: str) -> str:
    values = world.values(o, kind)
    if len(values) != 1:
        raise _Stop(f"{len(values)} values of {kind}")
    return next(iter(values))


def _pick_one(options: list[str], holds: set[str]) -> str:
    held = [x for x in options if x in holds]
    if len(held) != 1:
        raise _Stop("neither option (or both)")
    return held[0]


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "eq":
        return bool(a == b)
    table = {"gt": a > b, "lt": a < b, "geq": a >= b, "leq": a <= b}
    return bool(table[op])


def _objects(x: Any) -> frozenset[Obj]:
    return frozenset([x]) if isinstance(x, tuple) else frozenset(x)


def run(program: list[dict[str, Any]], world: World, item: Obj | None = None) -> Any:
    """The program's answer over ``world`` (``item``: the object of a nested program's -1)."""
    out: list[Any] = []
    for step in program:
        op, args = step["operation"], list(step["arguments"])
        deps = [item if d == -1 else out[d] for d in step["dependencies"]]
        out.append(_step(op, deps, args, world))
    return out[-1]


def _step(op: str, deps: list[Any], args: list[Any], world: World) -> Any:
    g = world.graph
    if op == "find":
        return frozenset(n for n in g.nodes if world.name(n) == args[0])
    if op == "filter":
        return frozenset(o for o in _objects(deps[0]) if args[0] in world.attrs(o))
    if op == "with_relation":
        if len(args) != 1:
            raise _Stop("rel-mods are not supported")
        targets = _objects(deps[1])
        return frozenset(
            s for s in _objects(deps[0]) if any(args[0] in world.rels(s, o) for o in targets)
        )
    if op == "with_relation_object":
        subjects = _objects(deps[0])
        found = {o for s in subjects for o in g.successors(s) if args[0] in world.rels(s, o)}
        return frozenset(found & _objects(deps[1])) if len(deps) > 1 else frozenset(found)
    if op == "unique":
        return _one(deps[0])
    if op == "assert_unique":
        return frozenset([_one(deps[0])])
    if op == "exists":
        return bool(_objects(deps[0]))
    if op == "count":
        x = deps[0]
        return len(x) if not isinstance(x, tuple) else 1
    if op == "unique_images":
        return frozenset(o[0] for o in _objects(deps[0]))
    if op == "group_by_images":
        groups: dict[str, set[Obj]] = {}
        for o in _objects(deps[0]):
            groups.setdefault(o[0], set()).add(o)
        return groups
    if op.startswith("keep_if_values_count_"):
        # every image of the question is judged; one without a match is an empty group
        rel = op.rsplit("_", 1)[1]
        return {
            image: deps[0].get(image, set())
            for image in world.images
            if _compare(rel, len(deps[0].get(image, set())), args[0])
        }
    if op == "keys":
        return frozenset(deps[0])
    if op == "query_name":
        return world.name(_one(deps[0]))
    if op == "query_attr":
        return _single_value(world, _one(deps[0]), args[0])
    if op == "verify_attr":
        return args[0] in world.attrs(_one(deps[0]))
    if op == "choose_attr":
        return _pick_one(args, world.attrs(_one(deps[0])))
    if op == "choose_name":
        return _pick_one(args, {world.name(o) for o in _objects(deps[0])})
    if op == "choose_relation":
        s = _one(deps[0])
        return _pick_one(args, {r for o in _objects(deps[1]) for r in world.rels(s, o)})
    if op == "relation_between_nouns":
        s = _one(deps[0])
        rels = {r for o in _objects(deps[1]) for r in world.rels(s, o)}
        if len(rels) != 1:
            raise _Stop("not one relation")
        return next(iter(rels))
    if op in ("all", "some", "none"):
        items = _objects(deps[0])
        if not items:
            raise _Stop("nothing found")
        held = [bool(run(args[0], world, o)) for o in sorted(items)]
        return all(held) if op == "all" else any(held) if op == "some" else not any(held)
    if op == "all_same":
        items = _objects(deps[0])
        if len(items) < 2:
            raise _Stop("fewer than two objects")
        return len({_single_value(world, o, args[0]) for o in items}) == 1
    if op == "same_attr":
        o = _one(deps[0])
        value = _single_value(world, o, args[0])
        return frozenset(
            x for x in g.nodes if x[0] == o[0] and x != o and world.values(x, args[0]) == {value}
        )
    if op == "logic_and":
        return bool(deps[0] and deps[1])
    if op == "logic_or":
        return bool(deps[0] or deps[1])
    if op in ("eq", "gt", "lt", "geq", "leq"):
        b = deps[1] if len(deps) > 1 else args[0]
        return _compare(op, deps[0], b)
    raise ValueError(f"unknown operation {op!r}")


def execute(program: list[dict[str, Any]], world: World) -> Any:
    """The answer, or :class:`Failed` when the program cannot be answered."""
    try:
        return run(program, world)
    except _Stop as stop:
        return Failed(stop.why)


# -- examples ----------------------------------------------------------------------------------


def check_example(
    example: Mapping[str, Any],
    graphs: Mapping[str, nx.MultiDiGraph],
    types: dict[str, set[str]],
) -> list[str]:
    """Problems of one example (empty list: the answer re-executes to the same value, every
    distractor lacks ``g``, every image marked as containing ``g`` holds it, at least one
    image lacks ``g``)."""
    qid = example.get("qid", "?")
    problems = []
    images = list(example["scenes"])
    missing = [i for i in images if i not in graphs]
    if missing:
        return [f"{qid}: images not in the raw data: {missing}"]
    answer = execute(example["program"], World.of(graphs, images, types))
    if isinstance(answer, Failed) or answer != example["answer"]:
        problems.append(f"{qid}: answer {example['answer']!r}, re-executed {answer!r}")
    pattern = parse_key(example["subgraphs"]["g"])
    lacking = 0
    for image in images:
        has = contains(graphs[image], pattern)
        lacking += not has
        marked = example["signatures"].get(image)
        if marked and has:
            problems.append(f"{qid}: distractor {image} holds {example['subgraphs']['g']!r}")
        if marked == [] and not has:
            problems.append(f"{qid}: {image} is marked as holding g but does not")
    if lacking < 1:
        problems.append(f"{qid}: no image without g (no distractor)")
    return problems


def check_all(
    examples: Iterable[Mapping[str, Any]], graphs: Mapping[str, nx.MultiDiGraph]
) -> list[str]:
    """Problems of every example (see :func:`check_example`)."""
    types = attribute_types()
    return [p for e in examples for p in check_example(e, graphs, types)]
