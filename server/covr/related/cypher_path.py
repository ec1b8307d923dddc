"""Builders of the related-image match queries, assembled from ``cypher/match/_related`` fragments.

A subgraph's shape decides the query's shape, so the text cannot be one static file: the builder
walks ``g`` in canonical order (every object after the relation or rel-mod leading to it, as the
reference matcher does) and glues fragments together. Only identifiers the builder makes itself
(``o0``, ``r1``, ``m2``, ``b3_o0``) and properties from a fixed allowlist ever enter the text;
every name is a ``$parameter``. The builders are pure functions returning ``(query, params)``;
golden-text tests pin their output for every shape.

One *branch* matches ``g``'s shape inside a batch of candidate images (``UNWIND $ids``) with one
:class:`Rule` per position, and returns the names found at every position. A *round* of a lookup
joins one branch per edit signature with ``UNION ALL`` so that all signatures cost one round trip.
The rules are prefilters: the lookup re-checks every returned row with the exclusivity model in
Python, so a rule only has to let through a superset of the true matches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Literal

from covr.scene.edits import name_at, parse_position, positions
from covr.scene.subgraph import Subgraph

RuleOp = Literal["eq", "ne", "in", "not_in", "ne_not_in", "eq_or_in", "any"]
"""How one position is constrained: equal to ``value``; different from it; in ``values``; not in
``values``; different from ``value`` and not in ``values``; anything (for attributes: the object
has at least one attribute)."""

_FRAGMENTS = ("match", "_related")
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_COMPOSITE = frozenset(
    {"condition", "names", "attributes", "relation_names", "relmod_names", "bound", "total"}
)
_PROPERTIES = frozenset({"name", "attributes"})
_LABELS = frozenset({"Object", "Relation", "RelMod"})
_TYPES = frozenset({"SUBJ", "OBJ", "MOD"})


class BuilderError(ValueError):
    """A builder was asked for something it cannot express (a programming error, not user input)."""


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


@cache
def fragment(name: str) -> str:
    """The text of ``cypher/match/_related/<name>.cypher`` without its header comments."""
    if not _IDENTIFIER.match(name):
        raise BuilderError(f"bad fragment name {name!r}")
    path = resources.files("covr_cypher").joinpath(*_FRAGMENTS, f"{name}.cypher")
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BuilderError(f"no fragment cypher/match/_related/{name}.cypher") from None
    lines = [line.rstrip() for line in raw.splitlines() if not line.lstrip().startswith("//")]
    text = "\n".join(lines).strip("\n")
    if not text.strip():
        raise BuilderError(f"fragment {name} is empty")
    return text


def render(name: str, **values: str) -> str:
    """Fill a fragment's placeholders; identifiers are checked, composite parts are built text."""
    text = fragment(name)
    wanted = set(_PLACEHOLDER.findall(text))
    if wanted != set(values):
        raise BuilderError(f"fragment {name} needs {sorted(wanted)}, got {sorted(values)}")
    for key, value in values.items():
        if (key == "label" and value in _LABELS) or (key == "type" and value in _TYPES):
            continue
        if key not in _COMPOSITE and not _IDENTIFIER.match(value):
            raise BuilderError(f"fragment {name}: {key}={value!r} is not an identifier")
        if key == "prop" and value not in _PROPERTIES:
            raise BuilderError(f"fragment {name}: property {value!r} is not allowed")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


# -- rules -------------------------------------------------------------------------------------


def exact_rules(g: Subgraph) -> dict[str, Rule]:
    """Every position equal to ``g``'s name: the positives' rules."""
    return {p: Rule("eq", name_at(g, p)) for p in positions(g)}


