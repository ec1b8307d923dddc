"""Builders of the related-image match queries, assembled from ``cypher/match/_related`` fragments.

A subgraph's shape decides the query's shape, so the text cannot be one static file: the builder
walks ``g`` in canonical order (every object after the relation or rel-mod leading to it, as the
reference matcher does) and glues fragments together. Only identifiers the builder makes itself
(``o0``, ``r1``, ``m2``, ``c3``) and properties from a fixed allowlist ever enter the text;
every name is a ``$parameter``. The builders are pure functions returning ``(query, params)``;
golden-text tests pin their output for every shape.

**A text depends on the shape only.** Neo4j plans every new statement text (tens to hundreds of
milliseconds on a warm JVM, seconds on a cold one) and keeps the plan in a cache keyed by the
text; FalkorDB does the same, faster. So the text is a function of the :class:`Skeleton` (how
many objects, which have an attribute, how relations and rel-mods connect them), the builder
kind, the anchor of a direct branch and whether it has a split, and nothing else: not the names,
not the lists, not the rule each position got. Every position is the same three-parameter
condition (:data:`MEMBERSHIP`): ``name IN $in OR ($open AND NOT name IN $out)``, so an equality,
an allow-list, a deny-list and "anything" differ only in the parameter values. Only the anchor of
a direct branch keeps ``name = $p``: the planner seeks it in the name index.

One *branch* matches ``g``'s shape inside a batch of candidate images (``UNWIND $ids``) with one
:class:`Rule` per position, and returns per image the distinct *readings* of the positions its
caller reads (the names, or attribute lists, found there; :func:`read_order`). A *round* of a lookup
joins one branch per edit signature with ``UNION ALL`` on FalkorDB (Neo4j runs each branch as its
own cached statement). The rules are prefilters: the lookup re-checks every returned row with the
exclusivity model in Python, so a rule only has to let through a superset of the true matches.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from covr.graph.catalog import IDENTIFIER
from covr.graph.catalog import BuilderError as BuilderError
from covr.graph.catalog import fragment as fragment
from covr.graph.catalog import render as render
from covr.scene.edits import Position, name_at, parse_position, positions
from covr.scene.subgraph import Subgraph

RuleOp = Literal["eq", "ne", "in", "not_in", "ne_not_in", "eq_or_in", "any"]
"""How one position is constrained: equal to ``value``; different from it; in ``values``; not in
``values``; different from ``value`` and not in ``values``; anything (for attributes: the object
has at least one attribute)."""


@dataclass(frozen=True)
class Rule:
    """The constraint on one position of a branch (see :data:`RuleOp`)."""

    op: RuleOp
    value: str | None = None
    values: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        needs_value = self.op in ("eq", "ne", "ne_not_in", "eq_or_in")
        if needs_value != (self.value is not None):
            raise BuilderError(f"rule {self.op!r} {'needs' if needs_value else 'takes no'} value")
        if self.op in ("eq", "ne", "any") and self.values:
            raise BuilderError(f"rule {self.op!r} takes no list")


@dataclass(frozen=True)
class Branch:
    """One ``UNION ALL`` branch: ``g``'s shape with a rule per position over a batch of images."""

    g: Subgraph
    rules: Mapping[str, Rule]
    image_ids: Sequence[str]
    tag: int
    reads: Collection[str] | None = None
    """The positions whose names the caller reads from the rows (None: every position of
    ``g``); the others come back as nulls (:func:`_read_params`)."""


# -- rules -------------------------------------------------------------------------------------


def exact_rules(g: Subgraph) -> dict[str, Rule]:
    """Every position equal to ``g``'s name: the positives' rules."""
    return {p: Rule("eq", name_at(g, p)) for p in positions(g)}


Membership = tuple[list[str], bool, list[str]]
"""The parameters of one position's condition: the names let in whatever ``open`` says
(``$…_in``), whether any other name passes too (``$…_open``), and the names kept out of that
open door (``$…_out``)."""


NEVER = ""
"""A name no store holds (``covr.scene.model.validate`` refuses empty names and attributes).
It fills list parameters that would be empty and the original attribute of an object that has
none: Neo4j keys its plan cache by the text *and the parameters' types*, and an empty list is a
``LIST<ANY>`` where a list of names is a ``LIST<STRING>``, so an empty list is another plan."""


