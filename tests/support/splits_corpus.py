"""A small generator of COVR-like examples for the splits tests and benchmark.

The question engine is built elsewhere; the splits room only reads example *data*, so the tests
make their own realistic corpus in the contract format: scene graphs with real GQA-like words,
a subgraph picked from the source image (single, hop, chain, V-shape, rel-mod), and a program per
form of the DESIGN §7 table that wraps the subgraph's reference program. Images of the source
train split and of val never mix (each example's images come from one split).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from covr.scene.model import Box, Object, Relation, RelMod, SceneGraph

NOUNS = [
    "man", "woman", "dog", "cat", "table", "chair", "horse", "shirt", "hat", "car", "bench",
    "tree", "cup", "plate", "boy", "girl", "bag", "shelf", "door", "bike",
]  # fmt: skip
ATTRIBUTES = {
    "color": ["red", "black", "white", "brown", "blue", "green"],
    "material": ["wooden", "metal", "plastic", "glass"],
    "size": ["small", "large"],
    "pattern": ["striped", "checkered"],
}
RELATIONS = ["on", "next to", "holding", "wearing", "near", "behind", "under"]
RELMODS = ["using", "onto", "with"]

FORMS = [
    ("verify_attr", "VerifyAttr"),
    ("query_attr", "QueryAttr"),
    ("choose_attr", "ChooseAttr"),
    ("query_object", "QueryObject"),
    ("choose_object", "ChooseObject"),
    ("choose_rel", "ChooseRel"),
    ("quantifier", "VerifyQuant"),
    ("quantifier_attr", "VerifyQuant"),
    ("quantifier_same_attr", "VerifyQuantAttr"),
    ("specific_same_attr", "VerifySameAttr"),
    ("multiple_ref", "VerifyLogic"),
    ("verify_count_ref", "VerifyCount"),
    ("count_ref", "Count"),
    ("verify_count_ref_group_by", "VerifyCountGroupBy"),
    ("count_ref_group_by", "CountGroupBy"),
    ("compare_count", "CompareCount"),
]


def _attr_type(value: str) -> str:
    for kind, values in ATTRIBUTES.items():
        if value in values:
            return kind
    raise KeyError(value)


def make_scene(number: int, split: str, rng: random.Random) -> SceneGraph:
    """One image: 3-6 objects with 0-2 attributes, a few relations, sometimes a rel-mod."""
    objects = []
    names = rng.sample(NOUNS, rng.randint(3, 6))
    for i, name in enumerate(names):
        kinds = rng.sample(list(ATTRIBUTES), rng.randint(0, 2))
        attrs = tuple(rng.choice(ATTRIBUTES[k]) for k in kinds)
        objects.append(Object(id=str(i), name=name, attributes=attrs, box=Box(0, 0, 50, 50)))
    relations = []
    for r in range(rng.randint(1, len(objects))):
        s, o = rng.sample(range(len(objects)), 2)
        mods: tuple[RelMod, ...] = ()
        if rng.random() < 0.15:
            m = rng.choice([i for i in range(len(objects)) if i not in (s, o)] or [o])
            mods = (RelMod(id="m", name=rng.choice(RELMODS), object=str(m)),)
        relations.append(Relation(str(r), rng.choice(RELATIONS), str(s), str(o), mods=mods))
    return SceneGraph.build(
        source="gqa", original_id=str(number), split=split, objects=objects, relations=relations
    )


@dataclass
class Ref:
    rows: list[dict[str, Any]]
    text: str
    key: str
    noun: str
    attr: str | None


def _step(op: str, args: list[Any], deps: list[int]) -> dict[str, Any]:
    return {"operation": op, "arguments": args, "dependencies": deps}


def _ref(graph: SceneGraph, rng: random.Random, offset: int = 0) -> Ref:
    """A subgraph rooted at an object of ``graph`` and its reference program rows."""
    by_id = graph.object_by_id()
    out_rel: dict[str, list[Relation]] = {}
    for rel in graph.relations:
        out_rel.setdefault(rel.subject, []).append(rel)
    root = rng.choice(graph.objects)
    rows: list[dict[str, Any]] = []

    def obj_rows(o: Object, use_attr: bool) -> tuple[int, str, str | None]:
        rows.append(_step("find", [o.name], []))
        index = offset + len(rows) - 1
        attr = None
        if use_attr and o.attributes:
            attr = o.attributes[0]
            rows.append(_step("filter", [attr], [index]))
            index = offset + len(rows) - 1
        return index, (f"{attr} {o.name}" if attr else o.name), attr

    rels = out_rel.get(root.id, [])
    shape = rng.random()
    if rels and shape < 0.6:
        first = rng.choice(rels)
        target = by_id[first.object]
        t_index, t_text, _ = obj_rows(target, rng.random() < 0.5)
        chain_rels = out_rel.get(target.id, [])
        mods_key = "".join(f"|{m.name}:{by_id[m.object].name}" for m in first.mods)
        key = f"{root.name}-({first.name}{mods_key})->{target.name}"
        if chain_rels and shape < 0.15 and by_id[chain_rels[0].object].name != root.name:
            nxt = chain_rels[0]
            c_index, c_text, _ = obj_rows(by_id[nxt.object], False)
            rows.append(_step("with_relation", [nxt.name], [t_index, c_index]))
            t_index = offset + len(rows) - 1
            t_text += f" that is {nxt.name} a {c_text}"
            key += f"-({nxt.name})->{by_id[nxt.object].name}"
        mod_rows = [obj_rows(by_id[m.object], False)[0] for m in first.mods]
        r_index, r_text, attr = obj_rows(root, rng.random() < 0.5)
        rows.append(
            _step(
                "with_relation",
                [first.name, *(m.name for m in first.mods)],
                [r_index, t_index, *mod_rows],
            )
        )
        w_index = offset + len(rows) - 1
        text = f"{r_text} that is {first.name} a {t_text}"
        if len(rels) > 1 and shape < 0.3 and by_id[rels[1].object].name != root.name:
            second = rels[1]
            v_index, v_text, _ = obj_rows(by_id[second.object], False)
            rows.append(_step("with_relation", [second.name], [w_index, v_index]))
            text += f" and {second.name} a {v_text}"
            head, _, first_edge = key.partition("-")
            key = f"{head}{{-{first_edge},-({second.name})->{by_id[second.object].name}}}"
        return Ref(rows, text, key, root.name, attr)
    _, text, attr = obj_rows(root, rng.random() < 0.7)
    return Ref(rows, text, root.name + (f"[{attr}]" if attr else ""), root.name, attr)


def _shift(rows: list[dict[str, Any]], by: int) -> list[dict[str, Any]]:
    return [{**r, "dependencies": [d + by for d in r["dependencies"]]} for r in rows]


def make_example(
    qid: str, form: str, template: str, graphs: list[SceneGraph], rng: random.Random, seed: int
) -> dict[str, Any]:
    """One example of ``form`` over ``graphs`` (the first one is the source image)."""
    src = graphs[0]
    ref = _ref(src, rng)
    rows = list(ref.rows)
    last = len(rows) - 1
    answer: Any = rng.random() < 0.5
    text = ""
    keys = [ref.key]
    color_or_material = rng.choice(["color", "material"])
    some_attr = rng.choice(ATTRIBUTES["color"])
    number = rng.randint(1, 4)
    if form == "verify_attr":
        rows += [_step("unique", [], [last]), _step("verify_attr", [some_attr], [last + 1])]
        text = f"Is the {ref.text} {some_attr}?"
    elif form == "query_attr":
        rows += [_step("unique", [], [last]), _step("query_attr", [color_or_material], [last + 1])]
        text = f"What is the {color_or_material} of the {ref.text}?"
        answer = rng.choice(ATTRIBUTES[color_or_material])
    elif form == "choose_attr":
        a, b = rng.sample(ATTRIBUTES["color"], 2)
        rows += [_step("unique", [], [last]), _step("choose_attr", [a, b], [last + 1])]
        text = f"Is the {ref.text} {a} or {b}?"
        answer = rng.choice([a, b])
    elif form in ("query_object", "choose_object"):
        rel = rng.choice(RELATIONS)
        rows += [
            _step("find", ["object"], []),
            _step("with_relation_object", [rel], [last, last + 1]),
            _step("unique", [], [last + 2]),
        ]
        if form == "query_object":
            rows.append(_step("query_name", [], [last + 3]))
            text = f"What is the {ref.text} {rel}?"
            answer = rng.choice(NOUNS)
        else:
            a, b = rng.sample(NOUNS, 2)
            rows.append(_step("choose_name", [a, b], [last + 3]))
            text = f"The {ref.text} is {rel} a {a} or a {b}?"
            answer = rng.choice([a, b])
    elif form == "choose_rel":
        other = _ref(src, rng, offset=len(rows))
        rows += other.rows
        r1, r2 = rng.sample(RELATIONS, 2)
        rows += [
            _step("unique", [], [last]),
            _step("unique", [], [len(rows) - 1]),
        ]
        rows.append(_step("choose_relation", [r1, r2], [len(rows) - 2, len(rows) - 1]))
        text = f"Is the {ref.text} {r1} the {other.text} or {r2} it?"
        answer = rng.choice([r1, r2])
        keys.append(other.key)
    elif form == "quantifier":
        q = rng.choice(["all", "some", "none"])
        target = rng.choice(NOUNS)
        rel = rng.choice(RELATIONS)
        nested = [_step("find", [target], []), _step("with_relation", [rel], [-1, 0]),
                  _step("exists", [], [1])]  # fmt: skip
        rows.append(_step(q, [nested], [last]))
        text = (
            f"{ {'all': 'All', 'some': 'Some', 'none': 'No'}[q] } {ref.text} are {rel} a {target}"
        )
    elif form == "quantifier_attr":
        q = rng.choice(["all", "some", "none"])
        rows.append(_step(q, [[_step("verify_attr", [some_attr], [-1])]], [last]))
        text = f"{ {'all': 'All', 'some': 'Some', 'none': 'No'}[q] } {ref.text} are {some_attr}"
    elif form == "quantifier_same_attr":
        rows.append(_step("all_same", [color_or_material], [last]))
        text = f"Do all {ref.text} have the same {color_or_material}?"
    elif form == "specific_same_attr":
        other = _ref(src, rng, offset=len(rows))
        rows += other.rows
        o_last = len(rows) - 1
        rows += [
            _step("unique", [], [last]),
            _step("query_attr", [color_or_material], [o_last + 1]),
            _step("unique", [], [o_last]),
            _step("query_attr", [color_or_material], [o_last + 3]),
            _step("eq", [], [o_last + 2, o_last + 4]),
        ]
        text = f"Does the {ref.text} and the {other.text} have the same {color_or_material}?"
        keys.append(other.key)
    elif form == "multiple_ref":
        other = _ref(src, rng, offset=len(rows) + 1)
        rows.append(_step("exists", [], [last]))
        rows += other.rows
        rows.append(_step("exists", [], [len(rows) - 1]))
        op = rng.choice(["logic_and", "logic_or"])
        rows.append(_step(op, [], [last + 1, len(rows) - 1]))
        text = f"Is there {'both' if op == 'logic_and' else 'either'} a {ref.text} " \
               f"{'and' if op == 'logic_and' else 'or'} a {other.text}?"  # fmt: skip
        keys.append(other.key)
    elif form == "verify_count_ref":
        op = rng.choice(["eq", "geq", "leq"])
        rows += [_step("count", [], [last]), _step(op, [number], [last + 1])]
        text = f"There are {number} {ref.text}"
    elif form == "count_ref":
        rows.append(_step("count", [], [last]))
        text = f"How many {ref.text}?"
        answer = rng.randint(0, 5)
    elif form == "verify_count_ref_group_by":
        k = rng.randint(1, 3)
        rows += [
            _step("group_by_images", [], [last]),
            _step("keep_if_values_count_eq", [k], [last + 1]),
            _step("count", [], [last + 2]),
            _step("eq", [number], [last + 3]),
        ]
        text = f"There are {number} images that contain exactly {k} {ref.text}"
    elif form == "count_ref_group_by":
        k = rng.randint(1, 3)
        rows += [
            _step("group_by_images", [], [last]),
            _step("keep_if_values_count_geq", [k], [last + 1]),
            _step("count", [], [last + 2]),
        ]
        text = f"How many images contain at least {k} {ref.text}?"
        answer = rng.randint(0, 5)
    elif form == "compare_count":
        other = _ref(src, rng, offset=len(rows) + 1)
        rows.append(_step("count", [], [last]))
        rows += other.rows
        rows.append(_step("count", [], [len(rows) - 1]))
        op = rng.choice(["gt", "lt", "eq"])
        rows.append(_step(op, [], [last + 1, len(rows) - 1]))
        text = f"There are {op} {ref.text} than {other.text}"
        keys.append(other.key)
    else:
        raise ValueError(form)
    answer_type = (
        "bool"
        if isinstance(answer, bool)
        else "number"
        if isinstance(answer, int)
        else {"QueryAttr": "attribute", "ChooseAttr": "attribute", "ChooseRel": "relation"}.get(
            template, "noun"
        )
    )
    # the engine's layout (docs/questions.md): provenance fields at top level
    return {
        "qid": qid,
        "utterance": text,
        "scenes": [g.image_id for g in graphs],
        "answer": answer,
        "pattern_name": form,
        "program": rows,
        "properties": [],
        "template": form,
        "paper_template": template,
        "answer_type": answer_type,
        "source_image": src.image_id,
        "subgraphs": {f"REF{i + 1}": k for i, k in enumerate(keys)},
        "signatures": {g.image_id: [] for g in graphs},
        "seed": seed,
        "generator_version": "tests-splits-corpus-1",
        "split": src.split,
    }


def generate_corpus(
    examples: int, *, images: int = 400, seed: int = 0, val_share: float = 0.25
) -> tuple[list[dict[str, Any]], dict[str, SceneGraph]]:
    """``examples`` examples over ``images`` scene graphs; a ``val_share`` of images is val."""
    rng = random.Random(seed)
    graphs = [
        make_scene(n, "val" if rng.random() < val_share else "train", rng) for n in range(images)
    ]
    by_split: dict[str, list[SceneGraph]] = {}
    for g in graphs:
        by_split.setdefault(g.split, []).append(g)
    out = []
    for i in range(examples):
        form, template = FORMS[i % len(FORMS)]
        src = rng.choice(graphs)
        pool = by_split[src.split]
        others = rng.sample(pool, min(len(pool), rng.randint(1, 4)))
        scene = [src, *(g for g in others if g.image_id != src.image_id)]
        out.append(make_example(f"q{seed}-{i:07d}", form, template, scene, rng, seed))
    return out, {g.image_id: g for g in graphs}


def replicate(examples: list[dict[str, Any]], total: int) -> Iterator[dict[str, Any]]:
    """``total`` examples cycling over ``examples`` with fresh qids (benchmark scale-up)."""
    for i in range(total):
        base = examples[i % len(examples)]
        yield {**base, "qid": f"{base['qid']}-r{i // len(examples)}"}


def attribute_type(value: str) -> str:
    return _attr_type(value)