_Bind = Literal["value", "values", "both", "none"]
_PV = (("p", "param"), ("v", "var"))
_PVX = (("p", "param"), ("v", "var"), ("x", "param_x"))
_OPERATORS: dict[
    tuple[str, RuleOp], tuple[_Bind, tuple[tuple[str, tuple[tuple[str, str], ...]], ...]]
] = {
    ("attribute", "eq"): ("value", (("attribute_has", _PV),)),
    ("attribute", "ne"): ("value", (("attribute_ne", _PV),)),
    ("attribute", "in"): ("values", (("attribute_in", _PV),)),
    ("attribute", "not_in"): ("values", (("attribute_not_in", _PV),)),
    ("attribute", "ne_not_in"): ("both", (("attribute_ne_not_in", _PVX),)),
    ("attribute", "eq_or_in"): ("both", (("attribute_eq_or_in", _PVX),)),
    ("attribute", "any"): ("none", (("attribute_nonempty", (("v", "var"),)),)),
    ("name", "eq"): ("value", (("name_eq", _PV),)),
    ("name", "ne"): ("value", (("name_ne", _PV),)),
    ("name", "in"): ("values", (("name_in", _PV),)),
    ("name", "not_in"): ("values", (("name_not_in", _PV),)),
    ("name", "ne_not_in"): (
        "both",
        (("name_ne", (("p", "param_x"), ("v", "var"))), ("name_not_in", _PV)),
    ),
    ("name", "eq_or_in"): ("both", (("name_eq_or_in", _PVX),)),
    ("name", "any"): ("none", ()),
}
"""The operator table: per (name or attribute, rule op), which parameters the rule binds
(``value``: ``$p`` = the value; ``values``: ``$p`` = the list; ``both``: ``$p_x`` = the value and
``$p`` = the list) and which ``cypher/match/_related`` fragments render it, with the placeholders
each fragment fills from the parameter names and the variable."""


def _conditions(var: str, kind: str, rule: Rule, param: str, params: dict[str, Any]) -> list[str]:
    """The WHERE conditions of one position (``kind`` is name or attribute)."""
    bind, fragments = _OPERATORS[(kind, rule.op)]
    if bind == "value":
        params[param] = rule.value
    elif bind == "values":
        params[param] = list(rule.values)
    elif bind == "both":
        params[f"{param}_x"] = rule.value
        params[param] = list(rule.values)
    sources = {"param": param, "param_x": f"{param}_x", "var": var}
    return [
        render(name, **{slot: sources[source] for slot, source in slots})
        for name, slots in fragments
    ]


def _clause(head: str, conditions: list[str]) -> str:
    lines = [head]
    for i, condition in enumerate(conditions):
        lines.append(render("where" if i == 0 else "and", condition=condition))
    return "\n".join(lines)


def branch_text(g: Subgraph, rules: Mapping[str, Rule], prefix: str) -> tuple[str, dict[str, Any]]:
    """One branch (without its ``$<prefix>_ids`` / ``$<prefix>_tag`` values); memoized, since a
    lookup builds the same branches round after round."""
    text, params = _branch_text(g, tuple(sorted(rules.items())), prefix)
    return text, dict(params)