def _value(rule: Rule) -> str:
    if rule.value is None:  # Rule.__post_init__ makes this unreachable for the ops using it
        raise BuilderError(f"rule {rule.op!r} needs a value")
    return rule.value


MEMBERSHIP: dict[RuleOp, Callable[[Rule], Membership]] = {
    "eq": lambda r: ([_value(r)], False, []),
    "ne": lambda r: ([], True, [_value(r)]),
    "in": lambda r: (list(r.values), False, []),
    "not_in": lambda r: ([], True, list(r.values)),
    "ne_not_in": lambda r: ([], True, [_value(r), *r.values]),
    "eq_or_in": lambda r: ([_value(r), *r.values], False, []),
    "any": lambda r: ([], True, []),
}
"""The operator table: every rule op as values of the one condition text ``name IN $in OR
($open AND NOT name IN $out)`` (for an attribute: some attribute of the object passes it; with
``any`` that is "the object has an attribute"). The op is data (it depends on which of the
exclusive and non-exclusive lists is shorter), so it must not pick the text: it picks values."""


# -- the skeleton: what of a subgraph a text may depend on ---------------------------------------


@dataclass(frozen=True)
class Skeleton:
    """``g`` without its names: the number of objects, the (subject, object) of every relation
    and the (relation, object) of every rel-mod, indexed as in ``g``.

    Not even which objects carry an attribute: every object gets an attribute condition, and an
    object without one in ``g`` lets everything through by a parameter (``$a<i>_free``). The
    order of sibling branches in ``g`` is set by their names (a V-shape's two relations, a
    frame's rel-mods); with attributes out of the skeleton, siblings are alike whatever their
    order, so the names cannot pick the text through it either.
    """

    objects: int
    relations: tuple[tuple[int, int], ...]
    relmods: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, g: Subgraph) -> Skeleton:
        return cls(
            len(g.objects),
            tuple((r.subject, r.object) for r in g.relations),
            tuple((m.relation, m.object) for m in g.relmods),
        )

    def incoming(self) -> dict[int, str]:
        """Per non-root object, the node (``r<j>`` or ``m<k>``) whose ``OBJ`` edge reaches it."""
        out = {target: f"r{j}" for j, (_, target) in enumerate(self.relations)}
        out.update({target: f"m{k}" for k, (_, target) in enumerate(self.relmods)})
        return out

    def adjacency(self) -> dict[str, list[tuple[str, str, str]]]:
        """The subgraph as a node graph: ``node -> [(neighbour, edge type, direction)]``."""
        adjacent: dict[str, list[tuple[str, str, str]]] = {f"o{i}": [] for i in range(self.objects)}

        def link(a: str, edge: str, b: str) -> None:
            adjacent.setdefault(a, []).append((b, edge, "out"))
            adjacent.setdefault(b, []).append((a, edge, "in"))

        for j, (subject, target) in enumerate(self.relations):
            link(f"o{subject}", "SUBJ", f"r{j}")
            link(f"r{j}", "OBJ", f"o{target}")
        for k, (relation, target) in enumerate(self.relmods):
            link(f"r{relation}", "MOD", f"m{k}")
            link(f"m{k}", "OBJ", f"o{target}")
        return adjacent


_POSITION_OF = {"o": "object", "r": "relation", "m": "relmod"}
_LETTER_OF = {kind: letter for letter, kind in _POSITION_OF.items()}
_LABEL_OF = {"o": "Object", "r": "Relation", "m": "RelMod"}
# Parameter letters of every position kind (relation and relmod both start with "r").
_PARAM_LETTER = {"object": "o", "attribute": "a", "relation": "r", "relmod": "m"}


def _node_positions(node: str) -> list[tuple[str, str]]:
    """The positions a node variable holds, as (position, parameter stem): its name, and for an
    object its attribute (a position of ``g`` or not: see :class:`Skeleton`)."""
    letter, number = node[0], int(node[1:])
    out = [(f"{_POSITION_OF[letter]}@{number}", node)]
    if letter == "o":
        out.append((f"attribute@{number}", f"a{number}"))
    return out


