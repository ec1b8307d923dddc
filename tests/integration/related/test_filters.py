"""The Cypher lookup with the real ONNX classifiers plugged in (issue 5 integration).

Exclusivity: a substitution counts only when the model says ``m > 0.5``, and the overlap-relaxed
exclusion uses the same scores. Presence: candidates in which the model finds ``g`` probably
present are dropped, per request switchable. Everything runs on the embedded store with the
committed ONNX files.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from covr.graph import GraphStore
from covr.related.exclusivity import NodeType
from covr.related.filters import RelatedLookups, build_lookup
from covr.scene.subgraph import Subgraph, SubgraphObject, SubgraphRelation
from covr.settings import Settings
from tests.integration.related.helpers import full, put, scene

pytestmark = [pytest.mark.integration, pytest.mark.slow]

G = Subgraph.from_key("woman-(holding)->phone")


class EveryDifferenceExcludes:
    """A naive scorer: any other name is exclusive (what a lookup without a model would do)."""

    def m(self, node_type: NodeType, x: str, x_prime: str) -> float:
        return 0.0 if x == x_prime else 1.0

    def m_batch(self, pairs: Sequence[tuple[NodeType, str, str]]) -> list[float]:
        return [self.m(*p) for p in pairs]


def _plant(store: GraphStore) -> None:
    put(
        store,
        [
            scene(1, [("woman", []), ("phone", [])], [(0, "holding", 1)]),  # g
            scene(2, [("woman", []), ("phone", [])], [(0, "using", 1)]),  # overlaps g
            scene(3, [("man", []), ("phone", [])], [(0, "holding", 1)]),  # a real distractor
            scene(4, [("woman", []), ("umbrella", [])], [(0, "holding", 1)]),  # a real one
        ],
    )


def test_model_exclusivity_keeps_overlapping_relations_out(
    store: GraphStore, settings: Settings
) -> None:
    _plant(store)
    plain = settings.model_copy(update={"related_presence": False})
    with_model = build_lookup(store, plain.related, plain.models, model=True)
    distractors = {d.image_id: d.signature for d in full(with_model, G, 2).distractors}
    assert "test:2" not in distractors  # "using" is not exclusive with "holding"
    assert distractors == {"test:3": "object@0", "test:4": "object@1"}

    naive = RelatedLookups(store, plain.related, plain.models).get(model=False)
    naive.exclusivity = EveryDifferenceExcludes()
    naive.clear_cache()
    without = {d.image_id: d.signature for d in full(naive, G, 2).distractors}
    assert without.get("test:2") == "relation@0"  # without the model it would be one


def test_presence_filter_drops_and_request_switch_keeps(
    store: GraphStore, settings: Settings
) -> None:
    _plant(store)
    drop_all = settings.model_copy(
        update={
            "related_presence": True,
            "related_presence_thresholds": "object=0,attribute=0,relation=0",
        }
    )
    lookup = build_lookup(store, drop_all.related, drop_all.models, model=True)
    assert full(lookup, G, 2).distractors == ()
    kept = lookup.related(G, max_distance=2, per_signature=None, limit=None, presence=False)
    assert {d.image_id for d in kept.distractors} == {"test:3", "test:4"}

    keep_all = settings.model_copy(
        update={
            "related_presence": True,
            "related_presence_thresholds": "object=1,attribute=1,relation=1",
        }
    )
    lookup = build_lookup(store, keep_all.related, keep_all.models, model=True)
    assert {d.image_id for d in full(lookup, G, 2).distractors} == {"test:3", "test:4"}
    assert "presence=" in lookup.model_version
    assert "exclusivity=" in lookup.model_version


def test_bad_threshold_setting_is_refused(settings: Settings) -> None:
    with pytest.raises(ValueError, match="COVR_RELATED_PRESENCE_THRESHOLDS"):
        Settings(related_presence_thresholds="object=2")
    with pytest.raises(ValueError, match="COVR_RELATED_PRESENCE_THRESHOLDS"):
        Settings(related_presence_thresholds="colour=0.5")


def test_names_the_model_refuses_do_not_break_lookups(
    store: GraphStore, settings: Settings
) -> None:
    odd = ["☃", "x" * 150, "'}) DETACH DELETE n //"]
    _plant(store)
    put(
        store,
        [
            scene(10 + i, [(name, []), ("phone", [])], [(0, "holding", 1)])
            for i, name in enumerate(odd)
        ],
    )
    plain = settings.model_copy(update={"related_presence": False})
    lookup = build_lookup(store, plain.related, plain.models, model=True)
    distractors = {d.image_id: d.signature for d in full(lookup, G, 2).distractors}
    assert {"test:3", "test:4"} <= set(distractors)
    assert "test:2" not in distractors
    # with the presence filter too: odd names in g are scored or kept, never an exception
    lookup = build_lookup(store, settings.related, settings.models, model=True)
    for name in odd:
        g = Subgraph.build(
            [SubgraphObject(name), SubgraphObject("phone")], [SubgraphRelation("holding", 0, 1)]
        )
        result = full(lookup, g, 2)
        assert len(result.positives) == 1