@lru_cache(maxsize=4096)
def _branch_text(
    g: Subgraph, frozen_rules: tuple[tuple[str, Rule], ...], prefix: str
) -> tuple[str, dict[str, Any]]:
    rules = dict(frozen_rules)
    if not _IDENTIFIER.match(prefix):
        raise BuilderError(f"bad prefix {prefix!r}")
    missing = set(positions(g)) - set(rules)
    extra = set(rules) - set(positions(g))
    if missing or extra:
        raise BuilderError(f"rules must cover exactly the positions of {g.key}")
    params: dict[str, Any] = {}

    def object_conditions(i: int) -> list[str]:
        out = _conditions(f"o{i}", "name", rules[f"object@{i}"], f"{prefix}_o{i}", params)
        if g.objects[i].attribute is not None:
            out += _conditions(
                f"o{i}", "attribute", rules[f"attribute@{i}"], f"{prefix}_a{i}", params
            )
        out += [render("distinct", a=f"o{i}", b=f"o{k}") for k in range(i)]
        return out

    incoming: dict[int, tuple[str, int]] = {}
    for j, rel in enumerate(g.relations):
        incoming[rel.object] = ("relation", j)
    for k, mod in enumerate(g.relmods):
        incoming[mod.object] = ("relmod", k)
    clauses = [
        render("images", ids=f"{prefix}_ids"),
        render("with", bound="i"),
        _clause(render("root", o="o0"), object_conditions(0)),
    ]
    bound = ["i", "o0"]
    for i in range(1, len(g.objects)):
        kind, index = incoming[i]
        if kind == "relation":
            rel = g.relations[index]
            head = render("relation", r=f"r{index}", s=f"o{rel.subject}", t=f"o{i}")
            own = _conditions(
                f"r{index}", "name", rules[f"relation@{index}"], f"{prefix}_r{index}", params
            )
        else:
            mod = g.relmods[index]
            head = render("relmod", m=f"m{index}", r=f"r{mod.relation}", t=f"o{i}")
            own = _conditions(
                f"m{index}", "name", rules[f"relmod@{index}"], f"{prefix}_m{index}", params
            )
        # a planning boundary: FalkorDB would otherwise anchor on another name index (measured)
        clauses.append(render("with", bound=", ".join(bound)))
        clauses.append(_clause(head, own + object_conditions(i)))
        bound += [f"r{index}" if kind == "relation" else f"m{index}", f"o{i}"]

    clauses.append(_return_names(g, "return", f"{prefix}_tag"))
    return "\n".join(clauses), params


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
        text, own = branch_text(branch.g, branch.rules, prefix)
        texts.append(text)
        params.update(own)
        params[f"{prefix}_ids"] = list(branch.image_ids)
        params[f"{prefix}_tag"] = branch.tag
    return f"\n{render('union')}\n".join(texts), params


def _return_names(g: Subgraph, fragment: str, tag: str) -> str:
    """The RETURN of a branch that reports the names found at every position of ``g``."""

    def items(var: str, count: int, prop: str) -> str:
        return ", ".join(render("property", v=f"{var}{n}", prop=prop) for n in range(count))

    return render(
        fragment,
        tag=tag,
        names=items("o", len(g.objects), "name"),
        attributes=items("o", len(g.objects), "attributes"),
        relation_names=items("r", len(g.relations), "name"),
        relmod_names=items("m", len(g.relmods), "name"),
    )


def position_kind(position: str) -> str:
    """``object``, ``attribute``, ``relation`` or ``relmod``."""
    return parse_position(position)[0]


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


def _nodes(g: Subgraph) -> dict[str, list[tuple[str, str, str]]]:
    """The subgraph as a node graph: ``node -> [(neighbour, edge type, direction)]``."""
    adjacent: dict[str, list[tuple[str, str, str]]] = {f"o{i}": [] for i in range(len(g.objects))}

    def link(a: str, edge: str, b: str) -> None:
        adjacent.setdefault(a, []).append((b, edge, "out"))
        adjacent.setdefault(b, []).append((a, edge, "in"))

    for j, rel in enumerate(g.relations):
        link(f"o{rel.subject}", "SUBJ", f"r{j}")
        link(f"r{j}", "OBJ", f"o{rel.object}")
    for k, mod in enumerate(g.relmods):
        link(f"r{mod.relation}", "MOD", f"m{k}")
        link(f"m{k}", "OBJ", f"o{mod.object}")
    return adjacent


_LABEL_OF = {"o": "Object", "r": "Relation", "m": "RelMod"}
_POSITION_OF = {"o": "object", "r": "relation", "m": "relmod"}
_LETTER_OF = {kind: letter for letter, kind in _POSITION_OF.items()}
# Parameter letters of every position kind (relation and relmod both start with "r").
_PARAM_LETTER = {"object": "o", "attribute": "a", "relation": "r", "relmod": "m"}


