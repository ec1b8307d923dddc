"""Question generation per source image (DESIGN §7, paper §2.3).

For a source image: enumerate its subgraphs (a seeded sample of at most ``subgraphs_per_image``),
look up related images (positives and distractors with edit signatures), and for every template
whose preconditions hold: fill the slots, compile the program, pick images, **execute** the
program to get the answer, drop the example on any execution failure or a count answer above 5,
and try to emit the same text a second time with another image set and another answer.

Determinism: every source image gets its own ``random.Random`` seeded from ``(seed, image id)``
(:func:`~covr.questions.related_source.stable_seed`), related-image samples are seeded from
``(seed, subgraph key)``, and examples are returned in input order, so the output does not depend
on the number of worker processes, on completion order or on hash seeds. ``seed`` and the image id
regenerate any example.
"""

from __future__ import annotations

import gc
import hashlib
import json
import multiprocessing
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from covr.questions.errors import ExecutionFailure, GenerationError
from covr.questions.operators import execute
from covr.questions.related_source import RelatedImage, RelatedProvider, stable_seed
from covr.questions.render import (
    edge_clause,
    edge_positions,
    finish,
    is_finite_verb,
    phrase,
    pronoun,
    root_edges,
    root_is_plural,
    view,
    wh_clause,
    with_article,
)
from covr.questions.templates import Template, compile_program, select_templates
from covr.questions.world import AttributeTypes, PartsCache, World, default_attribute_types
from covr.related.reference import contains
from covr.scene.edits import parse_signature, signature_sort_key
from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.scene.subgraph import Subgraph
from covr.scene.text import MASS_NOUNS

if TYPE_CHECKING:
    from covr.settings import Settings

GENERATOR_VERSION = "covr-questions/1"
MAX_SEED = 2**63 - 1
MAX_IMAGES = 5
SIMILARITY_TYPES = ("color", "material", "shape")
"""Attribute types a nested similarity reference may switch to (closure_nested)."""

Example = dict[str, Any]


@dataclass(frozen=True)
class GenerationOptions:
    """Knobs of one generation request (the CLI fills them from settings and flags)."""

    split: str
    seed: int = 0
    templates: tuple[str, ...] = ()
    subgraphs_per_image: int | None = 24
    max_distance: int = 2
    per_signature: int = 3
    positives_limit: int = 6
    flip_attempts: int = 4
    max_combos: int = 8
    max_count_answer: int = 5
    enumeration: EnumerationOptions = field(default_factory=EnumerationOptions)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, split: str, seed: int = 0, templates: Sequence[str] = ()
    ) -> GenerationOptions:
        """The request's split, seed and templates plus the ``COVR_QUESTIONS_*`` and
        ``COVR_SUBGRAPH_*`` settings (what the CLI, the quick start and the service use)."""
        from covr.related.lookup import enumeration_options

        return cls(
            split=split,
            seed=seed,
            templates=tuple(templates),
            subgraphs_per_image=settings.questions_subgraphs_per_image,
            max_distance=settings.questions_max_distance,
            per_signature=settings.questions_per_signature,
            positives_limit=settings.questions_positives,
            flip_attempts=settings.questions_flip_attempts,
            max_combos=settings.questions_max_combos,
            enumeration=enumeration_options(settings),
        )

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise GenerationError("seed", f"must be an integer, got {self.seed!r}")
        if not 0 <= self.seed <= MAX_SEED:
            raise GenerationError("seed", f"must be between 0 and {MAX_SEED}, got {self.seed}")
        if not self.split:
            raise GenerationError("split", "must be a non-empty split name")
        if self.subgraphs_per_image is not None and self.subgraphs_per_image < 1:
            raise GenerationError("subgraphs_per_image", "must be >= 1")
        if not 1 <= self.max_distance <= 2:
            raise GenerationError("max_distance", "must be 1 or 2")
        for name in ("per_signature", "positives_limit"):
            if getattr(self, name) < 1:
                raise GenerationError(name, "must be >= 1")
        if self.max_combos < 1:
            raise GenerationError("max_combos", "must be >= 1")
        if self.flip_attempts < 0:
            raise GenerationError("flip_attempts", "must be >= 0")
        select_templates(self.templates)  # unknown names raise TemplateError


