"""The models plugged into the reference matcher: the planted overlap example of the issue and
the paper's presence filter rule, with the real ONNX files."""

from __future__ import annotations

import pytest

from covr.models import simple_parts
from covr.models.errors import ModelInputError
from covr.models.exclusivity import OnnxExclusivity
from covr.models.presence import PresenceModel
from covr.related.api import Distractor
from covr.related.exclusivity import Exclusivity
from covr.related.matcher import distractors
from covr.scene.model import Object, Relation, SceneGraph
from covr.scene.subgraph import Subgraph


def _image(number: int, subject: str, relation: str, target: str) -> SceneGraph:
    return SceneGraph.build(
        source="gqa",
        original_id=str(number),
        split="val",
        objects=[Object("1", subject), Object("2", target), Object("3", "table")],
        relations=[Relation("1.0", relation, "1", "2"), Relation("2.0", "on", "2", "3")],
    )


SCENES = [
    _image(1, "woman", "holding", "phone"),  # the source image
    _image(2, "woman", "using", "phone"),  # overlapping: must NOT be a distractor
    _image(3, "man", "holding", "phone"),  # object changed: a distractor
    _image(4, "woman", "holding", "cup"),  # object changed: a distractor
    _image(5, "woman", "near", "phone"),  # specific vs general relation: a distractor
]
G = Subgraph.from_key("woman-(holding)->phone")


def test_onnx_model_implements_the_exclusivity_protocol(exclusivity: OnnxExclusivity) -> None:
    assert isinstance(exclusivity, Exclusivity)


def test_planted_overlap_is_not_a_distractor(exclusivity: OnnxExclusivity) -> None:
    found = {d.image_id: d.signature for d in distractors(SCENES, G, exclusivity, max_distance=1)}
    assert "gqa:2" not in found
    assert found == {"gqa:3": "object@0", "gqa:4": "object@1", "gqa:5": "relation@0"}


def test_without_the_exclusivity_filter_the_overlap_would_be_a_distractor() -> None:
    class EveryChangeExclusive:
        def m(self, node_type: str, x: str, x_prime: str) -> float:
            return 0.0 if x == x_prime else 1.0

        def m_batch(self, pairs: list[tuple[str, str, str]]) -> list[float]:
            return [self.m(*p) for p in pairs]

    found = {d.image_id for d in distractors(SCENES, G, EveryChangeExclusive(), max_distance=1)}  # type: ignore[arg-type]
    assert "gqa:2" in found


def test_presence_filter_follows_the_thresholds(
    exclusivity: OnnxExclusivity, presence: PresenceModel
) -> None:
    by_id = {s.image_id: s for s in SCENES}

    def keep_with(thresholds: dict[str, float] | None) -> list[str]:
        def presence_filter(g: Subgraph, results: list[Distractor]) -> list[Distractor]:
            return [
                r
                for r in results
                if not presence.likely_present(g, by_id[r.image_id], r.signature, None, thresholds)
            ]

        kept = distractors(SCENES, G, exclusivity, max_distance=1, presence_filter=presence_filter)
        return sorted(d.image_id for d in kept)

    assert keep_with({"object": 1.0, "relation": 1.0, "attribute": 1.0}) == [
        "gqa:3",
        "gqa:4",
        "gqa:5",
    ]
    assert keep_with({"object": -1.0, "relation": -1.0, "attribute": -1.0}) == []
    calibrated = keep_with(None)
    assert set(calibrated) <= {"gqa:3", "gqa:4", "gqa:5"}


def test_likely_present_takes_the_largest_threshold(presence: PresenceModel) -> None:
    scene = SCENES[2]
    parts = simple_parts(G)
    assert len(parts) == 3
    weakest = float(presence.score_batch([(p, scene, None) for p in parts]).min())
    low, high = weakest - 1e-4, weakest + 1e-4
    thresholds = {"object": low, "relation": high, "attribute": high}
    assert presence.likely_present(G, scene, "object@0", thresholds=thresholds) is True
    assert presence.likely_present(G, scene, "object@0+relation@0", thresholds=thresholds) is False
    assert presence.likely_present(G, scene, "relmod@0", thresholds=thresholds) is False
    with pytest.raises(ModelInputError, match="signature"):
        presence.likely_present(G, scene, "")
