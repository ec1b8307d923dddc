"""The committed exclusivity ONNX model through onnxruntime: metadata, gold accuracy,
directionality, determinism, caching, bad input, and equality with the training-time model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from covr.models.errors import ModelInputError, ModelResourceError
from covr.models.exclusivity import EXCLUSIVITY_INPUT, EXCLUSIVITY_OUTPUT, OnnxExclusivity
from covr.models.exclusivity_train import (
    PAPER_ACCURACY,
    Labelled,
    TrainOptions,
    accuracy_by_type,
    export_exclusivity,
    train_exclusivity,
)
from covr.models.gold import load_gold
from covr.models.onnx_io import OPSET
from covr.models.terms import ModelType
from covr.scene.edits import NodeType


def test_metadata_is_complete_and_readable(exclusivity: OnnxExclusivity) -> None:
    meta = exclusivity.metadata
    assert meta["model_name"] == "covr-exclusivity"
    assert exclusivity.version == meta["version"]
    assert meta["version"]
    assert json.loads(meta["labels"]) == ["not_exclusive", "exclusive"]
    trained_on = json.loads(meta["trained_on"])
    assert trained_on["gold_pairs_removed"] > 0
    assert set(json.loads(meta["metrics"])["gold"]) == {"object", "attribute", "relation"}
    assert meta["opset"] == str(OPSET)


def test_file_passes_the_checker_with_a_dynamic_batch_axis(exclusivity_path: Path) -> None:
    model = onnx.load(str(exclusivity_path))
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == OPSET
    (inp,) = model.graph.input
    (out,) = model.graph.output
    assert (inp.name, out.name) == (EXCLUSIVITY_INPUT, EXCLUSIVITY_OUTPUT)
    assert inp.type.tensor_type.shape.dim[0].dim_param == "batch"
    assert out.type.tensor_type.shape.dim[0].dim_param == "batch"


def test_gold_accuracy_is_what_the_metadata_reports(exclusivity: OnnxExclusivity) -> None:
    gold = load_gold()
    scores = exclusivity.scores([(g.kind, g.x, g.x_prime) for g in gold])
    now = accuracy_by_type([g.kind for g in gold], [g.label for g in gold], scores)
    stored = json.loads(exclusivity.metadata["metrics"])["gold"]
    for kind in ("object", "attribute", "relation"):
        assert now[kind]["n"] >= 300
        assert now[kind]["accuracy"] == pytest.approx(stored[kind]["accuracy"], abs=1e-4)


@pytest.mark.parametrize("kind", ["attribute", "relation"])
def test_gold_accuracy_reaches_the_paper(exclusivity: OnnxExclusivity, kind: ModelType) -> None:
    gold = [g for g in load_gold() if g.kind == kind]
    scores = exclusivity.scores([(g.kind, g.x, g.x_prime) for g in gold])
    accuracy = float(np.mean([(s > 0.5) == g.label for g, s in zip(gold, scores, strict=True)]))
    assert accuracy >= PAPER_ACCURACY[kind]


@pytest.mark.parametrize(
    ("specific", "general"),
    [("riding", "near"), ("sitting on", "on"), ("wearing", "has"), ("standing behind", "behind")],
)
def test_relations_are_directional(
    exclusivity: OnnxExclusivity, specific: str, general: str
) -> None:
    assert exclusivity.m("relation", specific, general) > 0.5
    assert exclusivity.m("relation", general, specific) < 0.5


def test_obvious_pairs(exclusivity: OnnxExclusivity) -> None:
    assert exclusivity.m("object", "man", "woman") > 0.5
    assert exclusivity.m("object", "man", "person") < 0.5
    assert exclusivity.m("attribute", "red", "blue") > 0.5
    assert exclusivity.m("attribute", "red", "wooden") < 0.5
    assert exclusivity.m("relation", "holding", "carrying") < 0.5
    assert exclusivity.m("object", "Man", " man ") == 0.0  # identical after normalization


def test_scores_are_deterministic_and_order_free(
    exclusivity: OnnxExclusivity, exclusivity_path: Path, wordnet: Any
) -> None:
    pairs: list[tuple[Any, str, str]] = [
        ("object", "dog", "cat"),
        ("attribute", "tall", "short"),
        ("relation", "on", "under"),
        ("relmod", "using", "with"),
    ]
    first = exclusivity.m_batch(pairs)
    fresh = OnnxExclusivity(exclusivity_path, wordnet=wordnet)
    assert fresh.m_batch(pairs) == first
    assert fresh.m_batch(pairs[::-1]) == first[::-1]
    assert [fresh.m(*p) for p in pairs] == first


@pytest.mark.parametrize(
    ("pair", "field"),
    [
        (("object", "", "cat"), "pairs[1].x"),
        (("object", "dog", "   "), "pairs[1].x_prime"),
        (("verb", "dog", "cat"), "pairs[1].node_type"),
        (("object", "dog" * 50, "cat"), "pairs[1].x"),
        (("object", "犬", "cat"), "pairs[1].x"),
        (("object", "dog"), "pairs[1]"),
    ],
)
def test_bad_input_names_the_field(
    exclusivity: OnnxExclusivity, pair: tuple[Any, ...], field: str
) -> None:
    with pytest.raises(ModelInputError) as info:
        exclusivity.m_batch([("object", "dog", "cat"), pair])
    assert info.value.field == field


@pytest.mark.parametrize(
    ("pair", "field"),
    [
        (["object", "dog", "cat"], "pairs[1]"),
        (("object", ["dog"], "cat"), "pairs[1].x"),
        (("object", "dog", {"cat": 1}), "pairs[1].x_prime"),
    ],
)
def test_unhashable_input_names_the_field(
    exclusivity: OnnxExclusivity, pair: Any, field: str
) -> None:
    exclusivity.m("object", "dog", "cat")  # a scored pair: the cache is consulted first
    with pytest.raises(ModelInputError) as info:
        exclusivity.m_batch([("object", "dog", "cat"), pair])
    assert info.value.field == field


def test_a_term_scores_as_its_normal_form(exclusivity: OnnxExclusivity) -> None:
    normal = exclusivity.m("object", "dog", "cat")
    got = exclusivity.m_batch(
        [("object", " Dog ", "CAT"), ("object", "dog", "cat"), ("relmod", "on", "under")]
    )
    assert got[:2] == [normal, normal]
    assert got[2] == exclusivity.m("relation", "on", "under")


@pytest.mark.parametrize(
    ("node_type", "x", "names"),
    [
        ("object", "dog", ["cat", "horse", "animal", "man"]),  # the row slice, once scored
        ("object", "dog", ["cat", "Horse", " man "]),  # not in normal form: pair by pair
        ("object", "dog", ["cat", "dog", "dogs"]),  # x itself, and a name of x's normal form
        ("relmod", "on", ["under", "near"]),  # scored by the relation head
        ("attribute", "red", []),
    ],
)
def test_scores_against_a_vocabulary_are_the_pairs_scores(
    exclusivity_path: Path, wordnet: Any, node_type: NodeType, x: str, names: list[str]
) -> None:
    """The lookup's one call per queried name gives what the pairs give, first and again."""
    model = OnnxExclusivity(exclusivity_path, wordnet=wordnet)
    pairs = [(node_type, x, n) for n in names]
    expected = model.scores(pairs)
    np.testing.assert_array_equal(model.scores_against(node_type, x, names), expected)
    np.testing.assert_array_equal(model.scores_against(node_type, x, names), expected)
    fresh = OnnxExclusivity(exclusivity_path, wordnet=wordnet)
    np.testing.assert_array_equal(fresh.scores_against(node_type, x, names), expected)


