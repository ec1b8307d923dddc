"""Question generation per source image (DESIGN §7, paper §2.3).

For a source image: enumerate its subgraphs (a seeded sample of at most ``subgraphs_per_image``),
look up related images (positives and distractors with edit signatures), and for every template
whose preconditions hold: fill the slots, compile the program, pick images, **execute** the
program to get the answer, drop the example on any execution failure or a count answer above 5,
and try to emit the same text a second time with another image set and another answer.

Determinism: every source image gets its own ``random.Random`` seeded from ``(seed, image id)``
(:func:`~covr.related.api.stable_seed`), related-image samples are seeded from
``(seed, subgraph key)``, and examples are returned in input order, so the output does not depend
on the number of worker processes, on completion order or on hash seeds. ``seed`` and the image id
regenerate any example.
"""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, ParamSpec, cast

from covr.collector import batch_collection
from covr.questions.engine import GENERATOR_VERSION, ImageGenerator, qid
from covr.questions.errors import GenerationError
from covr.questions.example import Example
from covr.questions.options import MAX_SEED, GenerationOptions
from covr.questions.quota import FormQuota, by_text
from covr.questions.templates import MAX_IMAGES, select_templates
from covr.questions.world import AttributeTypes, default_attribute_types
from covr.related.api import RelatedProvider, stable_seed
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.subgraph import Subgraph

__all__ = [
    "GENERATOR_VERSION",
    "MAX_IMAGES",
    "MAX_SEED",
    "Example",
    "GenerationOptions",
    "check_images",
    "choose_source_image",
    "generate",
    "generate_for_image",
    "generate_for_subgraph",
    "iter_examples",
    "iter_for_image",
    "iter_for_subgraph",
    "qid",
]

P = ParamSpec("P")


