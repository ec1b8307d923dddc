"""Synthetic scene graphs with GQA-like vocabulary sizes and Zipf-like frequencies.

Why: benchmarks and tests need data at 0.01×, 0.1× and 1× GQA scale, and the real datasets are
not in the repository. The generator writes the *official file formats* (GQA, imSitu, VG), so
every synthetic load exercises the real readers.

What makes it realistic enough for later statistics (presence model, distractors):

- ~1,700 object names, ~600 attributes, ~300 predicates (GQA) and ~500 verbs (imSitu); a core of
  real words with categories, extended by pronounceable made-up words to reach the sizes;
- names, attributes and predicates are drawn with Zipf-like weights (rank ``r`` ∝ ``1/r``);
- objects come from a scene type (street, kitchen, beach, ...) that favours some categories;
- attributes come from categories that fit the noun (a shirt is red or striped, not wooden);
- predicates depend on the categories of the pair (a man wears jeans, a table does not);
- ~16 objects per image, ~2 attributes per object, about one outgoing relation per object.

Everything is drawn from one ``random.Random(seed)``: the same seed gives the same files.
"""

from __future__ import annotations

import itertools
import json
import random
from bisect import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from covr.scene.model import Box, Object, Relation, SceneGraph
from covr_loaders import gqa
from covr_loaders.synthetic_words import (
    ATTRIBUTE_FIT,
    CORE_ATTRIBUTES,
    CORE_NOUNS,
    CORE_PREDICATES,
    CORE_VERBS,
    GENERIC_PREDICATES,
    ROLE_CONNECTORS,
    SCENES,
    SYLLABLES,
)

FORMATS = ("gqa", "imsitu", "vg")
N_NOUNS = 1700
N_ATTRIBUTES = 600
N_PREDICATES = 300
N_VERBS = 500


def pseudo_words(count: int, rng: random.Random, taken: set[str], syllables: int = 3) -> list[str]:
    """``count`` new pronounceable made-up words, none in ``taken``."""
    out: list[str] = []
    while len(out) < count:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, syllables)))
        if word not in taken:
            taken.add(word)
            out.append(word)
    return out


class Zipf:
    """Draw items with weight ``1/rank**s`` (rank = position in the sequence)."""

    def __init__(self, items: Sequence[str], s: float = 1.0) -> None:
        self.items = list(items)
        self.cum = list(itertools.accumulate(1.0 / (r**s) for r in range(1, len(self.items) + 1)))

    def draw(self, rng: random.Random) -> str:
        return self.items[bisect(self.cum, rng.random() * self.cum[-1])]


@dataclass
class Vocabulary:
    """Names by category, attributes by category, predicates by category pair."""

    nouns: dict[str, list[str]] = field(default_factory=dict)
    attributes: dict[str, list[str]] = field(default_factory=dict)
    predicates: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    verbs: list[str] = field(default_factory=list)

    @property
    def sizes(self) -> dict[str, int]:
        preds = {p for ps in self.predicates.values() for p in ps} | set(GENERIC_PREDICATES)
        return {
            "nouns": sum(map(len, self.nouns.values())),
            "attributes": sum(map(len, self.attributes.values())),
            "predicates": len(preds),
            "verbs": len(self.verbs),
        }


def build_vocabulary(rng: random.Random) -> Vocabulary:
    """Core words plus made-up words up to GQA's and imSitu's vocabulary sizes."""
    taken: set[str] = set()
    for group in (*CORE_NOUNS.values(), *CORE_ATTRIBUTES.values(), *CORE_PREDICATES.values()):
        taken.update(group)
    vocab = Vocabulary()
    categories = list(CORE_NOUNS)
    extra_nouns = pseudo_words(N_NOUNS - sum(map(len, CORE_NOUNS.values())), rng, taken)
    vocab.nouns = {c: list(words) for c, words in CORE_NOUNS.items()}
    for i, word in enumerate(extra_nouns):
        vocab.nouns[categories[i % len(categories)]].append(word)
    attr_categories = list(CORE_ATTRIBUTES)
    extra_attrs = pseudo_words(N_ATTRIBUTES - sum(map(len, CORE_ATTRIBUTES.values())), rng, taken)
    vocab.attributes = {c: list(words) for c, words in CORE_ATTRIBUTES.items()}
    for i, word in enumerate(extra_attrs):
        vocab.attributes[attr_categories[i % len(attr_categories)]].append(word)
    vocab.predicates = {pair: list(words) for pair, words in CORE_PREDICATES.items()}
    known = {p for ps in CORE_PREDICATES.values() for p in ps} | set(GENERIC_PREDICATES)
    pairs = [(a, b) for a in categories for b in categories]
    for word in pseudo_words(N_PREDICATES - len(known), rng, taken):
        vocab.predicates.setdefault(rng.choice(pairs), []).append(word)
    # Verb stems get their own namespace: with "ing" appended they cannot clash with nouns.
    stems = pseudo_words(N_VERBS - len(CORE_VERBS), rng, set(), syllables=3)
    vocab.verbs = list(CORE_VERBS) + [w + "ing" for w in stems]
    return vocab


