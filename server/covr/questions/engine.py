"""One source image's examples: subgraphs, templates, images, execution, second answers.

The driver (:mod:`covr.questions.generate`) runs one :class:`ImageGenerator` per source image;
this module holds its loop. Filling a template is :mod:`covr.questions.slots`, picking images
:mod:`covr.questions.picking`; here the pieces meet: for every subgraph and template, fill,
pick the main image sets, execute, and try flip sets for an example with another answer.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain
from typing import TYPE_CHECKING, Any

from covr.questions.answer_rules import PictureChecks
from covr.questions.degeneracy import follows_from_image_count
from covr.questions.errors import ExecutionFailure, GenerationError
from covr.questions.example import Example
from covr.questions.operators import execute
from covr.questions.picking import pick_images, swaps
from covr.questions.signature_rules import rule_holds, signature_order
from covr.questions.slots import Instance, Related, instantiate
from covr.questions.templates import Template
from covr.questions.world import AttributeTypes, PartsCache, World
from covr.related.api import (
    RelatedImage,
    RelatedProvider,
    RelatedRequest,
    contains,
    stable_seed,
)
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.subgraph import Subgraph

if TYPE_CHECKING:
    from covr.questions.options import GenerationOptions

GENERATOR_VERSION = "covr-questions/6"
"""Bumped when the same seed draws other examples: /2 seeds each form's draws and each
subgraph's lookup apart, keeps only texts with two answers and drops image-count shortcuts;
/3 the answer rules of issues 36 and 37; /4 parts per whole, wholes named by their parts,
materials, picture synonyms and a lower nested-box share (the third issue 36 audit); /5 things
drawn on signs and pictures, body and animal parts per owner (the fourth); /6 coatings, one
thing named two ways, parts half inside their whole, positions not tying a drawn thing (the
fifth)."""
MAX_LOOKUP_SEED = 2**63 - 1
"""Lookup seeds stay within the service's seed range (0 .. 2^63-1)."""