# -- signature rules ---------------------------------------------------------------------------


def _resolve_position(g: Subgraph, where: str, edge: int | None) -> str | None:
    if where in ("edge_object", "edge_relation"):
        if edge is None:
            return None
        return (
            f"object@{g.relations[edge].object}" if where == "edge_object" else f"relation@{edge}"
        )
    return where


@lru_cache(maxsize=65536)
def _signature_parts(sig: str) -> tuple[str, ...]:
    return parse_signature(sig)


@lru_cache(maxsize=65536)
def _signature_order(sig: str) -> tuple[int, tuple[tuple[int, int], ...]]:
    return signature_sort_key(sig)


def rule_holds(rule: str, sig: str, g: Subgraph, edge: int | None) -> bool:
    """Whether a distractor signature satisfies a template rule (``only:``, ``has:``, ``in_edge``)."""
    parts = _signature_parts(sig)
    if rule == "in_edge":
        return edge is not None and set(parts) <= edge_positions(g, edge)
    kind, _, token = rule.partition(":")
    pos = _resolve_position(g, token, edge)
    if pos is None:
        return False
    if kind == "only":
        return parts == (pos,)
    return pos in parts


# -- per-subgraph context ----------------------------------------------------------------------


@dataclass
class _Related:
    source: str
    g: Subgraph
    positives: list[str]
    distractors: list[RelatedImage]
    positive_set: frozenset[str] = frozenset()
    sigs: dict[str, list[str]] = field(default_factory=dict)
    structure: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        g = self.g
        size = len(g.objects) + sum(o.attribute is not None for o in g.objects)
        self.structure = (size + len(g.relations) + len(g.relmods), g.depth())
        self.positive_set = frozenset([self.source, *self.positives])
        for r in self.distractors:
            self.sigs.setdefault(r.image_id, []).append(r.signature)


@dataclass
class _Instance:
    """A filled template: text, program and the images it must include."""

    template: Template
    text: str
    program: list[dict[str, Any]]
    subgraphs: dict[str, str]
    required: list[str]
    edge: int | None


def _decoy_name(g: Subgraph, other: Subgraph, pos: str) -> str | None:
    kind = pos.split("@", 1)[0]
    if kind == "object":
        a, b = Counter(o.name for o in g.objects), Counter(o.name for o in other.objects)
    elif kind == "attribute":
        a = Counter(o.attribute for o in g.objects if o.attribute)
        b = Counter(o.attribute for o in other.objects if o.attribute)
    else:
        a, b = Counter(r.name for r in g.relations), Counter(r.name for r in other.relations)
    new = list((b - a).elements())
    return str(new[0]) if len(new) == 1 else None


