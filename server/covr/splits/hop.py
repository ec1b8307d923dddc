"""Held-out attribute pairs on real scene graphs (seed 002, CLEVR-HOPE, adapted to COVR).

A held-out pair (HOP) is two values that one object carries together: two attribute values of
different types (``red`` + ``metal``) or an attribute value and an object name (``wooden`` +
``table``). CLEVR-HOPE removes the pair from *both* modalities at training time, so:

- training keeps only examples none of whose images has an object with the pair and whose
  question (program or utterance) does not mention it;
- complex-OOD test: evaluation examples that mention the pair *and* have an image with it;
- complex-IID test: evaluation examples with neither;
- minimal-OOD / minimal-IID: single-image existence questions "Is there a wooden table?" built
  here from the evaluation scene graphs: every image with the pair gets three partners asking the
  same question where the first value, the second, or both are swapped for another value of the
  same type (CLEVR-HOPE App. B.1: always answering "no" scores 75 %); IID does the same for other
  value pairs of the same types seen in training, minus any image that has the HOP.

Attribute diversity (§4.3) is the number of value combinations of the pair's two types that
training objects show (CLEVR's all-combinations product is reported too, as ``possible``).
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from covr.questions.example import Example
from covr.questions.example import Step as ProgramStep
from covr.scene.model import Object, SceneGraph
from covr.splits.builders import Split, SplitError, pools, split_counts
from covr.splits.examples import ExampleRecord, Step, iter_programs, source_split
from covr.splits.properties import compute_properties
from covr.splits.vocab import attribute_types

QUANTIFIERS = frozenset({"all", "some", "none", "all_same"})
CHAIN_OPS = frozenset({"filter", "unique", "assert_unique", "verify_attr", "choose_attr"})
ATTRIBUTE_OPS = frozenset({"filter", "verify_attr", "choose_attr"})
NOUN_TYPE = "noun"
MINIMAL_TEMPLATE = "MinimalExists"
MINIMAL_VERSION = "splits-hop-1"


@dataclass(frozen=True)
class Pair:
    """Two values one object carries together; ``first`` is an attribute value."""

    first: str
    second: str

    def __str__(self) -> str:
        return f"{self.first} {self.second}"


def type_of(value: str) -> str:
    """Attribute type of a value, or ``noun`` for an object name."""
    return attribute_types().get(value, NOUN_TYPE)


def parse_pair(text: str) -> Pair:
    """``wooden,table`` or ``red+metal`` → Pair; at least one value must be an attribute."""
    parts = [p.strip() for p in re.split(r"[,+]", text)]
    if len(parts) != 2 or not all(parts):
        raise SplitError(f"pair {text!r}: expected two values separated by ',' (wooden,table)")
    a, b = parts
    if a == b:
        raise SplitError(f"pair {text!r}: the two values are the same")
    ta, tb = type_of(a), type_of(b)
    if ta == NOUN_TYPE and tb == NOUN_TYPE:
        raise SplitError(
            f"pair {text!r}: neither value is a known attribute (one object has one name; "
            "a pair needs an attribute value such as wooden or red)"
        )
    if ta == tb:
        raise SplitError(f"pair {text!r}: both values have the attribute type {ta!r}")
    if ta == NOUN_TYPE:
        a, b = b, a
    return Pair(a, b)


def _object_values(obj: Object) -> set[str]:
    return {obj.name, *obj.attributes}


def image_has(graph: SceneGraph, pair: Pair) -> bool:
    """Whether some object of the image carries both values."""
    return any({pair.first, pair.second} <= _object_values(o) for o in graph.objects)


def _chain_names(prog: Sequence[Step]) -> list[set[str]]:
    """For every object reference of a program level, the names applied to the same objects."""
    consumers: defaultdict[int, list[int]] = defaultdict(list)
    for index, step in enumerate(prog):
        deps = step.get("dependencies", ())
        if deps and step["operation"] in CHAIN_OPS:
            consumers[deps[0]].append(index)
    out: list[set[str]] = []
    for index, step in enumerate(prog):
        if step["operation"] != "find":
            continue
        names = {a for a in step.get("arguments", ()) if isinstance(a, str)}
        stack = [index]
        while stack:
            for nxt in consumers.get(stack.pop(), ()):
                names |= {a for a in prog[nxt].get("arguments", ()) if isinstance(a, str)}
                stack.append(nxt)
        out.append(names)
    return out


def _quantified_names(prog: Sequence[Step]) -> list[set[str]]:
    """Names a quantifier applies to its objects: restrictor chain + conditions of its scope."""
    out: list[set[str]] = []
    for step in prog:
        if step["operation"] not in QUANTIFIERS:
            continue
        names: set[str] = set()
        for dep in step.get("dependencies", ()):
            index = dep
            while 0 <= index < len(prog):
                current = prog[index]
                names |= {a for a in current.get("arguments", ()) if isinstance(a, str)}
                deps = current.get("dependencies", ())
                if current["operation"] not in CHAIN_OPS or not deps:
                    break
                index = deps[0]
        for arg in step.get("arguments", ()):
            if not isinstance(arg, list):
                continue
            from_find: set[int] = set()
            for i, inner in enumerate(arg):
                if inner["operation"] == "find" or any(
                    d in from_find for d in inner.get("dependencies", ())
                ):
                    from_find.add(i)
            for i, inner in enumerate(arg):
                if i not in from_find and inner["operation"] in ATTRIBUTE_OPS:
                    names |= {a for a in inner.get("arguments", ()) if isinstance(a, str)}
        out.append(names)
    return out


def mentions(example: ExampleRecord, pair: Pair) -> bool:
    """Whether the question refers to one object with both values (program or text)."""
    wanted = {pair.first, pair.second}
    for prog in iter_programs(example.get("program") or []):
        for names in (*_chain_names(prog), *_quantified_names(prog)):
            if wanted <= names:
                return True
    text = str(example.get("utterance", "")).lower()
    a, b = re.escape(pair.first.lower()), re.escape(pair.second.lower())
    return re.search(rf"\b{a}\s+{b}\b|\b{b}\s+{a}\b", text) is not None


def _graph(scenes: Mapping[str, SceneGraph], image: str, qid: str) -> SceneGraph:
    graph = scenes.get(image)
    if graph is None:
        raise SplitError(f"example {qid!r}: scene graph of image {image!r} not given")
    return graph


def diversity(graphs: Iterable[SceneGraph], pair: Pair) -> dict[str, Any]:
    """Value combinations of the pair's two types carried by one object in these images.

    ``possible`` is CLEVR-HOPE's product of the value counts of the two types, counted over
    objects that carry a value of both types (real objects often lack a type).
    """
    ta, tb = type_of(pair.first), type_of(pair.second)
    combos: set[tuple[str, str]] = set()
    first_values: set[str] = set()
    second_values: set[str] = set()
    for graph in graphs:
        for obj in graph.objects:
            values = _object_values(obj)
            firsts = {v for v in obj.attributes if type_of(v) == ta}
            seconds = {obj.name} if tb == NOUN_TYPE else {v for v in values if type_of(v) == tb}
            if firsts and seconds:  # an object typed for both (CLEVR: every object)
                first_values |= firsts
                second_values |= seconds
                combos |= {(x, y) for x in firsts for y in seconds}
    return {
        "types": [ta, tb],
        "diversity": len(combos),
        "possible": len(first_values) * len(second_values),
        "first_values": len(first_values),
        "second_values": len(second_values),
        "combinations": sorted(combos),
    }


@dataclass
class HopResult:
    """The split plus the generated minimal test examples and the pair's diversity."""

    split: Split
    minimal_ood: list[ExampleRecord] = field(default_factory=list)
    minimal_iid: list[ExampleRecord] = field(default_factory=list)
    diversity: dict[str, Any] = field(default_factory=dict)


