"""Presence on the images an answer depends on (issue 37 item 2), with the shipped ONNX model."""

from __future__ import annotations

import pytest

from covr.models import load_presence_model
from covr.related.api import NamePresence
from covr.related.filters import model_name_presence
from covr.scene.model import Box, Object, SceneGraph
from covr.scene.subgraph import Subgraph
from covr.settings import get_settings

pytestmark = pytest.mark.unit


def _scene(*names: str) -> SceneGraph:
    return SceneGraph(
        source="gqa",
        original_id="1",
        split="val",
        objects=tuple(Object(id=str(k), name=n) for k, n in enumerate(names)),
    )


@pytest.fixture(scope="module")
def judge_rule_only() -> NamePresence:
    return model_name_presence(load_presence_model(settings=get_settings().models), threshold=1.0)


def test_a_body_part_beside_a_person_or_an_animal_is_present(judge_rule_only: NamePresence) -> None:
    assert judge_rule_only("ear", _scene("man", "shirt"))
    assert judge_rule_only("necks", _scene("giraffe", "tree"))  # the plural names the same part
    assert not judge_rule_only("ear", _scene("car", "street"))  # no owner shown
    assert not judge_rule_only("shirt", _scene("man"))  # not a body part: the model decides


def test_the_threshold_decides_the_other_names() -> None:
    model = load_presence_model(settings=get_settings().models)
    scene = _scene("man", "shirt", "pants", "street", "car")
    score = model.score(Subgraph.single("shoe"), scene)
    assert 0 < score < 1
    assert model_name_presence(model, threshold=score - 1e-6)("shoe", scene)
    assert not model_name_presence(model, threshold=score + 1e-6)("shoe", scene)
    assert not model_name_presence(model, threshold=1.0)("shoe", scene)


def test_a_name_the_model_cannot_read_is_absent(judge_rule_only: NamePresence) -> None:
    assert not judge_rule_only("", _scene("man"))


def _placed(*objects: tuple[str, tuple[int, int, int, int]]) -> SceneGraph:
    return SceneGraph(
        source="gqa",
        original_id="2",
        split="val",
        objects=tuple(
            Object(id=str(k), name=n, box=Box(*box)) for k, (n, box) in enumerate(objects)
        ),
    )


def test_a_body_part_is_judged_per_owner(judge_rule_only: NamePresence) -> None:
    """The issue 36 audit: two zebras with their tails annotated and a third without one make
    "at most 2 tails" True as annotated and False on the picture."""
    two = [("zebra", (0, 0, 100, 80)), ("tail", (90, 20, 10, 30))]
    two += [("zebra", (200, 0, 100, 80)), ("tail", (290, 20, 10, 30))]
    assert not judge_rule_only("tail", _placed(*two))
    third = _placed(*two, ("zebra", (400, 0, 100, 80)))
    assert judge_rule_only("tail", third)
    assert judge_rule_only("tails", third)
    # a name the graph has is not given to the model (it would score it present)
    model = load_presence_model(settings=get_settings().models)
    assert not model_name_presence(model, threshold=0.0)("shirt", _scene("man", "shirt"))