def _check_rules(g: Subgraph, rules: Mapping[str, Rule]) -> None:
    if set(rules) != set(positions(g)):
        raise BuilderError(f"rules must cover exactly the positions of {g.key}")


def _membership_params(
    g: Subgraph, rules: Mapping[str, Rule], prefix: str, skip: str | None = None
) -> dict[str, Any]:
    """``$<prefix>_<stem>_in/_open/_out`` of every position but ``skip`` (see :data:`MEMBERSHIP`),
    and ``$<prefix>_a<i>_free`` of every object: True when ``g``'s object has no attribute (its
    attribute condition then passes whatever the object has)."""
    params: dict[str, Any] = {}
    for pos in positions(g):
        if pos == skip:
            continue
        rule = rules[pos]
        included, is_open, excluded = MEMBERSHIP[rule.op](rule)
        stem = f"{prefix}_{_PARAM_LETTER[pos.kind]}{pos.number}"
        params[f"{stem}_in"] = included or [NEVER]
        params[f"{stem}_open"] = is_open
        params[f"{stem}_out"] = excluded or [NEVER]
    for i, obj in enumerate(g.objects):
        params[f"{prefix}_a{i}_free"] = obj.attribute is None
        if obj.attribute is None:  # the parameters of a real position, with the same types
            params.update({f"{prefix}_a{i}_in": [NEVER], f"{prefix}_a{i}_open": False})
            params[f"{prefix}_a{i}_out"] = [NEVER]
    return params


def _original_params(g: Subgraph, prefix: str, skip: str | None = None) -> dict[str, Any]:
    """``$<prefix>_eq_<stem>``: ``g``'s name at every position but ``skip`` (edit counting);
    :data:`NEVER` for an object without attribute (``$<prefix>_a<i>_free`` says it never
    differs)."""
    params: dict[str, Any] = {
        f"{prefix}_eq_{_PARAM_LETTER[pos.kind]}{pos.number}": name_at(g, pos)
        for pos in positions(g)
        if pos != skip and pos.kind != "attribute"
    }
    for i, obj in enumerate(g.objects):
        params[f"{prefix}_eq_a{i}"] = NEVER if obj.attribute is None else obj.attribute
    return params


def _read_params(g: Subgraph, prefix: str, reads: Collection[str] | None) -> dict[str, bool]:
    """``$<prefix>_<stem>_read``: whether the rows carry the name (or, for ``a<i>``, the
    attribute list) of every node of ``g``'s skeleton.

    Why: a per-signature row is read only at its signature's positions, a positive's row not
    at all, and no caller reads the attributes of an object that has none in ``g``. With the
    rest as nulls, the embeddings that agree on what is read collapse into one reading
    (``collect(DISTINCT …)``, :func:`_return_readings`): when rows were still one per reading,
    this cut the per-signature statements' share of a question by a fifth to a quarter at
    0.01x and 1x (docs/scale.md), with the same output."""
    wanted = set(positions(g)) if reads is None else set(reads)
    params: dict[str, bool] = {}
    for pos in (*positions(g), *(f"attribute@{i}" for i in range(len(g.objects)))):
        kind, index = parse_position(pos)
        params[f"{prefix}_{_PARAM_LETTER[kind]}{index}_read"] = pos in wanted
    return params


def read_order(g: Subgraph, reads: Collection[str] | None) -> tuple[Position, ...]:
    """The positions an image-walk branch's readings hold, in their order (objects, attributes,
    relations, rel-mods; each by index): the positions of ``g`` that ``reads`` names (None:
    all of them), as :func:`_read_params` flags them."""
    wanted = None if reads is None else set(reads)
    return tuple(p for p in positions(g) if wanted is None or p in wanted)


# -- text pieces -------------------------------------------------------------------------------


def _membership(var: str, stem: str, attribute: bool) -> str:
    """The one condition of a position (name, or some attribute of ``var``)."""
    slots = {"v": var, "inc": f"{stem}_in", "open": f"{stem}_open", "exc": f"{stem}_out"}
    if attribute:
        return render("attribute_open", free=f"{stem}_free", **slots)
    return render("name_open", **slots)


