"""``positives_if_distractors``: the positives wait for a distractor, and only answers without one
change (docs/related.md §3, "Positives only for a result with distractors").

The question engine drops a subgraph without distractors when every form shows one, so its
lookups may leave the positives short then. Everything else must be the answer of the plain
lookup: with a distractor, the same positives, distractors and next page; when every candidate
was verified, the same positives and the same ``reached``. The scan budget is made small so that
many lookups end cut short on this small store, as most large subgraphs do at 1x GQA.
"""

from __future__ import annotations

from typing import Any

import pytest

from covr.graph import GraphStore
from covr.related.lookup import RelatedLookup, RelatedResult
from covr.scene.subgraph import Subgraph
from covr.settings import Settings
from covr_loaders import synthetic
from tests.integration.related.helpers import positive_candidates, put

pytestmark = pytest.mark.integration


def lookups(lookup: RelatedLookup, subgraphs: list[Subgraph], *, wait: bool) -> list[RelatedResult]:
    return [
        lookup.related(
            g,
            split="val",
            max_distance=2,
            per_signature=3,
            positives_limit=7,
            seed=seed,
            positives_if_distractors=wait,
        )
        for g in subgraphs
        for seed in (1, 2)
    ]


def test_only_answers_without_distractors_change(
    store: GraphStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenes = list(synthetic.generate(150, seed=6, split="val"))
    put(store, scenes)
    small = settings.model_copy(update={"related_scan_budget": 24})
    lookup = RelatedLookup(store, settings=small.related)
    subgraphs = [g for s in scenes[:10] for g in lookup.subgraphs_of_image(s.image_id)[::4]]
    with positive_candidates(monkeypatch) as plain_cost:
        plain = lookups(lookup, subgraphs, wait=False)
    with positive_candidates(monkeypatch) as waiting_cost:
        waited = lookups(lookup, subgraphs, wait=True)
    kinds = {"distractors": 0, "exhaustive": 0, "left short": 0}
    for before, after in zip(plain, waited, strict=True):
        key = before.query.key
        if before.distractors:
            kinds["distractors"] += 1
            assert after == before, key  # positives, distractors, next page
        elif before.reached is not None:
            kinds["exhaustive"] += 1
            assert after == before, key
            assert after.reached == before.reached, key  # the memo's input is unchanged
        else:
            assert after.distractors == (), key
            # the first batch's positives: the same first images of the same seeded order
            assert after.positives == before.positives[: len(after.positives)], key
            kinds["left short"] += after.positives != before.positives
    assert all(kinds.values()), kinds  # every case occurred
    assert waiting_cost[0] < plain_cost[0], (waiting_cost[0], plain_cost[0])


def test_the_two_answers_are_cached_apart(store: GraphStore, settings: Settings) -> None:
    """A waiting lookup's short answer must never be served to a plain lookup (the result
    cache's key holds the flag)."""
    scenes = list(synthetic.generate(150, seed=6, split="val"))
    put(store, scenes)
    lookup = RelatedLookup(
        store, settings=settings.model_copy(update={"related_scan_budget": 24}).related
    )
    args: dict[str, Any] = {
        "split": "val",
        "max_distance": 2,
        "per_signature": 3,
        "positives_limit": 7,
    }
    for s in scenes[:10]:
        for g in lookup.subgraphs_of_image(s.image_id)[::4]:
            waited = lookup.related(g, seed=1, positives_if_distractors=True, **args)
            plain = lookup.related(g, seed=1, **args)
            if waited.positives != plain.positives:
                fresh = RelatedLookup(store, settings=lookup.settings)
                assert plain == fresh.related(g, seed=1, **args)
                return
    pytest.fail("no lookup was left short: the budget no longer cuts these searches")
