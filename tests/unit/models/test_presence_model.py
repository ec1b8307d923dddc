"""The presence model: simple subgraphs, hiding, features, and the committed ONNX file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from covr.models.errors import ModelInputError
from covr.models.presence import (
    GRAPH_FEATURE_NAMES,
    IMAGE_FEATURES,
    PRESENCE_GRAPH_INPUT,
    PRESENCE_IMAGE_INPUT,
    PresenceModel,
    hide,
    is_simple,
    simple_matches,
    simple_parts,
)
from covr.models.presence_train import calibrate, changed_type
from covr.scene.model import Object, Relation, SceneGraph
from covr.scene.subgraph import Subgraph


def _scene() -> SceneGraph:
    return SceneGraph.build(
        source="gqa",
        original_id="1",
        split="val",
        objects=[
            Object("1", "man", ("tall",)),
            Object("2", "hat", ("red",)),
            Object("3", "horse", ("brown",)),
            Object("4", "hat", ("blue",)),
        ],
        relations=[
            Relation("1.0", "wearing", "1", "2"),
            Relation("1.1", "riding", "1", "3"),
        ],
    )


def test_simple_subgraphs_and_their_parts() -> None:
    assert is_simple(Subgraph.from_key("man[tall]-(wearing)->hat"))
    assert not is_simple(Subgraph.from_key("man[tall]-(wearing)->hat[red]"))
    assert not is_simple(Subgraph.from_key("man{-(riding)->horse,-(wearing)->hat}"))
    g = Subgraph.from_key("man[tall]{-(riding)->horse,-(wearing)->hat[red]}")
    keys = sorted(p.key for p in simple_parts(g))
    assert keys == ["hat[red]", "horse", "man-(riding)->horse", "man-(wearing)->hat", "man[tall]"]
    assert all(is_simple(p) for p in simple_parts(g))


def test_hiding_breaks_every_match_at_the_chosen_node_type() -> None:
    scene = _scene()
    g = Subgraph.from_key("man-(wearing)->hat[red]")
    assert len(simple_matches(scene, g)) == 1
    no_attr = hide(scene, g, "attribute")
    assert no_attr is not None
    assert not simple_matches(no_attr, g)
    assert [o.attributes for o in no_attr.objects if o.id == "2"] == [()]
    no_rel = hide(scene, g, "relation")
    assert no_rel is not None
    assert [r.id for r in no_rel.relations] == ["1.1"]
    no_obj = hide(scene, g, "object", pick=1)
    assert no_obj is not None
    assert "2" not in {o.id for o in no_obj.objects}
    assert hide(scene, Subgraph.from_key("man-(wearing)->hat[green]"), "object") is None
    assert hide(scene, Subgraph.single("horse"), "relation") is None


def test_calibration_catches_the_target_share_of_hidden_subgraphs() -> None:
    rng = np.random.default_rng(0)
    pos = rng.uniform(0.3, 1.0, 200).astype(np.float32)
    neg = rng.uniform(0.0, 0.6, 200).astype(np.float32)
    scores = np.concatenate([pos, neg])
    labels = [1] * 200 + [0] * 200
    thresholds, report = calibrate(scores, labels, ["object"] * 400)
    assert report["object"]["calibrated"]["recall"] >= 0.95
    assert thresholds["object"] == report["object"]["calibrated"]["threshold"]
    assert changed_type("object@0+attribute@1") == "attribute"
    assert changed_type("object@1+relation@0") == "relation"


def test_metadata_says_it_sees_graphs_not_pixels(
    presence: PresenceModel, presence_path: Path
) -> None:
    meta = presence.metadata
    assert meta["model_name"] == "covr-presence"
    assert "graphs, not pixels" in meta["sees"]
    assert set(presence.thresholds) == {"object", "relation", "attribute"}
    metrics = json.loads(meta["metrics"])
    for kind in ("object", "relation", "attribute"):
        assert metrics["heldout_by_type"][kind]["calibrated"]["recall"] >= 0.95
    model = onnx.load(str(presence_path))
    onnx.checker.check_model(model, full_check=True)
    names = [i.name for i in model.graph.input]
    assert names == [PRESENCE_GRAPH_INPUT, PRESENCE_IMAGE_INPUT]
    assert all(i.type.tensor_type.shape.dim[0].dim_param == "batch" for i in model.graph.input)
    assert presence.image_width == IMAGE_FEATURES


def test_scores_single_batch_and_zero_features_agree(presence: PresenceModel) -> None:
    scene = _scene()
    gs = [Subgraph.from_key(k) for k in ("man-(riding)->horse", "hat[red]", "dog[black]")]
    batch = presence.score_batch([(g, scene, None) for g in gs])
    assert batch.shape == (3,)
    assert np.all((batch >= 0) & (batch <= 1))
    assert [presence.score(g, scene) for g in gs] == pytest.approx(batch.tolist(), abs=1e-7)
    zeros = [0.0] * IMAGE_FEATURES
    assert presence.score(gs[0], scene, zeros) == pytest.approx(float(batch[0]), abs=1e-7)
    assert presence.score_batch([(gs[1], scene, None)]).tolist() == [batch[1]]


def test_graph_context_moves_the_score(presence: PresenceModel) -> None:
    scene = _scene()
    g = Subgraph.from_key("man-(riding)->horse")
    hidden = hide(scene, g, "relation")
    assert hidden is not None
    rows = presence.featurizer.rows([(g, scene), (g, hidden)])
    assert rows.shape == (2, len(GRAPH_FEATURE_NAMES))
    assert not np.array_equal(rows[0], rows[1])


def test_bad_presence_input(presence: PresenceModel) -> None:
    scene = _scene()
    with pytest.raises(ModelInputError, match="not simple"):
        presence.score(Subgraph.from_key("man[tall]-(wearing)->hat[red]"), scene)
    with pytest.raises(ModelInputError, match=r"items\[0\].features"):
        presence.score(Subgraph.single("man"), scene, [1.0, 2.0])
    with pytest.raises(ModelInputError, match=r"items\[0\].features"):
        presence.score(Subgraph.single("man"), scene, [float("nan")] * IMAGE_FEATURES)
    with pytest.raises(ModelInputError, match="scene_graph"):
        presence.score_batch([(Subgraph.single("man"), "gqa:1", None)])  # type: ignore[list-item]
    with pytest.raises(ModelInputError, match="must be a Subgraph"):
        presence.score("man", scene)  # type: ignore[arg-type]


def test_presence_onnx_equals_the_training_time_model(tmp_path: Path) -> None:
    from covr.models.features import Lexicon
    from covr.models.presence import CoStats, PresenceFeaturizer, collect_stats
    from covr.models.presence_train import Mined, examples, export_presence, train_presence

    scene = _scene()
    other = SceneGraph.build(
        source="gqa",
        original_id="2",
        split="val",
        objects=[Object("1", "woman", ("young",)), Object("2", "hat", ("red",))],
        relations=[Relation("1.0", "holding", "1", "2")],
    )
    mined = [
        Mined(Subgraph.from_key("man-(wearing)->hat"), (scene,), ((other, "object@0"),)),
        Mined(Subgraph.from_key("hat[red]"), (scene, other), ()),
        Mined(Subgraph.from_key("man[tall]"), (scene,), ((other, "object@0+attribute@0"),)),
        Mined(Subgraph.from_key("man-(riding)->horse"), (scene,), ((other, "object@0"),)),
    ]
    data = examples(mined * 3, seed=1)
    assert {e.label for e in data} == {0, 1}
    stats = collect_stats([scene, other], min_count=1)
    featurizer = PresenceFeaturizer(CoStats(stats), Lexicon({}))
    result = train_presence(
        featurizer=featurizer, train=data, heldout=data, trained_on={"fixture": True}, seed=2
    )
    path = tmp_path / "presence.onnx"
    export_presence(path, result, stats=stats, lexicon=Lexicon({}), created_by="test")
    served = PresenceModel(path)
    items = [(e.subgraph, e.scene) for e in data]
    graph = featurizer.rows(items)
    full = np.hstack([graph, np.zeros((len(items), IMAGE_FEATURES), dtype=np.float32)])
    w = result.weights
    expected = result.sklearn_model.predict_proba((full - w.mean) / w.scale)[:, 1]
    got = served.score_batch([(g, s, None) for g, s in items])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert served.thresholds == result.thresholds


def test_many_candidates_in_one_run_decide_as_one_at_a_time(presence: PresenceModel) -> None:
    """The related lookup's filter judges a round's candidates in one model run; each verdict
    is the single call's, a repeated scene object is scored once, and a signature without a
    threshold gives None where the single call raises."""
    scene = _scene()
    hidden = hide(scene, Subgraph.from_key("man-(riding)->horse"), "relation")
    other = hide(scene, Subgraph.from_key("hat[red]"), "attribute")
    assert hidden is not None
    assert other is not None
    g = Subgraph.from_key("man[tall]-(riding)->horse")
    taus = {"object": 0.05, "relation": 0.3, "attribute": 0.5}
    candidates = [
        (scene, "object@1"),
        (hidden, "relation@0"),
        (other, "attribute@0"),
        (scene, "attribute@0+relation@0"),
        (hidden, "nonsense"),
        (scene, "relmod@0"),
    ]
    got = presence.likely_present_many(g, candidates, taus)
    for (s, sig), verdict in zip(candidates, got, strict=True):
        if sig == "nonsense":
            assert verdict is None
            with pytest.raises(ModelInputError, match="signature"):
                presence.likely_present(g, s, sig, None, taus)
        else:
            assert verdict is presence.likely_present(g, s, sig, None, taus), sig
    assert presence.likely_present_many(g, [], taus) == []
    with pytest.raises(ModelInputError) as info:
        presence.likely_present_many(g, [(scene, "object@1"), ("gqa:1", "object@1")], taus)  # type: ignore[list-item]
    assert info.value.field == "candidates[1].scene_graph"
    # both outcomes occur, so the comparison above can tell them apart
    one = [(scene, "object@1")]
    assert {presence.likely_present_many(g, one, {"object": t})[0] for t in (0.0, 1.0)} == {
        True,
        False,
    }


def test_the_lookup_filter_keeps_what_the_model_does_not_call_present(
    presence: PresenceModel,
) -> None:
    """``model_presence_filter`` decides a batch in one run: the same candidates survive as
    with one call each; an unreadable candidate (a scene that is not a scene graph) sends the
    batch to the one-at-a-time path, which keeps what it cannot judge; gone images are dropped."""
    from covr.related.api import Distractor
    from covr.related.filters import model_presence_filter

    scene = _scene()
    hidden = hide(scene, Subgraph.from_key("man-(riding)->horse"), "object")
    assert hidden is not None
    g = Subgraph.from_key("man-(riding)->horse")
    # between the two scenes' lowest part scores (0.94 hidden, 0.98 shown): the model trained
    # on real graphs (issue 37) calls a hidden rider of a horse likely, so 0.9 no longer parts them
    taus = {"object": 0.96, "relation": 0.1, "attribute": 0.5}
    scenes: dict[str, Any] = {"a": scene, "b": hidden, "c": scene}
    results = [
        Distractor("a", "object@0", g, (g,)),
        Distractor("b", "object@0", g, (g,)),
        Distractor("c", "unknown", g, (g,)),
        Distractor("gone", "relation@0", g, (g,)),
    ]
    keep = model_presence_filter(
        presence, lambda ids: {i: scenes[i] for i in ids if i in scenes}, taus
    )
    one_by_one = [
        r
        for r in results[:2]
        if not presence.likely_present(g, scenes[r.image_id], r.signature, None, taus)
    ]
    assert one_by_one == [results[1]]  # the scene showing g is dropped, the hidden one kept
    assert keep(g, results) == [*one_by_one, results[2]]
    scenes["b"] = "not a scene graph"
    kept = keep(g, results)
    assert kept == [results[1], results[2]]  # "b" cannot be judged now: kept
