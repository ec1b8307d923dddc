"""The related-images room's public face: what callers may rely on, whichever provider runs.

A *provider* answers "which images contain ``g``, and which hold something almost like it": the
Cypher-backed one (:class:`~covr.related.store_provider.StoreRelated`) and the in-memory one
(:class:`~covr.related.memory.InMemoryRelated`) are interchangeable behind
:class:`RelatedProvider`, so the question engine imports this module and nothing else of
``related/``. Result types and errors live here for the same reason (:class:`Distractor` and
the presence-filter hook are defined with the definitions they follow, in
:mod:`covr.related.matcher`, and re-exported here: the matcher imports nothing of this module,
so there is no import circle). The room's settings section, :class:`RelatedSettings`
(:mod:`covr.related.config`), is re-exported too: the question room builds its options with it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from covr.related import matcher
from covr.related.config import RelatedSettings
from covr.related.errors import RelatedError, StatsMissing, UnknownImage, UnknownSubgraph
from covr.related.matcher import Distractor, PresenceFilter, no_presence_filter
from covr.related.request import DEFAULT, Default, RelatedRequest, as_subgraph
from covr.related.sampling import stable_seed
from covr.scene.edits import signature_sort_key
from covr.scene.enumerate import EnumerationOptions
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph

__all__ = [
    "DEFAULT",
    "Default",
    "Distractor",
    "PresenceFilter",
    "RelatedError",
    "RelatedImage",
    "RelatedProvider",
    "RelatedRequest",
    "RelatedResult",
    "RelatedSettings",
    "StatsMissing",
    "UnknownImage",
    "UnknownSubgraph",
    "as_subgraph",
    "contains",
    "enumeration_options",
    "no_presence_filter",
    "stable_seed",
]


NamePresence = Callable[[str, SceneGraph], bool]
"""Whether an object named so is probably in the image though its scene graph does not name it
(the presence model on the one-object subgraph; issue 37 item 2)."""


@dataclass(frozen=True)
class RelatedResult:
    """Positives and distractors of one subgraph; see docs/related.md §1."""

    query: Subgraph
    split: str | None
    seed: int
    positives: tuple[str, ...]
    distractors: tuple[Distractor, ...]
    offset: int = 0
    next_offset: int | None = None
    reached: frozenset[str] | None = field(default=None, compare=False, repr=False)
    """Every image in which the search matched ``g`` or an edit of it before the exclusion
    check and the presence filter, when it verified every candidate of every signature (no
    cap, no scan budget cut it short); None otherwise. A larger subgraph's matches are among
    these (:mod:`covr.related.barren`)."""

    def by_signature(self) -> dict[str, list[str]]:
        """``signature -> image ids`` in result order."""
        out: dict[str, list[str]] = defaultdict(list)
        for d in self.distractors:
            out[d.signature].append(d.image_id)
        return dict(out)

    def signatures(self) -> list[str]:
        """The signatures present, in canonical order."""
        return sorted({d.signature for d in self.distractors}, key=signature_sort_key)


@dataclass(frozen=True, slots=True)
class RelatedImage:
    """One related image: ``signature`` is ``""`` for a positive; ``subgraph`` is the concrete
    subgraph found in it (``g`` itself for a positive)."""

    image_id: str
    signature: str
    subgraph: Subgraph


@runtime_checkable
class RelatedProvider(Protocol):
    """Related-image lookup as the question engine needs it."""

    def scene(self, image_id: str) -> SceneGraph:
        """The scene graph of an image (raise ``KeyError`` if unknown)."""
        ...

    def images(self, split: str) -> list[str]:
        """Sorted ids of the images of a split."""
        ...

    def positives(self, g: Subgraph, split: str, *, limit: int, seed: int) -> list[str]:
        """Up to ``limit`` images of ``split`` that contain ``g``, a seeded sample, sorted."""
        ...

    def distractors(
        self, g: Subgraph, split: str, *, max_distance: int, per_signature: int, seed: int
    ) -> list[RelatedImage]:
        """Distractor images (DESIGN §5), at most ``per_signature`` per edit signature."""
        ...

    def related(self, request: RelatedRequest) -> tuple[list[str], list[RelatedImage]]:
        """:meth:`positives` and :meth:`distractors` of the request's subgraph with the same
        answers, in one call: the store answers both with one search (half the round trips of
        two calls). The request is the one contract of a lookup (:mod:`covr.related.request`),
        so an option is a field there and its use in a search, not a parameter of every
        provider; the engine sends a split, a ``max_distance``, and resolved ``seed``,
        ``per_signature`` and ``positives_limit`` (integers).

        ``positives_if_distractors``: the caller drops an answer without distractors (the
        question engine when every form shows one), so a provider may then return fewer
        positives, or none, when it finds no distractor; with distractors the answer is the
        same."""
        ...

    def refresh(self) -> None:
        """Start a unit of work (one source image): see the store's current generation.
        Lookups of :meth:`related` inside it may skip their own check."""
        ...

    def unannotated(self, name: str, image_id: str) -> bool:
        """Whether more objects called ``name`` are probably in the image than its scene graph
        annotates (paper App. B): none annotated while the model says one is there, or a person
        or animal without the asked body part placed on it. The image would then flip a count or
        an existence that asks for ``name``. ``False`` where the provider has no presence
        model."""
        ...


def contains(scene: SceneGraph, g: Subgraph) -> bool:
    """Whether ``scene`` holds a match of ``g`` (the in-memory matcher's definition)."""
    return matcher.contains(scene, g)


def _split_list(text: str) -> frozenset[str]:
    return frozenset(p.strip() for p in text.split(",") if p.strip())


def enumeration_options(settings: RelatedSettings) -> EnumerationOptions:
    """Subgraph enumeration options from ``COVR_SUBGRAPH_*`` (defaults: the reference values)."""
    pairs: set[tuple[str, str]] = set()
    for item in _split_list(settings.subgraph_ignored_pairs):
        relation, sep, noun = item.partition(":")
        if not sep or not relation.strip() or not noun.strip():
            raise ValueError(
                f"COVR_SUBGRAPH_IGNORED_PAIRS: {item!r} is not 'relation:noun' (e.g. wearing:shirt)"
            )
        pairs.add((relation.strip(), noun.strip()))
    return EnumerationOptions(
        ignored_nouns=_split_list(settings.subgraph_ignored_nouns),
        ignored_relations=_split_list(settings.subgraph_ignored_relations),
        ignored_pairs=frozenset(pairs),
        min_object_area=settings.subgraph_min_object_area,
        max_subgraphs=settings.subgraph_max_per_image,
    )