class _ImageGenerator:
    """Everything for one source image (one ``random.Random``)."""

    def __init__(
        self,
        provider: RelatedProvider,
        options: GenerationOptions,
        templates: Sequence[Template],
        attribute_types: AttributeTypes,
    ) -> None:
        self.provider = provider
        self.options = options
        self.templates = templates
        self.types = attribute_types
        self.failures: Counter[str] = Counter()
        self.parts = PartsCache()
        self._allowed_cache: dict[tuple[str, str, int | None], bool] = {}

    # -- top level -----------------------------------------------------------------------------

    def run(self, image_id: str) -> Iterator[Example]:
        """The image's examples in their final order, each as soon as it exists (the service
        streams them while later subgraphs are still being looked up)."""
        try:
            scene = self.provider.scene(image_id)
        except KeyError:
            raise GenerationError("image", f"unknown image {image_id!r}") from None
        rng = random.Random(stable_seed(self.options.seed, image_id))
        subgraphs = enumerate_subgraphs(scene, self.options.enumeration)
        cap = self.options.subgraphs_per_image
        if cap is not None and len(subgraphs) > cap:
            subgraphs = sorted(rng.sample(subgraphs, cap), key=lambda s: s.key)
        seen: set[tuple[str, str, tuple[str, ...]]] = set()
        for g in subgraphs:
            related = self._related(image_id, g)
            self._allowed_cache.clear()
            yield from self._distinct(related, rng, seen)

    def run_subgraph(self, image_id: str, g: Subgraph) -> Iterator[Example]:
        """Examples about ``g`` alone, with ``image_id`` (an image containing ``g``) as the source
        image: the per-subgraph loop of :meth:`run` without the enumeration and sampling."""
        try:
            scene = self.provider.scene(image_id)
        except KeyError:
            raise GenerationError("image", f"unknown image {image_id!r}") from None
        if not contains(scene, g):
            raise GenerationError("image", f"image {image_id!r} does not contain {g.key!r}")
        # Own stream (salted with the key): not the stream of the image path, whose first draws
        # sample the image's subgraphs.
        rng = random.Random(stable_seed(self.options.seed, image_id, "subgraph", g.key))
        related = self._related(image_id, g)
        yield from self._distinct(related, rng, set())

    def _distinct(
        self, related: _Related, rng: random.Random, seen: set[tuple[str, str, tuple[str, ...]]]
    ) -> Iterator[Example]:
        """Every template's examples for one subgraph, without repeating an example already
        emitted for this image (same text, answer and images)."""
        for template in self.templates:
            for example in self._examples(template, related, rng):
                key = (
                    example["utterance"],
                    json.dumps(example["answer"]),
                    tuple(example["scenes"]),
                )
                if key not in seen:
                    seen.add(key)
                    yield example

    def _related(self, image_id: str, g: Subgraph) -> _Related:
        o = self.options
        positives = self.provider.positives(g, o.split, limit=o.positives_limit + 1, seed=o.seed)
        others = [p for p in positives if p != image_id][: o.positives_limit]
        distractors = self.provider.distractors(
            g, o.split, max_distance=o.max_distance, per_signature=o.per_signature, seed=o.seed
        )
        distractors = [d for d in distractors if d.image_id != image_id]
        return _Related(image_id, g, others, distractors)

    # -- one template --------------------------------------------------------------------------

    def _examples(self, template: Template, rel: _Related, rng: random.Random) -> list[Example]:
        """One example, plus a second with the same text, other images and another answer when
        some choice of the closed-class words (numbers, quantifiers, comparatives) allows it."""
        if not self._subgraph_ok(template, rel.g):
            return []
        instance_seed = rng.getrandbits(64)
        combos = self._combos(template, rng)
        first = self._instantiate(template, rel, random.Random(instance_seed), combos[0])
        if first is None:
            return []
        main: list[list[str]] = []
        flips: list[list[str]] = []
        seen: set[frozenset[str]] = set()
        for mode in ["main", "main"] + [template.images.flip] * self.options.flip_attempts:
            images = self._images(first, rel, rng, mode=mode)
            if images is None or frozenset(images) in seen:
                continue
            seen.add(frozenset(images))
            (main if mode == "main" else flips).append(images)
        if not main:
            return []
        worlds: dict[tuple[str, ...], World] = {}
        single: Example | None = None
        for i, combo in enumerate(combos):
            instance = (
                first
                if i == 0
                else self._instantiate(template, rel, random.Random(instance_seed), combo)
            )
            if instance is None:
                continue
            found: tuple[list[str], Any] | None = None
            for images in main:
                answer = self._answer(instance, images, worlds)
                if answer is not None:
                    found = (images, answer)
                    break
            if found is None:
                continue
            example = self._example(instance, rel, found[0], found[1])
            for images in [*flips, *main]:
                if frozenset(images) == frozenset(found[0]):
                    continue
                answer = self._answer(instance, images, worlds)
                if answer is not None and answer != found[1]:
                    return [example, self._example(instance, rel, images, answer)]
            if single is None:
                single = example
        return [single] if single is not None else []

    def _combos(self, template: Template, rng: random.Random) -> list[dict[str, Any]]:
        """Closed-class slot values to try, in a seeded order (at most ``max_combos``)."""
        axes: list[tuple[str, list[Any]]] = []
        for name, spec in template.slots.items():
            if "choice" in spec:
                axes.append((name, list(spec["choice"])))
            elif "number" in spec:
                low, high = spec["number"]
                axes.append((name, list(range(low, high + 1))))
        combos: list[dict[str, Any]] = [{}]
        for name, options in axes:
            combos = [{**c, name: o} for c in combos for o in options]
        rng.shuffle(combos)
        return combos[: self.options.max_combos]

    def _answer(
        self, instance: _Instance, images: list[str], worlds: dict[tuple[str, ...], World]
    ) -> Any:
        key = tuple(images)
        world = worlds.get(key)
        if world is None:
            world = worlds[key] = World.of((self.provider.scene(i) for i in images), self.parts)
        try:
            # Programs come from validated templates (and the tests re-run every one through the
            # checked executor and the oracle), so per-step type checks are skipped here.
            answer = execute(instance.program, world, self.types, check=False)
        except ExecutionFailure as exc:
            self.failures[exc.kind] += 1
            return None
        if (
            instance.template.answer_type == "number"
            and isinstance(answer, int)
            and answer > self.options.max_count_answer
        ):
            self.failures["count-above-max"] += 1
            return None
        return answer

    # -- slot filling --------------------------------------------------------------------------

    def _edge(self, template: Template, g: Subgraph, rng: random.Random) -> int | bool | None:
        """The root edge the template asks about; ``None`` if it needs none, ``False`` if no edge
        qualifies."""
        if not template.uses_edge:
            return None
        options = []
        for j in root_edges(g):
            if g.mods_of(j):
                continue  # rel-mod edges are not asked about (see docs/questions.md)
            target = g.relations[j].object
            if "root_edge_leaf" in template.subgraph and g.children(target):
                continue
            if "edge_not_finite_verb" in template.subgraph and is_finite_verb(g.relations[j].name):
                continue
            options.append(j)
        return rng.choice(options) if options else False

    def _same_type(self, a: str | None, b: str) -> bool:
        types = set(self.types.types(a or ""))
        return not types or bool(types & set(self.types.types(b)))

    def _subgraph_ok(self, template: Template, g: Subgraph) -> bool:
        attribute = g.root.attribute
        for p in template.subgraph:
            if p == "root_attribute" and attribute is None:
                return False
            if p == "root_attribute_typed" and (
                attribute is None or not self.types.types(attribute)
            ):
                return False
        return True

    def _allowed(self, template: Template, rel: _Related, image_id: str, edge: int | None) -> bool:
        key = (template.name, image_id, edge)
        cached = self._allowed_cache.get(key)
        if cached is None:
            cached = self._allowed_cache[key] = self._allowed_uncached(
                template, rel, image_id, edge
            )
        return cached

    def _allowed_uncached(
        self, template: Template, rel: _Related, image_id: str, edge: int | None
    ) -> bool:
        return not any(
            rule_holds(rule, sig, rel.g, edge)
            for sig in rel.sigs.get(image_id, ())
            for rule in template.avoid
        )

    def _instantiate(
        self, template: Template, rel: _Related, rng: random.Random, closed: Mapping[str, Any]
    ) -> _Instance | None:
        """Fill the template; ``closed`` gives the closed-class slot values, every other choice
        comes from ``rng`` (so equal seeds give equal fillings for different ``closed``)."""
        g = rel.g
        chosen_edge = self._edge(template, g, rng)
        if chosen_edge is False:
            return None
        edge = chosen_edge if isinstance(chosen_edge, int) and chosen_edge is not True else None
        required: list[str] = []
        g2: Subgraph | None = None
        subgraph_keys = {"g": g.key}
        if template.second_subgraph is not None:
            spec = template.second_subgraph
            mine = view(g, spec["view"])
            pool = [
                r
                for r in rel.distractors
                if not any(rule_holds(a, r.signature, g, edge) for a in spec.get("avoid", []))
                and view(r.subgraph, spec["view"]) != mine
            ]
            if not pool:
                return None
            pick = rng.choice(pool)
            g2 = pick.subgraph
            required.append(pick.image_id)
            subgraph_keys["g2"] = g2.key
        decoy: str | None = None
        truth: str | None = None
        if template.decoy is not None:
            pos = _resolve_position(g, template.decoy["position"], edge)
            if template.decoy["position"] == "root_attribute":
                pos = "attribute@0"
            kind = (pos or "").split("@", 1)[0]
            candidates: list[tuple[str, str]] = []
            for r in rel.distractors:
                parts = _signature_parts(r.signature)
                if pos not in parts or sum(p.startswith(kind + "@") for p in parts) != 1:
                    continue
                name = _decoy_name(g, r.subgraph, str(pos))
                if name is None or (kind == "relation" and is_finite_verb(name)):
                    continue
                if kind == "attribute" and not self._same_type(g.root.attribute, name):
                    continue  # "young or blue" is not a real choice
                candidates.append((name, r.image_id))
            if not candidates:
                return None
            # Show the decoy's image only when the template allows it (a distractor that changes
            # just the asked object would repeat the referent); the word is valid either way.
            shown = [c for c in candidates if self._allowed(template, rel, c[1], edge)]
            decoy, decoy_image = rng.choice(sorted(shown or candidates))
            if shown:
                required.append(decoy_image)
            if kind == "object":
                truth = g.objects[int(str(pos).split("@")[1])].name
            elif kind == "attribute":
                truth = g.root.attribute
            else:
                truth = g.relations[edge].name if edge is not None else None
            if truth is None or truth == decoy:
                return None
        values: dict[str, Any] = {}
        texts: dict[str, str] = {}
        plural: dict[str, bool] = {}
        views: dict[str, Subgraph] = {}
        numbers = {n: s for n, s in template.slots.items() if "number" in s}
        for name in numbers:
            values[name] = closed[name]
            texts[name] = str(values[name])
            plural[name] = values[name] != 1
        for name, spec in template.slots.items():
            if "choice" in spec:
                values[name] = closed[name]
                texts[name] = closed[name]["text"]
        for name, spec in template.slots.items():
            if "subgraph" not in spec:
                continue
            base = g if spec["subgraph"] == "g" else g2
            assert base is not None
            v = view(base, spec["view"], edge if base is g else None)
            views[name] = v
            form = spec["form"]
            counted = form == "plural" or form.startswith("count:")
            if counted and v.root.name.strip().lower() in MASS_NOUNS:
                return None  # "how many sand": mass nouns are not counted
            if form.startswith("count:"):
                n = values[form[6:]]
                if n == 1 and root_is_plural(v):
                    return None  # "exactly 1 people": no singular to count with
                texts[name] = phrase(v, "count", n)
                plural[name] = n != 1 or root_is_plural(v)
            else:
                texts[name] = phrase(v, form)
                plural[name] = form == "plural" or root_is_plural(v)
        for name, spec in template.slots.items():
            if "value" not in spec:
                continue
            kind = spec["value"]
            value = self._value(kind, g, edge, rng, decoy, truth, texts, views)
            if value is None:
                return None
            values[name] = value
            texts[name] = value["text"] if isinstance(value, dict) else str(value)
        text = rng.choice(template.text)
        utterance = finish(_fill(text, values, texts, plural), question=template.question)
        program = compile_program(template.program, values, views)
        return _Instance(template, utterance, program, subgraph_keys, required, edge)

    def _value(
        self,
        kind: str,
        g: Subgraph,
        edge: int | None,
        rng: random.Random,
        decoy: str | None,
        truth: str | None,
        texts: Mapping[str, str],
        views: Mapping[str, Subgraph],
    ) -> Any:
        if kind == "root_attribute":
            return g.root.attribute
        if kind == "root_attribute_type":
            types = self.types.types(g.root.attribute or "")
            return rng.choice(sorted(types)) if types else None
        if kind == "other_attribute_type":
            # The second hop of a nested similarity reference (CLOSURE §3) uses another type than
            # the first, from the types every object can be compared on.
            own = set(self.types.types(g.root.attribute or ""))
            others = [t for t in SIMILARITY_TYPES if t not in own]
            return rng.choice(others) if others else None
        if edge is None:
            if kind in ("object_options", "relation_options", "attribute_options"):
                pass
            else:
                return None
        if kind == "edge_relation":
            return g.relations[edge].name if edge is not None else None
        if kind == "edge_clause_plural" and edge is not None:
            target = view(g, "edge_target", edge)
            return edge_clause(g.relations[edge].name, phrase(target, "a"), True)
        if kind == "edge_wh_clause" and edge is not None:
            ref = view(g, "no_edge", edge)
            return wh_clause(phrase(ref, "the"), root_is_plural(ref), g.relations[edge].name)
        if kind == "edge_pronoun" and edge is not None:
            return pronoun(view(g, "edge_target", edge))
        if decoy is None or truth is None:
            return None
        pair = [truth, decoy]
        rng.shuffle(pair)
        if kind == "object_options":
            text = f"{with_article(pair[0])} or {with_article(pair[1])}"
        else:
            text = f"{pair[0]} or {pair[1]}"
        return {"first": pair[0], "second": pair[1], "text": text}

    # -- images --------------------------------------------------------------------------------

    def _images(
        self, instance: _Instance, rel: _Related, rng: random.Random, mode: str
    ) -> list[str] | None:
        rule = instance.template.images
        template = instance.template
        edge = instance.edge
        chosen: list[str] = []
        use_source = rule.source
        low, high = rule.positives
        positives_ok = True
        anchor_pool: list[str] = []
        keep_required = True
        if mode == "positives":
            use_source = rng.random() < 0.5
            low, high = 0, min(MAX_IMAGES - 1, max(high, 1) + 1)
        elif mode in ("anchor", "second"):
            use_source = False
            positives_ok = False
            anchor_pool = sorted(
                i
                for i in rel.sigs
                if i not in rel.positive_set and not self._allowed(template, rel, i, edge)
            )
        elif mode == "drop_source":
            use_source = False
            positives_ok = False
            keep_required = rng.random() < 0.5
        if use_source:
            chosen.append(rel.source)
        if keep_required:
            for r in instance.required:
                if r not in chosen:
                    chosen.append(r)
        if anchor_pool:
            a = rng.choice(anchor_pool)
            if a not in chosen:
                chosen.append(a)
        if positives_ok and rel.positives:
            k = rng.randint(min(low, len(rel.positives)), min(high, len(rel.positives)))
            for p in rng.sample(rel.positives, k):
                if len(chosen) < MAX_IMAGES and p not in chosen:
                    chosen.append(p)
        d_low, d_high = rule.distractors
        if mode != "main" and chosen:
            d_low = 0  # a second image set may do without distractors (e.g. "All ..." -> True)
        room = MAX_IMAGES - len(chosen)
        n = min(rng.randint(d_low, d_high), room)
        if n > 0:
            prefer = mode == "main" or rng.random() < 0.5
            chosen += self._distractors(template, rel, rng, n, set(chosen), edge, prefer=prefer)
        if not chosen or len(chosen) > MAX_IMAGES:
            return None
        rng.shuffle(chosen)
        return chosen

    def _distractors(
        self,
        template: Template,
        rel: _Related,
        rng: random.Random,
        n: int,
        exclude: set[str],
        edge: int | None,
        *,
        prefer: bool = True,
    ) -> list[str]:
        by_sig: dict[str, list[str]] = {}
        for r in rel.distractors:
            if r.image_id in exclude or not self._allowed(template, rel, r.image_id, edge):
                continue
            by_sig.setdefault(r.signature, []).append(r.image_id)
        sigs = sorted(by_sig, key=_signature_order)
        rng.shuffle(sigs)
        rules = template.prefer if prefer else ()
        preferred = [s for s in sigs if any(rule_holds(p, s, rel.g, edge) for p in rules)]
        order = preferred + [s for s in sigs if s not in preferred]
        queues = {s: rng.sample(by_sig[s], len(by_sig[s])) for s in order}
        picked: list[str] = []
        while len(picked) < n and any(queues.values()):
            for s in order:
                while queues[s] and queues[s][0] in picked:
                    queues[s].pop(0)
                if queues[s] and len(picked) < n:
                    picked.append(queues[s].pop(0))
        return picked

    # -- output --------------------------------------------------------------------------------

    def _example(
        self, instance: _Instance, rel: _Related, images: list[str], answer: Any
    ) -> Example:
        t = instance.template
        signatures = {
            i: (
                []
                if i in rel.positive_set
                else sorted(set(rel.sigs.get(i, ())), key=_signature_order)
            )
            for i in images
        }
        example: Example = {
            "qid": "",
            "utterance": instance.text,
            "scenes": list(images),
            "answer": answer,
            "pattern_name": t.pattern_name,
            "program": instance.program,
            "properties": [],
            "template": t.name,
            "paper_template": t.paper_template,
            "answer_type": t.answer_type,
            "source_image": rel.source,
            "subgraphs": dict(instance.subgraphs),
            "structure": list(rel.structure),
            "signatures": signatures,
            "seed": self.options.seed,
            "generator_version": GENERATOR_VERSION,
            "split": self.options.split,
        }
        example["qid"] = qid(example)
        return example