class _AnchoredWalk:
    """The text of one direct branch, built step by step (see :func:`anchored_branch_text`)."""

    def __init__(self, branch: AnchoredBranch, prefix: str) -> None:
        self.g, self.rules, self.prefix = branch.g, branch.rules, prefix
        self.params: dict[str, Any] = {}
        self.counting = branch.max_changes is not None
        self.counters: list[str] = []
        if self.counting:
            self.params[f"{prefix}_max"] = branch.max_changes

    def node_positions(self, node: str) -> list[str]:
        letter, number = node[0], int(node[1:])
        out = [f"{_POSITION_OF[letter]}@{number}"]
        if letter == "o" and self.g.objects[number].attribute is not None:
            out.append(f"attribute@{number}")
        return out

    def conditions(self, node: str, bound_objects: list[str]) -> list[str]:
        letter, number = node[0], int(node[1:])
        pos = f"{_POSITION_OF[letter]}@{number}"
        prefix, params = self.prefix, self.params
        out = _conditions(node, "name", self.rules[pos], f"{prefix}_{node}", params)
        if letter == "o":
            if self.g.objects[number].attribute is not None:
                rule = self.rules[f"attribute@{number}"]
                out += _conditions(node, "attribute", rule, f"{prefix}_a{number}", params)
            out += [render("distinct", a=node, b=other) for other in bound_objects]
        return out

    def boundary(self, node: str, bound: list[str]) -> list[str]:
        """``WITH`` after a step; when counting, it also adds the step's edits to the count."""
        changes = []
        if self.counting:
            for pos in self.node_positions(node):
                if self.rules[pos].op == "eq":
                    continue  # a fixed position never differs
                pkind, pindex = parse_position(pos)
                param = f"{self.prefix}_eq_{_PARAM_LETTER[pkind]}{pindex}"
                self.params[param] = name_at(self.g, pos)
                fragment = "change_attribute" if pkind == "attribute" else "change_name"
                changes.append(render(fragment, p=param, v=node))
        counters = self.counters
        if not changes:
            carried = counters[-1:] if counters else []
            return [render("with", bound=", ".join(bound + carried))]
        c = f"c{len(counters)}"
        total = " + ".join(counters[-1:] + changes)
        carried = counters[-1:]
        counters.append(c)
        return [
            render("with_count", bound=", ".join(bound + carried), total=total, c=c),
            render("where", condition=render("at_most", c=c, p=f"{self.prefix}_max")),
        ]

    def walk(self, start: str) -> list[str]:
        """MATCH clauses from the anchor outward, breadth first, one edge per clause."""
        adjacent = _nodes(self.g)
        bound = [start]
        objects = [start] if start.startswith("o") else []
        head = render("anchor", v=start, label=_LABEL_OF[start[0]])
        clauses = [_clause(head, self.conditions(start, []))]
        queue = [start]
        last = start
        while queue:
            node = queue.pop(0)
            for other, edge, direction in adjacent[node]:
                if other in bound:
                    continue
                clauses += self.boundary(last, bound)
                name = "hop_out" if direction == "out" else "hop_in"
                head = render(name, a=node, b=other, type=edge, label=_LABEL_OF[other[0]])
                clauses.append(_clause(head, self.conditions(other, list(objects))))
                bound.append(other)
                last = other
                if other.startswith("o"):
                    objects.append(other)
                queue.append(other)
        return clauses + self.boundary(last, bound)


def anchored_branch_text(branch: AnchoredBranch, prefix: str) -> tuple[str, dict[str, Any]]:
    """One direct branch: walk ``g`` outward from the anchor node, one edge per MATCH.

    Each step is followed by ``WITH`` so that FalkorDB keeps the order (it otherwise starts
    from whichever name index it likes); the image comes last.
    """
    kind, index = parse_position(branch.anchor)
    if kind == "attribute" or branch.rules[branch.anchor].op != "eq":
        raise BuilderError("the anchor must be a fixed object, relation or rel-mod name")
    walk = _AnchoredWalk(branch, prefix)
    clauses = walk.walk(f"{_LETTER_OF[kind]}{index}")
    params = walk.params
    image_conditions = []
    if branch.split is not None:
        params[f"{prefix}_split"] = branch.split
        image_conditions.append(render("split", p=f"{prefix}_split"))
    clauses.append(_clause(render("image_of", o="o0"), image_conditions))
    params[f"{prefix}_tag"] = branch.tag
    if walk.counting:
        clauses.append(_return_names(branch.g, "return_distinct", f"{prefix}_tag"))
    else:
        clauses.append(render("return_ids", tag=f"{prefix}_tag"))
    return "\n".join(clauses), params


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
    text, params = _combined_text(branch.g, tuple(sorted(branch.rules.items())), branch.max_changes)
    out = dict(params)
    out["c_ids"] = list(branch.image_ids)
    return text, out


