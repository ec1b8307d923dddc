"""Where a question request starts: its source image and split, and the example stream.

The service asks for questions about an image or about a subgraph; both need a decision before
the engine runs (which stored image is the source, which split the images come from, what tells
"nothing to ask" apart from an empty result). Those decisions are the question room's, so they
live here and the service makes one call (:func:`for_image` or :func:`for_subgraph`).

A request may also carry a per-form quota and an image share (``covr generate --per-template N
--max-image-share S``, issue 36 item 2): the examples then pass the run's
:class:`~covr.questions.quota.FormQuota` exactly as ``covr generate`` applies it to one source
image (:func:`covr.questions.generate.iter_examples`: texts admitted in order, repeats by qid
dropped, forms the quota has filled no longer asked of the engine, the image share selected at
the end), and the stream's :attr:`QuestionStream.summary` gives what ``covr generate`` writes
into ``OUT.dropped.json``. Not through ``iter_examples`` itself: it changes the process's
collector thresholds for a batch job (:mod:`covr.collector`), which overlapping RPC threads
must not do.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from covr.questions.config import QuestionSettings
from covr.questions.engine import ImageGenerator
from covr.questions.errors import GenerationError, SourceNotFound
from covr.questions.example import Example
from covr.questions.generate import (
    add_form_reasons,
    check_images,
    choose_source_image,
    image_examples,
    iter_for_image,
    iter_for_subgraph,
    spread_over,
)
from covr.questions.options import GenerationOptions
from covr.questions.quota import FormQuota, by_text
from covr.questions.templates import select_templates
from covr.questions.world import default_attribute_types
from covr.related.api import RelatedSettings
from covr.related.store_provider import StoreRelated
from covr.scene.subgraph import Subgraph


@dataclass
class QuestionStream:
    """The examples of one request, produced lazily, and what to check when there are none
    (``None`` = an empty result needs no explanation)."""

    examples: Iterator[Example]
    on_empty: Callable[[], None] | None = None
    summary: Callable[[], dict[str, Any]] | None = None
    """With a quota or an image share: once the examples are exhausted (or the caller stopped
    taking them), what ``covr generate`` writes into ``OUT.dropped.json`` for them (see
    :meth:`QuotaRun.summary`); ``None`` without either."""


@dataclass
class QuotaRun:
    """One request's quota, image share and counts: the examples it keeps of a generator's
    stream and the summary of what it kept and dropped."""

    options: GenerationOptions
    quota: FormQuota
    dropped: Counter[str] = field(default_factory=Counter)
    shown: Counter[str] = field(default_factory=Counter)
    """How many of the examples taken show each image."""
    taken: int = 0
    """Examples the caller took from :meth:`kept`."""

    @classmethod
    def start(
        cls,
        options: GenerationOptions,
        per_template: int | None,
        max_image_share: float | None,
    ) -> QuotaRun | None:
        """The run of a request (``None`` when it sets neither): ``options`` with the quota and
        the share, spread over one source image as ``covr generate --image`` does
        (:func:`~covr.questions.generate.spread_over`)."""
        if per_template is None and max_image_share is None:
            return None
        options = spread_over(
            dataclasses.replace(
                options, per_template=per_template, max_image_share=max_image_share
            ),
            1,
        )
        return cls(options, FormQuota.for_run(options))

    def full(self) -> frozenset[str]:
        """The forms the quota no longer admits (the engine skips them)."""
        return frozenset(self.quota.full)

    def kept(self, examples: Iterator[Example]) -> Iterator[Example]:
        """The examples of ``examples`` the run keeps, in the order ``covr generate`` writes
        them (the loop of :func:`~covr.questions.generate.iter_examples` for one image)."""
        seen: set[str] = set()
        held: list[list[Example]] = []
        for text in by_text(examples):
            new = [e for e in text if e["qid"] not in seen]
            if len(new) < len(text):
                self.dropped["duplicate-qid"] += len(text) - len(new)
            if self.quota.admit(new):
                seen.update(e["qid"] for e in new)
                if self.quota.image_share is None:
                    yield from self._taken(new)
                else:
                    held.append(new)
        for text in self.quota.select(held):
            yield from self._taken(text)

    def _taken(self, text: list[Example]) -> Iterator[Example]:
        for example in text:
            self.taken += 1
            self.shown.update(set(example["scenes"]))
            yield example

    def summary(self) -> dict[str, Any]:
        """``dropped`` (totals per reason), ``forms`` (:meth:`FormQuota.report`),
        ``image_spread`` (:meth:`FormQuota.spread`) and ``examples`` (how many were taken)."""
        forms = [t.name for t in select_templates(self.options.templates)]
        return {
            "dropped": {k: n for k, n in sorted(self.dropped.items()) if "/" not in k},
            "forms": self.quota.report(forms, self.dropped),
            "image_spread": self.quota.spread(self.shown, self.taken),
            "examples": self.taken,
        }


def for_image(
    provider: StoreRelated,
    settings: QuestionSettings,
    related: RelatedSettings,
    image_id: str,
    *,
    split: str | None,
    seed: int,
    templates: Sequence[str],
    per_template: int | None = None,
    max_image_share: float | None = None,
) -> QuestionStream:
    """Questions about the subgraphs of a stored image, with images drawn from ``split`` (the
    image's own split when ``None``; another split than the image's is refused).
    ``per_template`` / ``max_image_share``: as ``covr generate --image IMAGE_ID --per-template
    N --max-image-share S --single-answers`` (the same examples; see the module docstring).

    The scene graph comes from the provider's cache, which the engine reads anyway: reading it
    from the store here too was pure overhead.
    """
    try:
        scene = provider.scene(image_id)
    except KeyError:
        raise SourceNotFound("image_id", f"no image {image_id!r} in the store") from None
    chosen = split or scene.split
    if scene.split != chosen:
        raise GenerationError(
            "image_id",
            f"image {scene.image_id!r} belongs to split {scene.split!r}, not {chosen!r}",
        )
    options = GenerationOptions.from_settings(
        settings, related, split=chosen, seed=seed, templates=templates
    )
    # Only an empty result needs telling "no subgraph to ask about" apart: the check enumerates
    # the image's subgraphs, which the engine has just done.
    on_empty = partial(check_images, provider, options, [scene.image_id])
    run = QuotaRun.start(options, per_template, max_image_share)
    if run is None:
        return QuestionStream(iter_for_image(provider, options, scene.image_id), on_empty)
    stream = image_examples(provider, run.options, scene.image_id, run.dropped, run.full)
    return QuestionStream(run.kept(stream), on_empty, run.summary)


def for_subgraph(
    provider: StoreRelated,
    settings: QuestionSettings,
    related: RelatedSettings,
    g: Subgraph,
    *,
    split: str | None,
    seed: int,
    templates: Sequence[str],
    per_template: int | None = None,
    max_image_share: float | None = None,
) -> QuestionStream:
    """Questions about ``g``; the source image is a seeded choice among the stored images that
    contain it, in ``split`` or, when ``None``, in any split (then the images come from the
    source image's split). ``per_template`` / ``max_image_share`` as for :func:`for_image`,
    over this subgraph's examples.

    The positives are asked for exactly as the engine asks for them (same limit and seed), so
    with a split the engine's own lookup is answered from the lookup's cache.
    """
    limit = settings.questions_positives + 1
    positives = provider.lookup.positives(g, split=split, limit=limit, seed=seed)
    if not positives:
        where = f"of split {split!r} " if split else ""
        raise SourceNotFound("subgraph", f"no stored image {where}contains {g.key!r}")
    image_id = choose_source_image(positives, g, seed)
    chosen = split or provider.scene(image_id).split
    options = GenerationOptions.from_settings(
        settings, related, split=chosen, seed=seed, templates=templates
    )
    run = QuotaRun.start(options, per_template, max_image_share)
    if run is None:
        return QuestionStream(iter_for_subgraph(provider, options, g, image_id))
    return QuestionStream(
        run.kept(_subgraph_examples(provider, run, g, image_id)), None, run.summary
    )


def _subgraph_examples(
    provider: StoreRelated, run: QuotaRun, g: Subgraph, image_id: str
) -> Iterator[Example]:
    """The examples about ``g`` with the run's full forms skipped, then the generator's drop
    reasons added to the run's (as :func:`~covr.questions.generate.image_examples` does for
    an image)."""
    generator = ImageGenerator(
        provider,
        run.options,
        select_templates(run.options.templates),
        default_attribute_types(),
    )
    generator.full_forms = run.full
    yield from generator.run_subgraph(image_id, g)
    add_form_reasons(run.dropped, generator.by_form)