def _minimal_example(
    pair: Pair, graph: SceneGraph, kind: str, number: int, seed: int, split: str
) -> Example:
    article = "an" if pair.first[:1].lower() in "aeiou" else "a"
    if type_of(pair.second) == NOUN_TYPE:
        utterance = f"Is there {article} {pair.first} {pair.second}?"
        program: list[ProgramStep] = [
            {"operation": "find", "arguments": [pair.second], "dependencies": []},
            {"operation": "filter", "arguments": [pair.first], "dependencies": [0]},
            {"operation": "exists", "arguments": [], "dependencies": [1]},
        ]
    else:
        utterance = f"Is there {article} {pair.first} {pair.second} object?"
        program = [
            {"operation": "find", "arguments": ["object"], "dependencies": []},
            {"operation": "filter", "arguments": [pair.first], "dependencies": [0]},
            {"operation": "filter", "arguments": [pair.second], "dependencies": [1]},
            {"operation": "exists", "arguments": [], "dependencies": [2]},
        ]
    example: Example = {
        "qid": f"hop-{pair.first}-{pair.second}-{kind}-{number:06d}".replace(" ", "_"),
        "utterance": utterance,
        "scenes": [graph.image_id],
        "answer": image_has(graph, pair),
        "pattern_name": "minimal_exists",
        "program": program,
        "properties": [],
        "provenance": {
            "template": MINIMAL_TEMPLATE,
            "source_image": graph.image_id,
            "split": split,
            "seed": seed,
            "generator_version": MINIMAL_VERSION,
            "hop_set": kind,
        },
    }
    example["properties"] = compute_properties(example)
    return example


