"""Where a question request starts: its source image and split, and the example stream.

The service asks for questions about an image or about a subgraph; both need a decision before
the engine runs (which stored image is the source, which split the images come from, what tells
"nothing to ask" apart from an empty result). Those decisions are the question room's, so they
live here and the service makes one call (:func:`for_image` or :func:`for_subgraph`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial

from covr.questions.errors import GenerationError, SourceNotFound
from covr.questions.example import Example
from covr.questions.generate import (
    GenerationOptions,
    check_images,
    choose_source_image,
    iter_for_image,
    iter_for_subgraph,
)
from covr.related.store_provider import StoreRelated
from covr.scene.subgraph import Subgraph
from covr.settings import Settings


@dataclass
class QuestionStream:
    """The examples of one request, produced lazily, and what to check when there are none
    (``None`` = an empty result needs no explanation)."""

    examples: Iterator[Example]
    on_empty: Callable[[], None] | None = None


def for_image(
    provider: StoreRelated,
    settings: Settings,
    image_id: str,
    *,
    split: str | None,
    seed: int,
    templates: Sequence[str],
) -> QuestionStream:
    """Questions about the subgraphs of a stored image, with images drawn from ``split`` (the
    image's own split when ``None``; another split than the image's is refused).

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
        settings, split=chosen, seed=seed, templates=templates
    )
    # Only an empty result needs telling "no subgraph to ask about" apart: the check enumerates
    # the image's subgraphs, which the engine has just done.
    return QuestionStream(
        iter_for_image(provider, options, scene.image_id),
        on_empty=partial(check_images, provider, options, [scene.image_id]),
    )


def for_subgraph(
    provider: StoreRelated,
    settings: Settings,
    g: Subgraph,
    *,
    split: str | None,
    seed: int,
    templates: Sequence[str],
) -> QuestionStream:
    """Questions about ``g``; the source image is a seeded choice among the stored images that
    contain it, in ``split`` or, when ``None``, in any split (then the images come from the
    source image's split).

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
        settings, split=chosen, seed=seed, templates=templates
    )
    return QuestionStream(iter_for_subgraph(provider, options, g, image_id))
