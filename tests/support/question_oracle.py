"""An independent interpreter for COVR programs: the question engine's test oracle.

Written separately from ``covr.questions.operators`` on purpose (different data layout, no shared
code): each image becomes a plain dict of objects keyed by ``(image, object id)``, object sets are
Python sets of those keys, and operators are one ``if`` chain. Attribute types are read straight
from the JSON resource. Failures are returned as :class:`Fail` values instead of exceptions, so a
disagreement between the two interpreters shows up as a different value.

It also has its own subgraph matcher (backtracking over the dicts) to check that no distractor
image contains the source subgraph.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph


@dataclass(frozen=True)
class Fail:
    reason: str


Key = tuple[str, str]


def _attribute_types() -> dict[str, set[str]]:
    raw = resources.files("covr.related").joinpath("resources", "attributes.json").read_text()
    out: dict[str, set[str]] = {}
    for scale in json.loads(raw)["scales"]:
        for group in scale["groups"]:
            for value in group:
                out.setdefault(" ".join(value.lower().split()), set()).add(scale["category"])
    return out


TYPES = _attribute_types()


class Oracle:
    def __init__(self, scenes: Iterable[SceneGraph]) -> None:
        self.objects: dict[Key, dict[str, Any]] = {}
        self.edges: list[tuple[Key, str, Key, list[tuple[str, Key]]]] = []
        self.images: list[str] = []
        for scene in scenes:
            img = scene.image_id
            self.images.append(img)
            for o in scene.objects:
                self.objects[(img, o.id)] = {"name": o.name, "attrs": set(o.attributes)}
            for r in scene.relations:
                mods = [(m.name, (img, m.object)) for m in r.mods]
                self.edges.append(((img, r.subject), r.name, (img, r.object), mods))

    # -- programs ------------------------------------------------------------------------------

    def run(self, program: list[dict[str, Any]], item: Key | None = None) -> Any:
        out: list[Any] = []
        for st in program:
            ins = [item if d == -1 else out[d] for d in st["dependencies"]]
            value = self.op(st["operation"], ins, st["arguments"])
            if isinstance(value, Fail):
                return value
            out.append(value)
        return out[-1]

    def _set(self, value: Any) -> set[Key]:
        return {value} if isinstance(value, tuple) else set(value)

    def _value(self, key: Key, kind: str) -> Any:
        vals = {
            a
            for a in self.objects[key]["attrs"]
            if kind in TYPES.get(" ".join(a.lower().split()), ())
        }
        if len(vals) != 1:
            return Fail("values")
        return next(iter(vals))

    def op(self, name: str, ins: list[Any], args: list[Any]) -> Any:
        objs = self.objects
        if name == "find":
            return {k for k, o in objs.items() if o["name"] == args[0]}
        if name == "filter":
            return {k for k in self._set(ins[0]) if args[0] in objs[k]["attrs"]}
        if name == "with_relation":
            subj, obj = self._set(ins[0]), self._set(ins[1])
            mod_sets = [self._set(x) for x in ins[2:]]
            res = set()
            for s, rel, o, mods in self.edges:
                if (
                    s in subj
                    and rel == args[0]
                    and o in obj
                    and all(
                        any(mn == want and mo in allowed for mn, mo in mods)
                        for want, allowed in zip(args[1:], mod_sets, strict=True)
                    )
                ):
                    res.add(s)
            return res
        if name == "with_relation_object":
            subj = self._set(ins[0])
            allowed = self._set(ins[1]) if len(ins) > 1 else None
            return {
                o
                for s, rel, o, _ in self.edges
                if s in subj and rel == args[0] and (allowed is None or o in allowed)
            }
        if name in ("unique", "assert_unique"):
            items = self._set(ins[0])
            if len(items) != 1:
                return Fail("unique")
            return next(iter(items)) if name == "unique" else items
        if name == "exists":
            return len(self._set(ins[0])) > 0
        if name == "count":
            x = ins[0]
            if isinstance(x, tuple):  # one object
                return 1
            return len(x)  # a set of objects or images, or a list of groups
        if name == "unique_images":
            return {k[0] for k in self._set(ins[0])}
        if name == "group_by_images":
            groups: dict[str, set[Key]] = {}
            for k in self._set(ins[0]):
                groups.setdefault(k[0], set()).add(k)
            return [(img, groups[img]) for img in sorted(groups)]
        if name.startswith("keep_if_values_count_"):
            cmp = name.rsplit("_", 1)[1]
            n = args[0]
            sizes = {
                "eq": lambda x: x == n,
                "geq": lambda x: x >= n,
                "leq": lambda x: x <= n,
            }
            grouped = dict(ins[0])
            every = {img: grouped.get(img, set()) for img in self.images}
            return [(img, every[img]) for img in sorted(every) if sizes[cmp](len(every[img]))]
        if name == "keys":
            return {img for img, _ in ins[0]}
        if name == "query_name":
            return objs[ins[0]]["name"]
        if name == "query_attr":
            return self._value(ins[0], args[0])
        if name == "verify_attr":
            return args[0] in objs[ins[0]]["attrs"]
        if name in ("choose_attr", "choose_name", "choose_relation"):
            if name == "choose_attr":
                have = objs[ins[0]]["attrs"]
            elif name == "choose_name":
                have = {objs[k]["name"] for k in self._set(ins[0])}
            else:
                targets = self._set(ins[1])
                have = {r for s, r, o, _ in self.edges if s == ins[0] and o in targets}
            hits = [a for a in args if a in have]
            return hits[0] if len(hits) == 1 else Fail("choose")
        if name == "relation_between_nouns":
            targets = self._set(ins[1])
            rels = {r for s, r, o, _ in self.edges if s == ins[0] and o in targets}
            return next(iter(rels)) if len(rels) == 1 else Fail("relation")
        if name in ("all", "some", "none"):
            dom = sorted(self._set(ins[0]))
            if not dom:
                return Fail("empty")
            results = [self.run(args[0], item=k) for k in dom]
            for r in results:
                if isinstance(r, Fail):
                    return r
            if name == "all":
                return all(results)
            if name == "some":
                return any(results)
            return not any(results)
        if name == "all_same":
            dom = sorted(self._set(ins[0]))
            if len(dom) < 2:
                return Fail("empty")
            vals = [self._value(k, args[0]) for k in dom]
            if any(isinstance(v, Fail) for v in vals):
                return Fail("values")
            return len(set(vals)) == 1
        if name == "same_attr":
            # Same image, not the referent itself, exactly one value of the type and it is equal.
            want = self._value(ins[0], args[0])
            if isinstance(want, Fail):
                return want
            return {
                k
                for k in objs
                if k[0] == ins[0][0] and k != ins[0] and self._value(k, args[0]) == want
            }
        if name == "logic_and":
            return ins[0] and ins[1]
        if name == "logic_or":
            return ins[0] or ins[1]
        a, b = (ins[0], ins[1]) if len(ins) == 2 else (ins[0], args[0])
        if name == "eq":
            return a == b
        if name == "gt":
            return a > b
        if name == "lt":
            return a < b
        if name == "geq":
            return a >= b
        if name == "leq":
            return a <= b
        raise AssertionError(f"oracle does not know {name}")

    # -- subgraph containment ------------------------------------------------------------------

    def contains(self, image: str, g: Subgraph) -> bool:
        """Whether ``image`` has an injective embedding of ``g`` (names, attributes, relations,
        rel-mods on the same relation)."""
        keys = [k for k in self.objects if k[0] == image]
        assign: dict[int, Key] = {}

        def ok_object(i: int, k: Key) -> bool:
            o = self.objects[k]
            want = g.objects[i]
            if o["name"] != want.name or k in assign.values():
                return False
            return want.attribute is None or want.attribute in o["attrs"]

        def edges_ok() -> bool:
            for j, r in enumerate(g.relations):
                if r.subject not in assign or r.object not in assign:
                    continue
                mods = [m for m in g.relmods if m.relation == j]
                if not any(
                    s == assign[r.subject]
                    and name == r.name
                    and o == assign[r.object]
                    and all(
                        m.object not in assign
                        or any(mn == m.name and mo == assign[m.object] for mn, mo in ms)
                        for m in mods
                    )
                    for s, name, o, ms in self.edges
                ):
                    return False
            return True

        def search(i: int) -> bool:
            if i == len(g.objects):
                return True
            for k in keys:
                if ok_object(i, k):
                    assign[i] = k
                    if edges_ok() and search(i + 1):
                        return True
                    del assign[i]
            return False

        return search(0)