def qid(example: Mapping[str, Any]) -> str:
    """A stable id from what makes an example distinct (split, template, text, images, answer)."""
    key = json.dumps(
        [
            example["split"],
            example["template"],
            example["utterance"],
            example["scenes"],
            example["answer"],
        ],
        ensure_ascii=False,
    )
    return f"{example['split']}-{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}"


def _fill(
    text: str, values: Mapping[str, Any], texts: Mapping[str, str], plural: Mapping[str, bool]
) -> str:
    out = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            out.append(text[pos:])
            break
        end = text.index("}", start)
        out.append(text[pos:start])
        inner = text[start + 1 : end]
        agreement, _, target = inner.rpartition(":")
        slot, _, field_name = target.partition(".")
        if agreement == "is":
            out.append("are" if plural.get(slot, False) else "is")
        elif agreement == "images":
            out.append("images" if plural.get(slot, False) else "image")
        elif agreement == "contain":
            out.append("contain" if plural.get(slot, False) else "contains")
        elif field_name:
            out.append(str(values[slot][field_name]))
        else:
            out.append(texts[slot])
        pos = end + 1
    return "".join(out)


# -- driver ------------------------------------------------------------------------------------

_WORKER: tuple[RelatedProvider, GenerationOptions] | None = None


def _generator(
    provider: RelatedProvider, options: GenerationOptions, attribute_types: AttributeTypes | None
) -> _ImageGenerator:
    return _ImageGenerator(
        provider,
        options,
        select_templates(options.templates),
        attribute_types or default_attribute_types(),
    )


