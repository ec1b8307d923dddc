"""Which exclusivity scorer and presence filter a related-image lookup uses (DESIGN.md §5-6).

The lookup itself (:mod:`covr.related.lookup`) only knows the :class:`Exclusivity` protocol and the
``PresenceFilter`` hook. This module plugs the ONNX classifiers of :mod:`covr.models` into them,
as the paper does (§2.2, App. A-B): a node substitution counts only when ``m > 0.5``, and a
candidate distractor is dropped when the presence model finds the original subgraph probably
present though unannotated (every simple part of ``g`` scores above the threshold of the changed
node type). ``COVR_RELATED_EXCLUSIVITY`` / ``COVR_RELATED_PRESENCE`` choose the defaults; requests
switch either off through :meth:`RelatedLookups.get` and ``related(..., presence=False)``.

Two lookups at most exist per process (model and resource exclusivity): their caches hold
exclusivity decisions, so they cannot be shared, and their cache key includes the model versions
so that a retrained model never serves results computed with the old one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from covr import models
from covr.graph.store import GraphStore
from covr.models.config import ModelSettings
from covr.related.api import Distractor, NamePresence, PresenceFilter
from covr.related.config import RelatedSettings, parse_thresholds
from covr.related.exclusivity import (
    Exclusivity,
    NodeType,
    default_exclusivity,
    scores_against,
)
from covr.related.lookup import RelatedLookup
from covr.scene.model import Object, SceneGraph
from covr.scene.subgraph import Subgraph, SubgraphError

if TYPE_CHECKING:
    from covr.models.presence import PresenceModel

log = logging.getLogger(__name__)


class ModelExclusivity:
    """The ONNX exclusivity model, with the reviewed word lists for the pairs it refuses.

    The store may hold names the model cannot score (no English form, control characters, over
    100 characters: ``ModelInputError``); one such name in the vocabulary must not break every
    lookup, so those pairs are judged by the word lists instead (unknown words: conservative).
    """

    def __init__(self, model: Exclusivity, fallback: Exclusivity) -> None:
        self.model = model
        self.fallback = fallback

    def m(self, node_type: NodeType, x: str, x_prime: str) -> float:
        try:
            return self.model.m(node_type, x, x_prime)
        except models.ModelInputError:
            return self.fallback.m(node_type, x, x_prime)

    def m_batch(self, pairs: Sequence[tuple[NodeType, str, str]]) -> list[float]:
        try:
            return self.model.m_batch(pairs)
        except models.ModelInputError:
            return [self.m(*p) for p in pairs]

    def scores_against(self, node_type: NodeType, x: str, names: Sequence[str]) -> Sequence[float]:
        """The model's scores of ``x`` against each of ``names`` (the word lists where it
        refuses a name)."""
        try:
            return scores_against(self.model, node_type, x, names)
        except models.ModelInputError:
            return [self.m(node_type, x, n) for n in names]

    def prime(self, terms: Sequence[tuple[NodeType, str]]) -> None:
        """The model's per-term work for a vocabulary, done now (before workers fork)."""
        prime = getattr(self.model, "prime", None)
        if callable(prime):
            prime(terms)

    def remember_pairs(self, folder: Path) -> None:
        """Keep the model's pair scores in ``folder`` for the next process (models that can)."""
        remember = getattr(self.model, "remember_pairs", None)
        if callable(remember):
            remember(folder)


ScenesOf = Callable[[Sequence[str]], Mapping[str, SceneGraph]]
"""Reads the scene graphs of several images at once (absent ids left out)."""