def spread_over(options: GenerationOptions, sources: int) -> GenerationOptions:
    """``options`` with ``per_source`` set for a ``per_template`` run over ``sources`` images:
    each source image gives each form about twice its even share, a pair at least (issue 36:
    with the quota alone the first source images in id order filled the common forms and were
    shown in a fifth of the examples)."""
    if options.per_template is None or options.per_source is not None or sources < 1:
        return options
    share = -(-options.per_template // sources)  # ceil
    return dataclasses.replace(options, per_source=max(PAIR, 2 * share))


PAIR = 2
"""The two examples of one text."""


# -- driver ------------------------------------------------------------------------------------

_WORKER: tuple[RelatedProvider, GenerationOptions, Callable[[], frozenset[str]]] | None = None


def _generator(
    provider: RelatedProvider, options: GenerationOptions, attribute_types: AttributeTypes | None
) -> ImageGenerator:
    """One source image's generator (templates and attribute types resolved)."""
    return ImageGenerator(
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


def _work(image_id: str) -> tuple[list[Example], dict[str, int]]:
    assert _WORKER is not None
    provider, options, full = _WORKER
    dropped: Counter[str] = Counter()
    return list(image_examples(provider, options, image_id, dropped, full)), dict(dropped)


def image_examples(
    provider: RelatedProvider,
    options: GenerationOptions,
    image_id: str,
    dropped: Counter[str] | None,
    full: Callable[[], AbstractSet[str]] = frozenset,
) -> Iterator[Example]:
    """One image's examples; then its generator's drop reasons are added to ``dropped``, each
    as ``reason`` (the run's totals) and ``form/reason`` (per form). ``full``: the forms the
    run no longer wants (:mod:`covr.questions.quota`)."""
    generator = _generator(provider, options, None)
    generator.full_forms = full
    yield from generator.run(image_id)
    if dropped is not None:
        add_form_reasons(dropped, generator.by_form)


def add_form_reasons(dropped: Counter[str], by_form: Mapping[str, Counter[str]]) -> None:
    """Add per-form drop reasons to a run's counter: totals under ``reason``, and ``form/reason``."""
    for form, reasons in by_form.items():
        for reason, n in reasons.items():
            dropped[reason] += n
            dropped[f"{form}/{reason}"] += n


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


def iter_examples(
    provider: RelatedProvider,
    options: GenerationOptions,
    image_ids: Sequence[str],
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    dropped: Counter[str] | None = None,
    quota: FormQuota | None = None,
) -> Iterator[Example]:
    """Examples for the images in input order, each ``qid`` once: a repeat (the same question
    over the same images reached from another source image or subgraph) is dropped, so a raw
    output file feeds ``covr properties`` and every ``covr split`` builder (issue 16 item 5).
    ``workers > 1`` returns the same bytes as one worker. ``dropped`` (when given) receives how
    many candidates were dropped and why (``covr generate`` writes it for ``covr stats``).
    ``options.per_template`` keeps about that many examples per form, in image order, and the
    run ends when every form has them (``quota``, when given, is the one used: it holds the
    per-form counts afterwards). ``options.max_image_share`` holds the run's examples until its
    end, when texts past the share are taken out (:meth:`FormQuota.trim`)."""
    seen: set[str] = set()
    drops: Counter[str] = dropped if dropped is not None else Counter()
    forms = [t.name for t in select_templates(options.templates)]
    if quota is None:
        quota = FormQuota.for_run(options)
    held: list[list[Example]] = []  # with an image cap, the run's texts until it is trimmed
    with batch_collection():  # forked workers inherit it
        stream = _iter_all(provider, options, image_ids, workers, progress, drops, quota, forms)
        for text in by_text(stream):
            new = [e for e in text if e["qid"] not in seen]
            if len(new) < len(text):  # a total only, as the Ray merge counts it
                drops["duplicate-qid"] += len(text) - len(new)
            if quota.admit(new):
                seen.update(e["qid"] for e in new)
                if quota.image_share is None:
                    yield from new
                else:
                    held.append(new)
    for text in quota.select(held):
        yield from text


def _iter_all(
    provider: RelatedProvider,
    options: GenerationOptions,
    image_ids: Sequence[str],
    workers: int,
    progress: Callable[[int], None] | None,
    dropped: Counter[str],
    quota: FormQuota,
    forms: Sequence[str],
) -> Iterator[Example]:
    """Every example, repeats included; ``workers > 1`` uses forked processes (the provider is
    inherited, not pickled) and returns the same bytes as one worker. Stops when ``quota``
    has every form full (the caller admits examples as they are yielded)."""
    global _WORKER
    if workers < 1:
        raise GenerationError("workers", "must be >= 1")
    if workers == 1 or len(image_ids) < 2:
        for image_id in image_ids:
            if quota.done(forms):
                return
            yield from image_examples(
                provider, options, image_id, dropped, lambda: frozenset(quota.full)
            )
            if progress:
                progress(1)
        return
    # forms the merge found full, shared with the forked workers (one byte per form; only ever
    # set, so a worker that reads a stale byte merely does work that is dropped)
    flags = multiprocessing.get_context("fork").RawArray("b", len(forms))
    names = list(forms)

    def full() -> frozenset[str]:
        return frozenset(name for name, flag in zip(names, flags, strict=True) if flag)

    _WORKER = (provider, options, full)
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
            for batch, reasons in pool.imap(_work, image_ids, chunksize=2):
                dropped.update(reasons)
                yield from batch
                for k, name in enumerate(names):
                    if name in quota.full:
                        flags[k] = 1
                if progress:
                    progress(1)
                if quota.done(forms):
                    break
    finally:
        _WORKER = None
        gc.unfreeze()


def _as_plain_dicts(
    stream: Callable[P, Iterator[Example]],
) -> Callable[P, Iterator[dict[str, Any]]]:
    """The same function, typed as yielding plain JSON dicts (each of the ``Example`` shape)."""
    return cast("Callable[P, Iterator[dict[str, Any]]]", stream)


generate = _as_plain_dicts(iter_examples)
""":func:`iter_examples` for callers that hold examples as plain dicts (the tests' shared
example helper); the CLI and the service use the typed name."""