def generate_for_image(
    provider: RelatedProvider,
    options: GenerationOptions,
    image_id: str,
    attribute_types: AttributeTypes | None = None,
) -> list[Example]:
    """Every example generated from one source image (deterministic for the options' seed)."""
    return list(iter_for_image(provider, options, image_id, attribute_types))


def iter_for_image(
    provider: RelatedProvider,
    options: GenerationOptions,
    image_id: str,
    attribute_types: AttributeTypes | None = None,
) -> Iterator[Example]:
    """:func:`generate_for_image` one example at a time, in the same order: a caller that sends
    examples on (the gRPC stream) overlaps its work with the lookups of later subgraphs, and one
    that wants only the first ``n`` stops the generation there."""
    return _generator(provider, options, attribute_types).run(image_id)


def choose_source_image(positives: Sequence[str], g: Subgraph, seed: int) -> str:
    """The source image of questions about a given subgraph: a seeded choice among images that
    contain it (DESIGN §7: the source image is the first positive). ``positives`` is the lookup's
    seeded sample; it is sorted first so the choice depends only on the set, ``g`` and the seed."""
    if not positives:
        raise GenerationError("subgraph", f"no image contains {g.key!r}")
    rng = random.Random(stable_seed(seed, "source", g.key))
    return rng.choice(sorted(positives))