def _swap_candidates(graphs: Sequence[SceneGraph], pair: Pair) -> dict[str, list[SceneGraph]]:
    """Images whose objects carry the pair with the first, the second or both values swapped."""
    ta, tb = type_of(pair.first), type_of(pair.second)
    out: dict[str, list[SceneGraph]] = {"first": [], "second": [], "both": []}
    for graph in graphs:
        if image_has(graph, pair):
            continue
        kinds: set[str] = set()
        for obj in graph.objects:
            values = _object_values(obj)
            seconds = {obj.name} if tb == NOUN_TYPE else {v for v in values if type_of(v) == tb}
            firsts = {v for v in obj.attributes if type_of(v) == ta}
            if pair.second in seconds and firsts - {pair.first}:
                kinds.add("first")
            if pair.first in firsts and seconds - {pair.second}:
                kinds.add("second")
            if (firsts - {pair.first}) and (seconds - {pair.second}):
                kinds.add("both")
        for kind in kinds:
            out[kind].append(graph)
    return out


def _minimal_set(
    pair: Pair,
    graphs: Sequence[SceneGraph],
    kind: str,
    limit: int,
    rng: random.Random,
    seed: int,
    start: int,
    splits: Mapping[str, str],
) -> list[ExampleRecord]:
    positives = [g for g in graphs if image_has(g, pair)]
    rng.shuffle(positives)
    partners = _swap_candidates(graphs, pair)
    out: list[ExampleRecord] = []
    for graph in positives[:limit]:
        group = [graph]
        for swap in ("first", "second", "both"):
            if partners[swap]:
                group.append(partners[swap][rng.randrange(len(partners[swap]))])
        for g in group:
            split = splits.get(g.image_id, g.split)
            out.append(_minimal_example(pair, g, kind, start + len(out), seed, split))
    return out