def model_presence_filter(
    presence: PresenceModel,
    scenes_of: ScenesOf,
    thresholds: Mapping[str, float] | None = None,
) -> PresenceFilter:
    """A ``PresenceFilter`` that keeps the distractors in which ``g`` is *not* likely present.

    ``scenes_of`` reads the candidates' scene graphs, all of one call at once (the lookup's
    :meth:`~covr.related.lookup.RelatedLookup.presence_views`: one cached, batched read of the
    fields the features use, instead of a store round trip per candidate, which was most of a
    cold lookup). A candidate whose
    image is gone from the store by then is dropped: it can no longer be shown. ``thresholds``
    override the model's calibrated per-type thresholds (missing types keep the calibrated
    value).
    """
    merged = dict(presence.thresholds)
    merged.update(thresholds or {})

    def present(g: Subgraph, r: Distractor, scene: SceneGraph) -> bool:
        try:
            return presence.likely_present(g, scene, r.signature, None, merged)
        except models.ModelInputError:  # names the model cannot read: keep the candidate
            return False

    def keep(g: Subgraph, results: list[Distractor]) -> list[Distractor]:
        if not results:
            return []
        scenes = scenes_of([r.image_id for r in results])
        shown = [r for r in results if r.image_id in scenes]
        try:  # one model run for the whole batch; None (no threshold) keeps the candidate
            verdicts = presence.likely_present_many(
                g, [(scenes[r.image_id], r.signature) for r in shown], merged
            )
        except models.ModelInputError:  # decide each on its own, as the single call does
            return [r for r in shown if not present(g, r, scenes[r.image_id])]
        return [r for r, v in zip(shown, verdicts, strict=True) if not v]

    return keep


OWNER_CLASSES = frozenset({"person", "animal"})
"""Noun classes whose members have the body parts (WordNet's noun.body) a picture shows."""
ANIMAL_PARTS = frozenset(
    {
        "antler", "beak", "claw", "feather", "fin", "fur", "hoof", "mane", "muzzle", "paw",
        "snout", "tail", "tusk", "whisker", "wing",
    }
)  # fmt: skip
"""Parts of animals that WordNet files with the animals (class ``animal``), not as body parts;
reviewed on the real samples' vocabulary (GQA and VG: tail 13, paw 6, beak 3, feather 2, wing
2, mane 1). Only animals own them."""


def model_name_presence(presence: PresenceModel, threshold: float) -> NamePresence:
    """Whether an object of a given name is probably in an image beyond what its scene graph
    annotates (issue 37 item 2), for the images an answer depends on:

    - a body part (class ``body`` in the model's WordNet classes) is present on every person or
      animal shown without one overlapping its box (:func:`_owner_without_part`), whether or not
      the graph names the part elsewhere: scene graphs rarely annotate every ear and neck, and the model, trained on
      what annotators wrote, cannot tell (measured on 100 real GQA images: the median score of
      a person's unannotated ear or neck was 0.15, of any other missing name 0.11);
    - else the model's score of the one-object subgraph above ``threshold``. Not the
      distractor filter's calibrated object threshold (0.036): that one is set for recall, to
      drop candidates liberally, and 74 % of the names missing from answer images scored above
      it. A name the model cannot read is absent, as the annotation says; a name the graph
      has is not asked about.
    """
    from covr.models.presence import noun_key

    classes = presence.featurizer.stats.noun_class

    def unannotated(name: str, scene: SceneGraph) -> bool:
        noun = noun_key(name)
        kind = classes.get(noun)
        if kind == "body" or noun in ANIMAL_PARTS:
            owner_classes = OWNER_CLASSES if kind == "body" else {"animal"}
            owners = [
                o
                for o in scene.objects
                if classes.get(key := noun_key(o.name)) in owner_classes and key not in ANIMAL_PARTS
            ]
            if owners:
                return _owner_without_part(owners, scene, noun)
        if any(noun_key(o.name) == noun for o in scene.objects):
            return False  # annotated: the model is not asked about what the graph names
        if threshold >= 1:
            return False
        try:
            return presence.score(Subgraph.single(name), scene) > threshold
        except (models.ModelInputError, SubgraphError):
            return False

    return unannotated