def _node_conditions(
    node: str, prefix: str, bound_objects: Sequence[str], anchor: bool = False
) -> list[str]:
    """The WHERE conditions of one node: its positions, and for an object that it is none of the
    objects bound before it. An anchor's name is an equality (the planner seeks it)."""
    out = []
    for pos, stem in _node_positions(node):
        if anchor and not pos.startswith("attribute"):
            out.append(render("name_eq", v=node, p=f"{prefix}_{stem}"))
        else:
            out.append(_membership(node, f"{prefix}_{stem}", pos.startswith("attribute")))
    if node.startswith("o"):
        out += [render("distinct", a=node, b=other) for other in bound_objects]
    return out


def _changes(node: str, prefix: str, skip: str | None = None) -> list[str]:
    """Per position of the node (but ``skip``): 1 when it differs from ``g``'s name, else 0."""
    out = []
    for pos, stem in _node_positions(node):
        if pos == skip:
            continue
        param = f"{prefix}_eq_{stem}"
        if pos.startswith("attribute"):
            out.append(render("change_attribute", p=param, v=node, free=f"{prefix}_{stem}_free"))
        else:
            out.append(render("change_name", p=param, v=node))
    return out


def _clause(head: str, conditions: list[str]) -> str:
    lines = [head]
    for i, condition in enumerate(conditions):
        lines.append(render("where" if i == 0 else "and", condition=condition))
    return "\n".join(lines)


class _Counter:
    """The running edit count of a counting walk: ``WITH …, c<n-1> + <changes> AS c<n>`` then
    ``WHERE c<n> <= $<prefix>_max`` (embeddings with too many edits are dropped early)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.counters: list[str] = []

    def carried(self) -> list[str]:
        return self.counters[-1:]

    def clauses(self, bound: list[str], changes: list[str]) -> list[str]:
        """The boundary after a step; a plain ``WITH`` when the step changes nothing."""
        carried = self.carried()
        if not changes:
            return [render("with", bound=", ".join(bound + carried))]
        c = f"c{len(self.counters)}"
        self.counters.append(c)
        return [
            render(
                "with_count",
                bound=", ".join(bound + carried),
                total=" + ".join(carried + changes),
                c=c,
            ),
            render("where", condition=render("at_most", c=c, p=f"{self.prefix}_max")),
        ]


def _return_readings(skeleton: Skeleton, prefix: str) -> str:
    """The RETURN of an image-walk branch: one row per image, holding its distinct *readings*
    (the values at the positions the caller reads, :func:`read_order`).

    Why: a branch matches every embedding of ``g`` in an image, and one row per embedding
    (about 10 per image and signature on the 100-image sample: a changed object may be any
    object of the image) made parsing the reply the largest part of the client's CPU (~20 %);
    grouped, the rows of 30 source images fell from 77,485 to 7,601 and the reply's client
    time from 2.1 to 0.6 s, with the same distinct readings."""
    objects = range(skeleton.objects)
    items = [
        render("property_read", v=f"o{n}", prop="name", read=f"{prefix}_o{n}_read") for n in objects
    ]
    items += [render("attributes_read", v=f"o{n}", read=f"{prefix}_a{n}_read") for n in objects]
    items += [
        render("property_read", v=f"{var}{n}", prop="name", read=f"{prefix}_{var}{n}_read")
        for var, count in (("r", len(skeleton.relations)), ("m", len(skeleton.relmods)))
        for n in range(count)
    ]
    return render("return_readings", tag=f"{prefix}_tag", items=", ".join(items))


# -- image-first branches: per signature, and combined --------------------------------------------


@lru_cache(maxsize=1024)
def image_walk_text(skeleton: Skeleton, prefix: str, counting: bool) -> str:
    """``g``'s shape inside a batch of images (``UNWIND $<prefix>_ids``), in canonical order.

    Each MATCH is followed by a ``WITH`` (a planning boundary: FalkorDB would otherwise anchor on
    another name index, measured); when ``counting``, that ``WITH`` also sums the edits so far.
    """
    if not IDENTIFIER.match(prefix):
        raise BuilderError(f"bad prefix {prefix!r}")
    counter = _Counter(prefix)
    clauses = [
        render("images", ids=f"{prefix}_ids"),
        render("with", bound="i"),
        _clause(render("root", o="o0"), _node_conditions("o0", prefix, [])),
    ]
    bound = ["i", "o0"]
    if counting:
        clauses += counter.clauses(bound, _changes("o0", prefix))
    incoming = skeleton.incoming()
    for i in range(1, skeleton.objects):
        if not counting:
            clauses.append(render("with", bound=", ".join(bound)))
        edge, target = incoming[i], f"o{i}"
        if edge.startswith("r"):
            subject = skeleton.relations[int(edge[1:])][0]
            head = render("relation", r=edge, s=f"o{subject}", t=target)
        else:
            relation = skeleton.relmods[int(edge[1:])][0]
            head = render("relmod", m=edge, r=f"r{relation}", t=target)
        conditions = _node_conditions(edge, prefix, [])
        conditions += _node_conditions(target, prefix, [f"o{k}" for k in range(i)])
        clauses.append(_clause(head, conditions))
        bound += [edge, target]
        if counting:
            changes = _changes(edge, prefix) + _changes(target, prefix)
            clauses += counter.clauses(bound, changes)
    clauses.append(_return_readings(skeleton, prefix))
    return "\n".join(clauses)


def branch_text(
    g: Subgraph, rules: Mapping[str, Rule], prefix: str, reads: Collection[str] | None = None
) -> tuple[str, dict[str, Any]]:
    """One branch (without its ``$<prefix>_ids`` / ``$<prefix>_tag`` values): the text from
    ``g``'s skeleton (cached), the rules as membership parameters, the positions read."""
    _check_rules(g, rules)
    text = image_walk_text(Skeleton.of(g), prefix, False)
    return text, {**_membership_params(g, rules, prefix), **_read_params(g, prefix, reads)}