class Generator:
    """Draws GQA-like scene graphs from a vocabulary, deterministically per seed."""

    def __init__(self, seed: int, source: str = "gqa", split: str = "train") -> None:
        self.rng = random.Random(seed)
        self.vocab = build_vocabulary(self.rng)
        self.source = source
        self.split = split
        self.noun_draw = {c: Zipf(ws) for c, ws in self.vocab.nouns.items()}
        self.attr_draw = {c: Zipf(ws) for c, ws in self.vocab.attributes.items()}
        self.pred_draw = {p: Zipf(ws) for p, ws in self.vocab.predicates.items()}
        self.generic = Zipf(GENERIC_PREDICATES)
        self.scenes = list(SCENES)
        self.next_object = 10_000_000

    def _category(self, scene: str) -> str:
        weights = SCENES[scene]
        return self.rng.choices(list(weights), weights=list(weights.values()))[0]

    def image(self, number: int) -> SceneGraph:
        """The ``number``-th image (ids are derived from the number, content from the seed)."""
        rng = self.rng
        scene = rng.choice(self.scenes)
        width, height = rng.choice(((640, 480), (500, 375), (800, 600), (500, 333)))
        count = max(1, min(40, round(rng.gauss(16, 6))))
        objects: list[Object] = []
        categories: list[str] = []
        for _ in range(count):
            category = self._category(scene)
            self.next_object += 1
            n_attrs = rng.choices((0, 1, 2, 3, 4), weights=(1, 3, 3, 2, 1))[0]
            fits = ATTRIBUTE_FIT[category]
            attrs = tuple(
                dict.fromkeys(self.attr_draw[rng.choice(fits)].draw(rng) for _ in range(n_attrs))
            )
            w = rng.randint(8, width // 2)
            h = rng.randint(8, height // 2)
            objects.append(
                Object(
                    id=str(self.next_object),
                    name=self.noun_draw[category].draw(rng),
                    attributes=attrs,
                    box=Box(rng.randint(0, width - w), rng.randint(0, height - h), w, h),
                )
            )
            categories.append(category)
        relations: list[Relation] = []
        if count > 1:
            for i, obj in enumerate(objects):
                for k in range(rng.choices((0, 1, 2), weights=(3, 4, 2))[0]):
                    j = rng.randrange(count - 1)
                    j = j + 1 if j >= i else j
                    pair = (categories[i], categories[j])
                    draw = self.pred_draw.get(pair) if rng.random() < 0.7 else None
                    name = (draw or self.generic).draw(rng)
                    relations.append(
                        Relation(
                            id=f"{obj.id}.{k}", name=name, subject=obj.id, object=objects[j].id
                        )
                    )
        return SceneGraph.build(
            source=self.source,
            original_id=str(2_000_000 + number),
            split=self.split,
            objects=objects,
            relations=relations,
            width=width,
            height=height,
            extras={"location": "indoors" if scene in ("kitchen", "room") else "outdoors"},
        )

    def images(self, count: int) -> Iterator[SceneGraph]:
        for number in range(count):
            yield self.image(number)


def generate(images: int, seed: int = 0, split: str = "train") -> Iterator[SceneGraph]:
    """``images`` GQA-like scene graphs (what ``write('gqa', ...)`` writes, before conversion)."""
    return Generator(seed, split=split).images(images)


def _write_json_object(handle: TextIO, items: Iterator[tuple[str, Any]]) -> None:
    handle.write("{")
    for i, (key, value) in enumerate(items):
        handle.write(("," if i else "") + "\n" + json.dumps(key) + ": " + json.dumps(value))
    handle.write("\n}\n")


def _write_json_array(handle: TextIO, items: Iterator[Any]) -> None:
    handle.write("[")
    for i, value in enumerate(items):
        handle.write(("," if i else "") + "\n" + json.dumps(value))
    handle.write("\n]\n")


def _vg_record(graph: SceneGraph) -> dict[str, Any]:
    objects = []
    for obj in graph.objects:
        box = obj.box or Box(0, 0, 0, 0)
        objects.append(
            {
                "object_id": int(obj.id),
                "names": [obj.name],
                "synsets": [f"{obj.name}.n.01"],
                "x": box.x,
                "y": box.y,
                "w": box.w,
                "h": box.h,
                "attributes": list(obj.attributes),
            }
        )
    relationships = [
        {
            "relationship_id": 50_000_000 + n,
            "predicate": r.name,
            "subject_id": int(r.subject),
            "object_id": int(r.object),
            "synsets": [],
        }
        for n, r in enumerate(graph.relations)
    ]
    return {"image_id": int(graph.original_id), "objects": objects, "relationships": relationships}


def _imsitu_files(gen: Generator, out: Path, images: int) -> list[Path]:
    rng = gen.rng
    roles_pool = [r for r in ROLE_CONNECTORS if r != "place"]
    nouns = [n for ws in gen.vocab.nouns.values() for n in ws]
    noun_ids = {n: f"n{10_000_000 + i:08d}" for i, n in enumerate(nouns)}
    noun_draw = Zipf(nouns)
    verbs: dict[str, dict[str, Any]] = {}
    templates: list[str] = []
    for verb in gen.vocab.verbs:
        extra = rng.sample(roles_pool, rng.randint(1, 4))
        order = ["agent", *extra, "place"]
        words = ["AGENT", verb[:-3] + "s" if verb.endswith("ing") else verb]
        for role in order[1:]:
            connector = ROLE_CONNECTORS[role] if role != order[1] else ""
            words += [*([connector] if connector else []), role.upper()]
        sentence = " ".join(words)
        templates.append(f"{verb}\t{sentence}")
        verbs[verb] = {
            "abstract": sentence,
            "def": f"synthetic verb {verb}",
            "framenet": "Synth",
            "order": order,
            "roles": {r: {"framenet": r, "def": r} for r in order},
        }
    verb_draw = Zipf(gen.vocab.verbs)

    def records() -> Iterator[tuple[str, Any]]:
        for number in range(images):
            verb = verb_draw.draw(rng)
            order = verbs[verb]["order"]
            base = {
                r: ("" if rng.random() < 0.1 and r != "agent" else noun_ids[noun_draw.draw(rng)])
                for r in order
            }
            frames = []
            for _ in range(3):
                frame = dict(base)
                for role in order:
                    if rng.random() < 0.15:
                        frame[role] = "" if rng.random() < 0.3 else noun_ids[noun_draw.draw(rng)]
                frames.append(frame)
            yield f"{verb}_{number + 1}.jpg", {"verb": verb, "frames": frames}

    with out.open("w", encoding="utf-8") as handle:
        _write_json_object(handle, records())
    space_path = out.parent / "imsitu_space.json"
    space = {
        "verbs": verbs,
        "nouns": {noun_ids[n]: {"gloss": [n], "def": f"synthetic noun {n}"} for n in nouns},
    }
    space_path.write_text(json.dumps(space) + "\n", encoding="utf-8")
    templates_path = out.parent / "generation_templates.tab"
    templates_path.write_text("\n".join(templates) + "\n", encoding="utf-8")
    return [out, space_path, templates_path]


def write(fmt: str, out: Path, *, images: int, seed: int = 0, split: str = "train") -> list[Path]:
    """Write ``images`` synthetic images in format ``fmt`` to ``out``; returns the files written."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    out.parent.mkdir(parents=True, exist_ok=True)
    gen = Generator(seed, source=fmt, split=split)
    if fmt == "imsitu":
        return _imsitu_files(gen, out, images)
    with out.open("w", encoding="utf-8") as handle:
        if fmt == "gqa":
            _write_json_object(handle, (gqa.to_record(g) for g in gen.images(images)))
        else:
            _write_json_array(handle, (_vg_record(g) for g in gen.images(images)))
    return [out]