def test_scores_against_bad_input_names_the_field(exclusivity: OnnxExclusivity) -> None:
    with pytest.raises(ModelInputError) as info:
        exclusivity.scores_against("object", "dog", ["cat", ""])
    assert info.value.field == "pairs[1].x_prime"
    with pytest.raises(ModelInputError) as info:
        exclusivity.scores_against("colour", "dog", ["cat"])  # type: ignore[arg-type]
    assert info.value.field == "pairs[0].node_type"


def test_accented_words_are_scored(exclusivity: OnnxExclusivity) -> None:
    assert exclusivity.m("object", "café", "cafe") == 0.0
    assert 0.0 <= exclusivity.m("object", "crème", "dog") <= 1.0


def _quick_train(exclusivity: OnnxExclusivity, seed: int) -> Any:
    words = [("dog", "cat", 1), ("dog", "animal", 0), ("man", "woman", 1), ("man", "person", 0)]
    attrs = [("red", "blue", 1), ("red", "wooden", 0), ("tall", "short", 1), ("big", "large", 0)]
    rels = [
        ("riding", "near", 1),
        ("near", "riding", 0),
        ("on", "under", 1),
        ("holding", "carrying", 0),
    ]
    pairs = [Labelled("object", a, b, y, "fixture") for a, b, y in words]
    pairs += [Labelled("attribute", a, b, y, "fixture") for a, b, y in attrs]
    pairs += [Labelled("relation", a, b, y, "fixture") for a, b, y in rels]
    return train_exclusivity(
        featurizer=exclusivity.featurizer,
        pairs=pairs * 5,
        gold=load_gold()[:20],
        trained_on={"fixture": True},
        options=TrainOptions(seed=seed, hidden=(8,), max_iter=30, heldout_fraction=0.0),
    )