def match_query(
    g: Subgraph, rules: Mapping[str, Rule], image_ids: Sequence[str], tag: int = 0
) -> tuple[str, dict[str, Any]]:
    """One branch as a complete query: ``g``'s shape under ``rules`` in the given images."""
    return union_query([Branch(g, rules, image_ids, tag)])


def union_query(branches: Sequence[Branch]) -> tuple[str, dict[str, Any]]:
    """Branches joined with ``UNION ALL``; branch ``n`` uses parameters ``$b<n>_*``."""
    if not branches:
        raise BuilderError("a query needs at least one branch")
    texts: list[str] = []
    params: dict[str, Any] = {}
    for n, branch in enumerate(branches):
        prefix = f"b{n}"
        text, own = branch_text(branch.g, branch.rules, prefix, branch.reads)
        texts.append(text)
        params.update(own)
        params[f"{prefix}_ids"] = list(branch.image_ids)
        params[f"{prefix}_tag"] = branch.tag
    return f"\n{render('union')}\n".join(texts), params


@dataclass(frozen=True)
class CombinedBranch:
    """All edit signatures at once: every position holds ``g``'s name or passes its rule, and at
    most ``max_changes`` positions differ from ``g`` (counted as the match grows, so that
    embeddings with too many edits are dropped early). Rows carry the names found, as branches
    do; the caller sorts each embedding into its signature (or a positive: no change)."""

    g: Subgraph
    rules: Mapping[str, Rule]
    max_changes: int
    image_ids: Sequence[str]


def combined_query(branch: CombinedBranch) -> tuple[str, dict[str, Any]]:
    """One combined branch as a complete query (parameters ``$c_*``)."""
    g, prefix = branch.g, "c"
    _check_rules(g, branch.rules)
    params = _membership_params(g, branch.rules, prefix)
    params.update(_original_params(g, prefix))
    params.update(_read_params(g, prefix, None))
    params.update({f"{prefix}_max": branch.max_changes, f"{prefix}_tag": 0})
    params[f"{prefix}_ids"] = list(branch.image_ids)
    return image_walk_text(Skeleton.of(g), prefix, True), params


# -- index-started (direct) branches -----------------------------------------------------------


@dataclass(frozen=True)
class AnchoredBranch:
    """A direct branch: ``g``'s shape under ``rules``, started from the index of ``anchor``'s name.

    It returns the distinct images that match (an exact candidate pool), not the names.
    """

    g: Subgraph
    rules: Mapping[str, Rule]
    anchor: str
    split: str | None
    tag: int
    max_changes: int | None = None
    """None: return the distinct images. A number: count the positions that differ from ``g``
    as the walk grows, drop embeddings with more, and return the names found (as
    :class:`CombinedBranch` rows), so that one branch serves every edit signature that keeps
    the anchor (their shared walk from the anchor is done once)."""