def generate_for_subgraph(
    provider: RelatedProvider,
    options: GenerationOptions,
    g: Subgraph,
    image_id: str,
    attribute_types: AttributeTypes | None = None,
) -> list[Example]:
    """Every example about ``g`` with ``image_id`` as the source image (it must contain ``g``):
    the same templates, slot filling, image picking and execution as :func:`generate_for_image`,
    for this one subgraph (deterministic for the options' seed)."""
    return list(iter_for_subgraph(provider, options, g, image_id, attribute_types))


def iter_for_subgraph(
    provider: RelatedProvider,
    options: GenerationOptions,
    g: Subgraph,
    image_id: str,
    attribute_types: AttributeTypes | None = None,
) -> Iterator[Example]:
    """:func:`generate_for_subgraph` one example at a time (see :func:`iter_for_image`)."""
    return _generator(provider, options, attribute_types).run_subgraph(image_id, g)


def _work(image_id: str) -> list[Example]:
    assert _WORKER is not None
    provider, options = _WORKER
    return generate_for_image(provider, options, image_id)


def check_images(
    provider: RelatedProvider, options: GenerationOptions, image_ids: Sequence[str]
) -> None:
    """Raise :class:`GenerationError` for unknown images, images of another split and images
    without any subgraph (nothing could be asked about them)."""
    for image_id in image_ids:
        try:
            scene = provider.scene(image_id)
        except KeyError:
            raise GenerationError("image", f"unknown image {image_id!r}") from None
        if scene.split != options.split:
            raise GenerationError(
                "image",
                f"image {image_id!r} belongs to split {scene.split!r}, not {options.split!r}",
            )
        if not enumerate_subgraphs(scene, options.enumeration):
            raise GenerationError("image", f"image {image_id!r} has no subgraph to ask about")


def generate(
    provider: RelatedProvider,
    options: GenerationOptions,
    image_ids: Sequence[str],
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Example]:
    """Examples for the images in input order; ``workers > 1`` uses forked processes (the provider
    is inherited, not pickled) and returns the same bytes as one worker."""
    global _WORKER
    if workers < 1:
        raise GenerationError("workers", "must be >= 1")
    if workers == 1 or len(image_ids) < 2:
        for image_id in image_ids:
            yield from generate_for_image(provider, options, image_id)
            if progress:
                progress(1)
        return
    _WORKER = (provider, options)
    # Whatever is built lazily is built once here, before the fork, and shared by the workers.
    select_templates(options.templates)
    default_attribute_types()
    prepare = getattr(provider, "prepare", None)
    if callable(prepare):
        prepare()
    ctx = multiprocessing.get_context("fork")
    # Keep the collector away from the inherited index: without this, each worker's first full
    # collection touches every object and copies the parent's pages (slower than one worker at 1x).
    gc.freeze()
    try:
        with ctx.Pool(workers) as pool:
            for batch in pool.imap(_work, image_ids, chunksize=2):
                yield from batch
                if progress:
                    progress(1)
    finally:
        _WORKER = None
        gc.unfreeze()