def hop_split(
    examples: Sequence[ExampleRecord],
    scenes: Mapping[str, SceneGraph],
    pair: Pair,
    *,
    seed: int = 0,
    minimal_limit: int = 200,
    minimal_iid_pairs: int = 10,
) -> HopResult:
    """The CLEVR-HOPE split for one pair (see the module docstring)."""
    train_pool, eval_pool = pools(examples)

    def image_flag(e: ExampleRecord) -> bool:
        return any(image_has(_graph(scenes, i, e["qid"]), pair) for i in e["scenes"])

    train = [e for e in train_pool if not image_flag(e) and not mentions(e, pair)]
    ood: list[ExampleRecord] = []
    iid: list[ExampleRecord] = []
    for e in eval_pool:
        in_image = image_flag(e)
        in_text = mentions(e, pair)
        if in_image and in_text:
            ood.append(e)
        elif not in_image and not in_text:
            iid.append(e)
    train_graphs = {i: scenes[i] for e in train for i in e["scenes"]}
    eval_graphs = sorted(
        {i: scenes[i] for e in eval_pool for i in e["scenes"]}.values(), key=lambda g: g.image_id
    )
    div = diversity(train_graphs.values(), pair)
    rng = random.Random(seed)
    image_split = {i: source_split(e) for e in eval_pool for i in e["scenes"]}
    minimal_ood = _minimal_set(
        pair, eval_graphs, "minimal-ood", minimal_limit, rng, seed, 0, image_split
    )
    seen_pairs = [Pair(x, y) for x, y in div["combinations"] if (x, y) != (pair.first, pair.second)]
    rng.shuffle(seen_pairs)
    minimal_iid: list[ExampleRecord] = []
    per_pair = max(1, minimal_limit // max(1, minimal_iid_pairs))
    for other in seen_pairs[:minimal_iid_pairs]:
        for ex in _minimal_set(
            other, eval_graphs, "minimal-iid", per_pair, rng, seed, len(minimal_iid), image_split
        ):
            if not any(image_has(scenes[i], pair) for i in ex["scenes"]):
                minimal_iid.append(ex)
    split = Split(
        name=f"hop-{pair.first}-{pair.second}".replace(" ", "_"),
        kind="hop",
        definition={"pair": [pair.first, pair.second], "types": div["types"]},
        seed=seed,
        train=[e["qid"] for e in train],
        test=[e["qid"] for e in ood],
        iid_test=[e["qid"] for e in iid],
        counts=split_counts(
            train_pool,
            eval_pool,
            train,
            ood,
            iid,
            complex_ood=len(ood),
            complex_iid=len(iid),
            minimal_ood=len(minimal_ood),
            minimal_iid=len(minimal_iid),
        ),
        extra={
            "diversity": {k: v for k, v in div.items() if k != "combinations"},
            "files_minimal": {
                "minimal_ood": "minimal_ood.jsonl",
                "minimal_iid": "minimal_iid.jsonl",
            },
        },
    )
    return HopResult(split, minimal_ood, minimal_iid, div)


def candidate_pairs(
    examples: Sequence[ExampleRecord],
    scenes: Mapping[str, SceneGraph],
    *,
    min_eval_images: int = 1,
) -> list[dict[str, Any]]:
    """Pairs carried by objects of evaluation images, with image counts and training diversity."""
    train_pool, eval_pool = pools(examples)
    train_ids = sorted({i for e in train_pool for i in e["scenes"]})
    eval_ids = sorted({i for e in eval_pool for i in e["scenes"]})

    def pairs_in(graph: SceneGraph) -> set[Pair]:
        found: set[Pair] = set()
        for obj in graph.objects:
            attrs = sorted(a for a in obj.attributes if type_of(a) != NOUN_TYPE)
            for a in attrs:
                found.add(Pair(a, obj.name))
            for a in attrs:
                for b in attrs:
                    if a < b and type_of(a) != type_of(b):
                        found.add(Pair(a, b))
        return found

    train_counts: Counter[Pair] = Counter()
    eval_counts: Counter[Pair] = Counter()
    for image in train_ids:
        train_counts.update(pairs_in(_graph(scenes, image, "(training pool)")))
    for image in eval_ids:
        eval_counts.update(pairs_in(_graph(scenes, image, "(evaluation pool)")))
    train_graphs = [scenes[i] for i in train_ids]
    type_diversity: dict[tuple[str, str], dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for pair, count in sorted(eval_counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        if count < min_eval_images:
            continue
        types = (type_of(pair.first), type_of(pair.second))
        if types not in type_diversity:
            type_diversity[types] = diversity(train_graphs, pair)
        div = type_diversity[types]
        rows.append(
            {
                "pair": [pair.first, pair.second],
                "types": list(types),
                "eval_images": count,
                "train_images": train_counts.get(pair, 0),
                # the pair itself leaves training when held out
                "diversity": div["diversity"] - (1 if train_counts.get(pair) else 0),
                "possible": div["possible"],
            }
        )
    return rows