@lru_cache(maxsize=1024)
def _combined_text(
    g: Subgraph, frozen_rules: tuple[tuple[str, Rule], ...], max_changes: int
) -> tuple[str, dict[str, Any]]:
    rules = dict(frozen_rules)
    if set(rules) != set(positions(g)):
        raise BuilderError(f"rules must cover exactly the positions of {g.key}")
    prefix = "c"
    params: dict[str, Any] = {f"{prefix}_max": max_changes, f"{prefix}_tag": 0}
    counters: list[str] = []

    def changes(i: int | None, pos: str) -> list[str]:
        kind, index = parse_position(pos)
        param = f"{prefix}_eq_{_PARAM_LETTER[kind]}{index}"
        params[param] = name_at(g, pos)
        if kind == "attribute":
            return [render("change_attribute", p=param, v=f"o{index}")]
        var = {"object": "o", "relation": "r", "relmod": "m"}[kind] + str(index)
        return [render("change_name", p=param, v=var)]

    def object_parts(i: int) -> tuple[list[str], list[str]]:
        conds = _conditions(f"o{i}", "name", rules[f"object@{i}"], f"{prefix}_o{i}", params)
        counts = changes(i, f"object@{i}")
        if g.objects[i].attribute is not None:
            conds += _conditions(
                f"o{i}", "attribute", rules[f"attribute@{i}"], f"{prefix}_a{i}", params
            )
            counts += changes(i, f"attribute@{i}")
        conds += [render("distinct", a=f"o{i}", b=f"o{k}") for k in range(i)]
        return conds, counts

    def count_clause(bound: list[str], counts: list[str]) -> list[str]:
        c = f"c{len(counters)}"
        total = " + ".join(([counters[-1]] if counters else []) + counts)
        counters.append(c)
        return [
            render("with_count", bound=", ".join(bound), total=total, c=c),
            render("where", condition=render("at_most", c=c, p=f"{prefix}_max")),
        ]

    incoming: dict[int, tuple[str, int]] = {}
    for j, rel in enumerate(g.relations):
        incoming[rel.object] = ("relation", j)
    for k, mod in enumerate(g.relmods):
        incoming[mod.object] = ("relmod", k)
    conds, counts = object_parts(0)
    clauses = [
        render("images", ids=f"{prefix}_ids"),
        render("with", bound="i"),
        _clause(render("root", o="o0"), conds),
    ]
    bound = ["i", "o0"]
    clauses += count_clause(bound, counts)
    for i in range(1, len(g.objects)):
        kind, index = incoming[i]
        if kind == "relation":
            rel = g.relations[index]
            head = render("relation", r=f"r{index}", s=f"o{rel.subject}", t=f"o{i}")
            own = _conditions(
                f"r{index}", "name", rules[f"relation@{index}"], f"{prefix}_r{index}", params
            )
            own_count = changes(None, f"relation@{index}")
        else:
            mod = g.relmods[index]
            head = render("relmod", m=f"m{index}", r=f"r{mod.relation}", t=f"o{i}")
            own = _conditions(
                f"m{index}", "name", rules[f"relmod@{index}"], f"{prefix}_m{index}", params
            )
            own_count = changes(None, f"relmod@{index}")
        conds, counts = object_parts(i)
        clauses.append(_clause(head, own + conds))
        bound += [f"r{index}" if kind == "relation" else f"m{index}", f"o{i}"]
        clauses += count_clause([*bound, counters[-1]], own_count + counts)

    clauses.append(_return_names(g, "return", f"{prefix}_tag"))
    return "\n".join(clauses), params