class ImageGenerator:
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
        self.by_form: dict[str, Counter[str]] = {}
        """Why candidate examples were dropped, per form (execution failures, ``degenerate``,
        ``no-second-answer``...): what ``covr generate`` reports per template."""
        self.failures: Counter[str] = Counter()
        """The counter of the form being filled (one of :attr:`by_form`)."""
        self.made: Counter[str] = Counter()
        """Examples of each form this source image gave (``options.per_source``)."""
        self.shown: Counter[str] = Counter()
        """How many of this source image's examples showed each image (spreads image use)."""
        self.full_forms: Callable[[], AbstractSet[str]] = frozenset
        """Forms the driver needs no more examples of (``--per-template``): they are not filled
        and a subgraph that only they could use is not looked up. The driver only ever adds to
        it, for forms filled by source images before this one, so skipping them changes no
        example this image keeps (each form draws from a stream of its own)."""
        self.parts = PartsCache()
        self._allowed_cache: dict[tuple[str, str, int | None], bool] = {}
        self.checks = PictureChecks(provider, attribute_types)
        """Whether an image set's answer holds on the pictures, not only on the annotation."""
        self._needs_distractors = all(t.images.min_distractors >= 1 for t in templates)

    # -- top level -----------------------------------------------------------------------------

    def run(self, image_id: str) -> Iterator[Example]:
        """The image's examples in their final order, each as soon as it exists (the service
        streams them while later subgraphs are still being looked up)."""
        self.provider.refresh()
        try:
            scene = self.provider.scene(image_id)
        except KeyError:
            raise GenerationError("image", f"unknown image {image_id!r}") from None
        rng = random.Random(stable_seed(self.options.seed, image_id))
        subgraphs = enumerate_subgraphs(scene, self.options.enumeration)
        cap = self.options.subgraphs_per_image
        if cap is not None and len(subgraphs) > cap:
            subgraphs = sorted(rng.sample(subgraphs, cap), key=lambda s: s.key)
        seen: set[tuple[str, str, frozenset[str]]] = set()
        for g in subgraphs:
            forms = self._forms(g)
            if not forms:
                continue
            related = self._related(image_id, g)
            self._allowed_cache.clear()
            yield from self._distinct(related, forms, seen)

    def run_subgraph(self, image_id: str, g: Subgraph) -> Iterator[Example]:
        """Examples about ``g`` alone, with ``image_id`` (an image containing ``g``) as the source
        image: the per-subgraph loop of :meth:`run` without the enumeration and sampling."""
        try:
            scene = self.provider.scene(image_id)
        except KeyError:
            raise GenerationError("image", f"unknown image {image_id!r}") from None
        if not contains(scene, g):
            raise GenerationError("image", f"image {image_id!r} does not contain {g.key!r}")
        forms = self._forms(g)
        if not forms:
            return
        related = self._related(image_id, g)
        yield from self._distinct(related, forms, set())

    def _forms(self, g: Subgraph) -> list[Template]:
        """The forms that can use ``g`` and are still wanted (none: ``g`` is not looked up)."""
        full = self.full_forms()
        cap = self.options.per_source
        return [
            t
            for t in self.templates
            if t.name not in full
            and (cap is None or self.made[t.name] < cap)
            and self._subgraph_ok(t, g)
        ]

    def _form_rng(self, image_id: str, g: Subgraph, template: Template) -> random.Random:
        """The draws of one form's examples about one subgraph: a stream of its own (seeded with
        the image, the subgraph's key and the form), the same on the image path and in
        :meth:`run_subgraph`. Why so fine: a subgraph without distractor images, or a form the
        driver no longer wants (``--per-template``), is then skipped without changing what any
        other subgraph or form draws."""
        return random.Random(
            stable_seed(self.options.seed, image_id, "subgraph", g.key, template.name)
        )

    def _form_failures(self, template: Template) -> Counter[str]:
        counter = self.by_form.get(template.name)
        if counter is None:
            counter = self.by_form[template.name] = Counter()
        return counter

    def _distinct(
        self,
        related: Related,
        forms: Sequence[Template],
        seen: set[tuple[str, str, frozenset[str]]],
    ) -> Iterator[Example]:
        """Every wanted form's examples for one subgraph, without repeating an example already
        emitted for this image (same text, answer and image *set*: the order in which images
        are shown is not part of a question, issue 36 item 5).

        A subgraph without distractor images gives no example when every form must show one
        (``min_distractors``; paper §3): its templates are not filled at all. On the 100-image
        sample that is 1,941 of 2,387 subgraphs, whose fillings and image picks were 15 % of a
        run's CPU; each is counted once per form as ``no-distractor``."""
        if not related.distractors and self._needs_distractors:
            for template in forms:
                self._form_failures(template)["no-distractor"] += 1
            return
        for template in forms:
            self.failures = self._form_failures(template)
            rng = self._form_rng(related.source, related.g, template)
            for example in self._examples(template, related, rng):
                key = (
                    example["utterance"],
                    json.dumps(example["answer"]),
                    frozenset(example["scenes"]),
                )
                if key not in seen:
                    seen.add(key)
                    self.shown.update(example["scenes"])
                    self.made[template.name] += 1
                    yield example

    def _related(self, image_id: str, g: Subgraph) -> Related:
        o = self.options
        request = RelatedRequest(
            g,
            split=o.split,
            positives_limit=o.positives_limit + 1,
            max_distance=o.max_distance,
            per_signature=o.per_signature,
            seed=self._lookup_seed(g),
            positives_if_distractors=self._needs_distractors,
        )
        positives, distractors = self.provider.related(request)
        others = [p for p in positives if p != image_id]
        others = self._least_shown(others)[: o.positives_limit]
        distractors = [d for d in distractors if d.image_id != image_id]
        by_signature: dict[str, list[RelatedImage]] = {}
        for d in distractors:
            by_signature.setdefault(d.signature, []).append(d)
        kept = {id(d) for group in by_signature.values() for d in self._least_shown_images(group)}
        return Related(image_id, g, others, [d for d in distractors if id(d) in kept])

    def _least_shown(self, images: list[str]) -> list[str]:
        """``images`` with the ones this source image's examples showed least first (stable)."""
        return sorted(images, key=lambda i: self.shown[i])

    def _least_shown_images(self, group: list[RelatedImage]) -> list[RelatedImage]:
        """The candidates of one edit signature that this source image's examples showed least
        (issue 36 item 1: "prefer less-shown candidates among equals"). Images with many objects
        are distractors for most subgraphs of an image, and on 100 real GQA images one was in
        20 % of the examples; here each source image spreads its examples over the candidates
        its lookups offer. Per source image, so the choice does not depend on workers or Ray
        shards, and a share bounded per source image is bounded for the run."""
        fewest = min(self.shown[d.image_id] for d in group)
        return [d for d in group if self.shown[d.image_id] <= fewest]

    def _lookup_seed(self, g: Subgraph) -> int:
        """The seed of ``g``'s related-image lookup: the run's seed and ``g``'s key (issue 36
        item 1). With the run's seed alone every subgraph with one edit signature walked the
        candidates from the same start, and on 100 real GQA images one image was in 37 % of
        the examples. Not the source image: the lookup of a subgraph many images share (a
        single noun) is then cached once for the run, and each source image's own stream
        still picks its images among the lookup's candidates."""
        return stable_seed(self.options.seed, "related", g.key) & MAX_LOOKUP_SEED

    # -- one template --------------------------------------------------------------------------

    def _examples(self, template: Template, rel: Related, rng: random.Random) -> list[Example]:
        """One example, plus a second with the same text, other images and another answer when
        some choice of the closed-class words (numbers, quantifiers, comparatives) allows it."""
        if not self._subgraph_ok(template, rel.g):
            return []
        instance_seed = rng.getrandbits(64)
        combos = self._combos(template, rng)
        first = self._instantiate(template, rel, random.Random(instance_seed), combos[0])
        if first is None:
            return []
        main, flips = self._image_sets(first, rel, rng)
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
            found = self._first_answer(instance, main, worlds)
            if found is None:
                continue
            example = self._example(instance, rel, found[0], found[1])
            for images in chain(flips, main, swaps(instance, rel, found[0], rng, self._allowed)):
                if frozenset(images) == frozenset(found[0]):
                    continue
                if self.options.pairs_only and len(images) != len(found[0]):
                    # a text's two answers over as many images each: then how many images are
                    # shown says nothing about the answer (issue 36: with the two answers over
                    # 2 and 5 images, an image-count baseline beat MAJTEMPL by 25 points)
                    continue
                answer = self._answer(instance, images, worlds)
                if answer is not None and answer != found[1]:
                    return [example, self._example(instance, rel, images, answer)]
            if single is None:
                single = example
        if single is not None and self.options.pairs_only:
            # a text with one answer teaches its answer from its words (paper App. C balances
            # with both); forms that find no second image set are reported, not padded
            self.failures["no-second-answer"] += 1
            return []
        return [single] if single is not None else []

    def _image_sets(
        self, first: Instance, rel: Related, rng: random.Random
    ) -> tuple[list[list[str]], list[list[str]]]:
        """Two tries at a main image set, then ``flip_attempts`` in the template's flip mode."""
        main: list[list[str]] = []
        flips: list[list[str]] = []
        seen: set[frozenset[str]] = set()
        flip = first.template.images.flip
        for mode in ["main", "main"] + [flip] * self.options.flip_attempts:
            images = pick_images(first, rel, rng, mode, self._allowed)
            if images is None:
                self.failures[f"images-{mode}"] += 1
                continue
            if frozenset(images) in seen:
                continue
            seen.add(frozenset(images))
            (main if mode == "main" else flips).append(images)
        return main, flips

    def _first_answer(
        self, instance: Instance, main: list[list[str]], worlds: dict[tuple[str, ...], World]
    ) -> tuple[list[str], Any] | None:
        for images in main:
            answer = self._answer(instance, images, worlds)
            if answer is not None:
                return images, answer
        return None

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

    def _instantiate(
        self, template: Template, rel: Related, rng: random.Random, closed: Mapping[str, Any]
    ) -> Instance | None:
        return instantiate(template, rel, rng, closed, self.types, self._allowed, self.failures)

    def _answer(
        self, instance: Instance, images: list[str], worlds: dict[tuple[str, ...], World]
    ) -> Any:
        reason = self.checks.rejects(instance, images)
        if reason is not None:
            self.failures[reason] += 1
            return None
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
        if follows_from_image_count(instance.program, len(images), answer):
            self.failures["count-shortcut"] += 1
            return None
        return answer

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

    def _allowed(self, template: Template, rel: Related, image_id: str, edge: int | None) -> bool:
        key = (template.name, image_id, edge)
        cached = self._allowed_cache.get(key)
        if cached is None:
            cached = self._allowed_cache[key] = not any(
                rule_holds(rule, sig, rel.g, edge)
                for sig in rel.sigs.get(image_id, ())
                for rule in template.avoid
            )
        return cached

    # -- output --------------------------------------------------------------------------------

    def _example(self, instance: Instance, rel: Related, images: list[str], answer: Any) -> Example:
        t = instance.template
        signatures = {
            i: (
                []
                if i in rel.positive_set
                else sorted(set(rel.sigs.get(i, ())), key=signature_order)
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


def qid(example: Example) -> str:
    """A stable id from everything that makes an example distinct: split, template, program,
    text, the *set* of images and answer (issue 16 item 5; the set, since issue 36 item 5:
    the same question over the same images shown in another order is the same example).

    Why the program: two subgraphs can render to the same words over the same images yet ask
    different things (the text hides a rel-mod or an attribute the program checks); without it
    their ids collided and ``covr properties`` / ``covr split`` refused the file. What is *not*
    hashed (seed, source image, signatures) is provenance: the same question over the same
    images is one example however it was reached, so equal ids across runs mean equal examples
    and :func:`covr.questions.generate.iter_examples` drops the repeats."""
    key = json.dumps(
        [
            example["split"],
            example["template"],
            example["program"],
            example["utterance"],
            sorted(example["scenes"]),
            example["answer"],
        ],
        ensure_ascii=False,
        sort_keys=True,
    )
    return f"{example['split']}-{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}"