@lru_cache(maxsize=1024)
def anchored_walk_text(
    skeleton: Skeleton, anchor: str, prefix: str, split: bool, counting: bool
) -> str:
    """One direct branch: walk outward from the anchor node (``o<i>``, ``r<j>`` or ``m<k>``),
    breadth first, one edge per MATCH, each step followed by ``WITH`` so that FalkorDB keeps the
    order (it otherwise starts from whichever name index it likes); the image comes last."""
    if not IDENTIFIER.match(prefix):
        raise BuilderError(f"bad prefix {prefix!r}")
    anchor_position = f"{_POSITION_OF[anchor[0]]}@{int(anchor[1:])}"
    adjacent = skeleton.adjacency()
    counter = _Counter(prefix)

    def boundary(node: str, bound: list[str]) -> list[str]:
        if not counting:
            return [render("with", bound=", ".join(bound))]
        return counter.clauses(bound, _changes(node, prefix, skip=anchor_position))

    objects = [anchor] if anchor.startswith("o") else []
    head = render("anchor", v=anchor, label=_LABEL_OF[anchor[0]])
    clauses = [_clause(head, _node_conditions(anchor, prefix, [], anchor=True))]
    bound, queue, last = [anchor], [anchor], anchor
    while queue:
        node = queue.pop(0)
        for other, edge, direction in adjacent[node]:
            if other in bound:
                continue
            clauses += boundary(last, list(bound))
            name = "hop_out" if direction == "out" else "hop_in"
            head = render(name, a=node, b=other, type=edge, label=_LABEL_OF[other[0]])
            clauses.append(_clause(head, _node_conditions(other, prefix, objects)))
            bound.append(other)
            last = other
            if other.startswith("o"):
                objects.append(other)
            queue.append(other)
    clauses += boundary(last, list(bound))
    conditions = [render("split", p=f"{prefix}_split")] if split else []
    clauses.append(_clause(render("image_of", o="o0"), conditions))
    if counting:
        clauses.append(_return_readings(skeleton, prefix))
    else:
        clauses.append(render("return_ids", tag=f"{prefix}_tag"))
    return "\n".join(clauses)


def anchored_branch_text(branch: AnchoredBranch, prefix: str) -> tuple[str, dict[str, Any]]:
    """One direct branch: the text from the skeleton, the anchor and whether it has a split and
    counts (cached); the anchor's name, the other positions' rules, ``g``'s names (counting), the
    split and the tag as parameters."""
    g, anchor = branch.g, branch.anchor
    _check_rules(g, branch.rules)
    kind, index = parse_position(anchor)
    if kind == "attribute" or branch.rules[anchor].op != "eq":
        raise BuilderError("the anchor must be a fixed object, relation or rel-mod name")
    node = f"{_LETTER_OF[kind]}{index}"
    counting = branch.max_changes is not None
    params = _membership_params(g, branch.rules, prefix, skip=anchor)
    params[f"{prefix}_{node}"] = _value(branch.rules[anchor])
    if counting:
        params.update(_original_params(g, prefix, skip=anchor))
        params.update(_read_params(g, prefix, None))
        params[f"{prefix}_max"] = branch.max_changes
    if branch.split is not None:
        params[f"{prefix}_split"] = branch.split
    params[f"{prefix}_tag"] = branch.tag
    skeleton = Skeleton.of(g)
    text = anchored_walk_text(skeleton, node, prefix, branch.split is not None, counting)
    return text, params


def anchored_query(branches: Sequence[AnchoredBranch]) -> tuple[str, dict[str, Any]]:
    """Direct branches joined with ``UNION ALL`` (parameters ``$d<n>_*``)."""
    if not branches:
        raise BuilderError("a query needs at least one branch")
    texts: list[str] = []
    params: dict[str, Any] = {}
    for n, branch in enumerate(branches):
        text, own = anchored_branch_text(branch, f"d{n}")
        texts.append(text)
        params.update(own)
    return f"\n{render('union')}\n".join(texts), params
