"""Related-image lookups give the same positives and distractors on both stores, seed for seed.

The lookup's seeded order is a keyed hash of (seed, signature, image id), independent of the order
a store returns anything in, so the same data and seed must give the same result object on both:
the same positives in the same order, the same distractors with the same signatures, concrete
subgraphs and alternatives, and the same next page. Checked over the lookup's query paths
(batched rounds, index-started direct matches, combined verification), with the word-list
exclusivity on synthetic and random scene graphs and with the ONNX classifiers (exclusivity and
the presence filter) on the bundled samples.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from covr.related.filters import RelatedLookups
from covr.related.lookup import RelatedLookup, RelatedResult, enumeration_options
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph
from covr.settings import Settings
from covr_loaders import synthetic
from covr_loaders.samples import load_bundled_samples
from tests.integration.parity.conftest import Pair
from tests.integration.parity.test_catalog_parity import sample_graphs
from tests.integration.related.helpers import put
from tests.integration.related.test_congruence import ALL_OPTIONS, scenes

pytestmark = pytest.mark.timeout(600)

# The lookup's query paths: its defaults, index-started direct matches for every signature,
# and combined verification of all signatures in one query.
VARIANTS: dict[str, dict[str, int]] = {
    "default": {},
    "direct": {"related_direct_min_pool": 0, "related_batch_min": 1},
    "combined": {"related_combined_min_signatures": 0},
}


def lookups(pair: Pair, variant: str) -> tuple[RelatedLookup, RelatedLookup]:
    made = [
        RelatedLookup(store, settings=settings.model_copy(update=VARIANTS[variant]).related)
        for _, store, settings in pair.stores()
    ]
    return made[0], made[1]


def load(pair: Pair, graphs: list[SceneGraph]) -> None:
    pair.reset()
    for _, store, _ in pair.stores():
        put(store, graphs)


def describe(result: RelatedResult) -> str:
    lines = [f"positives {list(result.positives)} next {result.next_offset}"]
    lines += [f"  {d.signature} {d.image_id} {d.subgraph.key}" for d in result.distractors]
    return "\n".join(lines)


def assert_same(left: RelatedResult, right: RelatedResult, context: str) -> None:
    assert left == right, f"{context}\n--- falkordb\n{describe(left)}\n--- neo4j\n{describe(right)}"


CALLS: dict[str, dict[str, object]] = {
    "sampled": {},
    "full": {"per_signature": None, "positives_limit": None},
    "page 2": {"per_signature": 2, "offset": 2},
    "distance 1": {"max_distance": 1},
}


def compare(
    falkordb: RelatedLookup,
    neo4j: RelatedLookup,
    targets: Iterable[Subgraph],
    *,
    seeds: tuple[int, ...] = (0, 7),
    splits: tuple[str | None, ...] = (None,),
    calls: tuple[str, ...] = tuple(CALLS),
) -> int:
    """Sampled, full, paged and distance-1 lookups of every target, for every seed and split;
    returns how many results were compared."""
    compared = 0
    for g in targets:
        for seed in seeds:
            for split in splits:
                for name in calls:
                    kwargs = {"seed": seed, "split": split, **CALLS[name]}
                    left = falkordb.related(g, **kwargs)  # type: ignore[arg-type]
                    right = neo4j.related(g, **kwargs)  # type: ignore[arg-type]
                    assert_same(left, right, f"{g.key} {name} {kwargs}")
                    compared += 1
    return compared


def targets_of(
    graphs: list[SceneGraph], settings: Settings, every: int, most: int
) -> list[Subgraph]:
    """Subgraphs of the first images: every ``every``-th up to ``most``, plus one of each shape
    not among those."""
    options = enumeration_options(settings.related)
    found = [g for scene in graphs[:12] for g in enumerate_subgraphs(scene, options)]
    picked = found[::every][:most]
    shapes = {g.shape for g in picked}
    for g in found:
        if g.shape not in shapes:
            picked.append(g)
            shapes.add(g.shape)
    return picked


def test_synthetic_lookups_agree(pair: Pair) -> None:
    graphs = [
        replace(g, split="train") if k % 3 == 2 else g
        for k, g in enumerate(synthetic.generate(120, seed=5, split="val"))
    ]
    load(pair, graphs)
    targets = targets_of(graphs, pair.falkordb_settings, every=7, most=5)
    assert len({g.shape for g in targets}) >= 3
    for variant in sorted(VARIANTS):
        falkordb, neo4j = lookups(pair, variant)
        if variant == "default":
            assert compare(falkordb, neo4j, targets) > 0
            compare(
                falkordb, neo4j, targets, seeds=(0,), splits=("val",), calls=("sampled", "full")
            )
            for image_id in (graphs[0].image_id, graphs[-1].image_id):
                left = falkordb.for_image(image_id, max_subgraphs=3, seed=3)
                assert left == neo4j.for_image(image_id, max_subgraphs=3, seed=3)
        else:
            compare(falkordb, neo4j, targets, seeds=(0,), calls=("sampled", "full"))


@hypothesis_settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(graphs=scenes(10), data=st.data())
def test_random_scene_graph_lookups_agree(
    pair: Pair, graphs: list[SceneGraph], data: st.DataObject
) -> None:
    """The congruence tests' vocabulary: exclusive, overlapping and awkward names, rel-mods."""
    load(pair, graphs)
    candidates = sorted(
        {g for s in graphs for g in enumerate_subgraphs(s, ALL_OPTIONS)}, key=lambda g: g.key
    )
    if not candidates:
        return
    targets = data.draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3))
    variant = data.draw(st.sampled_from(sorted(VARIANTS)))
    falkordb, neo4j = lookups(pair, variant)
    compare(falkordb, neo4j, targets, seeds=(data.draw(st.integers(0, 2**32)),))


def test_sample_lookups_agree_with_the_classifiers(pair: Pair) -> None:
    """The bundled samples, with the configured lookups: the ONNX exclusivity model and the
    presence filter, as `covr quickstart` and the service use them."""
    pair.reset()
    for _, store, settings in pair.stores():
        load_bundled_samples(store, settings.load)
    falkordb, neo4j = (
        RelatedLookups(store, settings.related, settings.models).get()
        for _, store, settings in pair.stores()
    )
    graphs = sample_graphs(pair)
    compared = 0
    for scene in graphs:
        left = falkordb.for_image(scene.image_id, max_subgraphs=4, seed=11)
        right = neo4j.for_image(scene.image_id, max_subgraphs=4, seed=11)
        for a, b in zip(left, right, strict=True):
            assert_same(a, b, f"{scene.image_id} {a.query.key}")
            compared += 1
    assert compared > 20