def _owner_without_part(owners: list[Object], scene: SceneGraph, part: str) -> bool:
    """Whether one of ``owners`` (persons, animals) has no object called ``part`` overlapping
    its box: per owner, since one zebra's annotated tail says nothing of the next zebra's (issue
    36 audit: "There are at most 2 tails" beside a third zebra without one). A part named
    without a box, or an owner without one, counts as placed, as when the graph had no boxes."""
    from covr.models.presence import noun_key

    parts = [o.box for o in scene.objects if noun_key(o.name) == part]
    if any(box is None for box in parts):
        return False
    placed = [box for box in parts if box is not None]
    return any(
        not placed if owner.box is None else not any(owner.box.overlaps(p) for p in placed)
        for owner in owners
    )


class RelatedLookups:
    """The lookups of one process, one per exclusivity choice, created on first use.

    Takes two sections: the lookups' own (``related``) and the models room's, whose
    classifiers (files, threads, score caches, learned folder) the lookups are built with."""

    def __init__(
        self, store: GraphStore, settings: RelatedSettings, model_settings: ModelSettings
    ) -> None:
        self.store = store
        self.settings = settings
        self.model_settings = model_settings
        self._lock = threading.Lock()
        self._lookups: dict[bool, RelatedLookup] = {}

    @property
    def default_uses_model(self) -> bool:
        return self.settings.related_exclusivity == "model"

    def get(self, *, model: bool | None = None) -> RelatedLookup:
        """The lookup with the model (``True``), the word lists (``False``) or the default.

        Raises :class:`covr.models.ModelResourceError` when the model files or WordNet are
        missing; callers that must keep serving fall back to ``get(model=False)``.
        """
        use_model = self.default_uses_model if model is None else model
        with self._lock:
            lookup = self._lookups.get(use_model)
            if lookup is None:
                lookup = self._build(use_model)
                self._lookups[use_model] = lookup
            return lookup

    def _build(self, use_model: bool) -> RelatedLookup:
        exclusivity: Exclusivity
        if use_model:
            model = models.load_exclusivity_model(settings=self.model_settings)
            words = default_exclusivity(self.settings.related_cache_names)
            exclusivity = ModelExclusivity(model, words)
            version = f"exclusivity={model.version}"
        else:
            exclusivity = default_exclusivity(self.settings.related_cache_names)
            version = "exclusivity=resource"
        presence = None
        if self.settings.related_presence:
            presence = models.load_presence_model(settings=self.model_settings)
            version += f";presence={presence.version}"
        lookup = RelatedLookup(
            self.store, exclusivity=exclusivity, model_version=version, settings=self.settings
        )
        if use_model:
            lookup.learned = models.learned_dir(self.model_settings)
        if presence is not None:
            thresholds = parse_thresholds(self.settings.related_presence_thresholds)
            lookup.presence_filter = model_presence_filter(
                presence, lookup.presence_views, thresholds
            )
            lookup.name_presence = model_name_presence(
                presence, self.settings.related_answer_presence
            )
        log.info("related lookup ready (%s)", version)
        return lookup


def build_lookup(
    store: GraphStore,
    settings: RelatedSettings,
    model_settings: ModelSettings,
    *,
    model: bool | None = None,
) -> RelatedLookup:
    """One lookup configured from settings (CLI commands and benchmarks use this)."""
    return RelatedLookups(store, settings, model_settings).get(model=model)


def serving_lookup(lookups: RelatedLookups) -> tuple[RelatedLookup, str | None]:
    """The lookup questions are generated with, by the service and by ``covr generate`` alike
    (issue 16 item 4: one construction, so the two cannot drift): the configured one (the ONNX
    exclusivity model and the presence filter by default), or, when the model files or WordNet
    are missing, the word lists' lookup and the reason (the caller says so: the service logs
    it, the CLI prints it), so that a machine without the models still generates."""
    try:
        return lookups.get(), None
    except models.ModelResourceError as exc:
        return lookups.get(model=False), str(exc)