def test_onnx_output_equals_the_training_time_model(
    exclusivity: OnnxExclusivity, tmp_path: Path, wordnet: Any
) -> None:
    result = _quick_train(exclusivity, seed=3)
    path = tmp_path / "quick.onnx"
    export_exclusivity(path, result, exclusivity.featurizer.lexicon, created_by="test")
    served = OnnxExclusivity(path, wordnet=wordnet)
    fixtures = [
        ("object", "horse", "zebra"),
        ("attribute", "green", "metal"),
        ("relation", "under", "on"),
        ("relation", "standing on", "next to"),
    ]
    rows = exclusivity.featurizer.rows(fixtures)  # type: ignore[arg-type]
    w = result.weights
    sklearn_probs = result.sklearn_model.predict_proba((rows - w.mean) / w.scale)[:, 1]
    onnx_probs = served.predict_rows(rows)
    np.testing.assert_allclose(onnx_probs, sklearn_probs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(served.scores(fixtures), sklearn_probs, rtol=1e-5, atol=1e-6)


def test_cache_is_dropped_when_the_model_version_changes(
    exclusivity: OnnxExclusivity, exclusivity_path: Path, tmp_path: Path, wordnet: Any
) -> None:
    path = tmp_path / "swap.onnx"
    shutil.copyfile(exclusivity_path, path)
    model = OnnxExclusivity(path, wordnet=wordnet)
    before = model.m("object", "horse", "zebra")
    assert model.cache_size == 1
    assert model.refresh() is False  # same file, same version: cache kept
    assert model.cache_size == 1
    result = _quick_train(exclusivity, seed=4)
    export_exclusivity(path, result, exclusivity.featurizer.lexicon, created_by="test")
    assert model.refresh() is True
    assert model.cache_size == 0
    assert model.version == result.version != exclusivity.version
    after = model.m("object", "horse", "zebra")
    assert after == pytest.approx(
        float(
            result.weights.forward(exclusivity.featurizer.rows([("object", "horse", "zebra")]))[0]
        ),
        abs=1e-6,
    )
    assert after != before


def test_the_score_cache_is_bounded_and_keeps_the_newest(
    exclusivity_path: Path, wordnet: Any
) -> None:
    """A long-running service scores ever more pairs: beyond ``max_pairs`` the oldest tenth is
    dropped, and dropped pairs score the same when asked again."""
    model = OnnxExclusivity(exclusivity_path, wordnet=wordnet, max_pairs=1000)
    names = [f"thing{i}" for i in range(60)]
    pairs: list[tuple[NodeType, str, str]] = [
        ("object", x, y) for x in names for y in names if x != y
    ]  # 3,540 pairs
    first = model.m_batch(pairs)
    assert 900 <= model.cache_size <= 1000
    newest = pairs[-100:]
    assert model.m_batch(newest) == first[-100:]  # still cached: no new entries
    size = model.cache_size
    assert model.m_batch(newest) == first[-100:]
    assert model.cache_size == size
    assert model.m_batch(pairs[:5]) == pytest.approx(first[:5], abs=1e-6)  # recomputed


def test_the_cache_bound_comes_from_settings() -> None:
    from covr.settings import Settings

    assert Settings(_env_file=None).model_cache_pairs == 16_000_000  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="model_cache_pairs"):
        Settings(_env_file=None, model_cache_pairs=10)  # type: ignore[call-arg]


def test_not_an_exclusivity_model_is_refused(presence_path: Path, wordnet: Any) -> None:
    with pytest.raises(ModelResourceError, match="not an exclusivity model"):
        OnnxExclusivity(presence_path, wordnet=wordnet)
    with pytest.raises(ModelResourceError, match="does not exist"):
        OnnxExclusivity(Path("/nonexistent/model.onnx"), wordnet=wordnet)
