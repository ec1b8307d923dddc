"""Evaluation metrics on a hand-computed example."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from covr.splits.evaluate import (
    auc,
    evaluate,
    generalization_score,
    read_predictions,
)
from covr.splits.examples import ExampleError, normalize_answer
from tests.unit.splits.programs import example

pytestmark = pytest.mark.unit

DOG = ("unique", ("find", "dog"))


def ex(qid: str, template: str, answer: Any, split: str = "val") -> dict[str, Any]:
    programs = {
        "VerifyAttr": ("verify_attr", DOG, "black"),
        "QueryAttr": ("query_attr", DOG, "color"),
        "Count": ("count", ("find", "dog")),
        "ChooseAttr": ("choose_attr", DOG, "red", "blue"),
    }
    return example(programs[template], qid=qid, answer=answer, template=template, split=split)


GOLD = [
    ex("e1", "VerifyAttr", True),
    ex("e2", "VerifyAttr", False),
    ex("e3", "VerifyAttr", True),
    ex("e4", "QueryAttr", "red"),
    ex("e5", "Count", 2),
    ex("e6", "ChooseAttr", "blue"),
]
PREDICTIONS = {"e1": True, "e2": "yes", "e4": "Red ", "e5": "2", "e6": "blue"}  # e3 missing
TRAIN = [
    ex("t1", "VerifyAttr", True, "train"),
    ex("t2", "VerifyAttr", True, "train"),
    ex("t3", "VerifyAttr", False, "train"),
    ex("t4", "QueryAttr", "red", "train"),
    ex("t5", "QueryAttr", "white", "train"),
    ex("t6", "QueryAttr", "white", "train"),
    ex("t7", "Count", 3, "train"),
    ex("t8", "Count", 2, "train"),
    ex("t9", "Count", 2, "train"),
    ex("t10", "VerifyAttr", True, "train"),
]
IID = [ex("i1", "VerifyAttr", True), ex("i2", "Count", 3)]
EASINESS = {"e1": 0.9, "e2": 0.2, "e3": 0.5, "e4": 0.8, "e5": 0.5, "e6": 0.1}


def test_hand_computed_report() -> None:
    report = evaluate(
        GOLD,
        {**PREDICTIONS, "i1": True, "i2": 3},
        train=TRAIN,
        iid=IID,
        easiness=EASINESS,
        text_accuracy=0.5,
        iid_size_accuracy=0.75,
    )
    assert report["accuracy"] == pytest.approx(4 / 6)
    assert report["missing"] == 1
    assert report["per_template"]["VerifyAttr"] == {"examples": 3, "accuracy": pytest.approx(1 / 3)}
    assert report["per_template"]["QueryAttr"]["accuracy"] == 1.0
    assert report["per_property"]["TPL-VERIFYATTR"]["accuracy"] == pytest.approx(1 / 3)
    assert report["per_property"]["ANS-BOOL"] == {"examples": 3, "accuracy": pytest.approx(1 / 3)}
    assert not any(p.startswith("LEXICAL-") for p in report["per_property"])
    # MAJ: "true" is the most frequent training answer (4 of 10) → right on e1, e3
    assert report["baselines"]["maj_answer"] == "true"
    assert report["baselines"]["maj"] == pytest.approx(2 / 6)
    # MAJTEMPL: true (e1, e3 right), white (e4 wrong), 2 (e5 right), ChooseAttr: a coin flip
    assert report["baselines"]["majtempl"] in (pytest.approx(3 / 6), pytest.approx(4 / 6))
    assert report["generalization_score"] == pytest.approx((4 / 6 - 0.5) / 0.25)
    assert report["systematicity_gap"]["iid_accuracy"] == 1.0
    assert report["systematicity_gap"]["gap"] == pytest.approx(4 / 6 - 1)
    # correct: 0.9, 0.8, 0.5, 0.1; wrong: 0.2, 0.5 → (2 + 2 + 1.5 + 0) / 8
    assert report["easiness_auc"]["auc"] == pytest.approx(5.5 / 8)


def test_majtempl_flips_a_seeded_coin_for_two_option_templates() -> None:
    values = {
        round(6 * evaluate(GOLD, PREDICTIONS, train=TRAIN, seed=s)["baselines"]["majtempl"])
        for s in range(30)
    }
    assert values == {3, 4}
    first = evaluate(GOLD, PREDICTIONS, train=TRAIN, seed=5)["baselines"]["majtempl"]
    assert evaluate(GOLD, PREDICTIONS, train=TRAIN, seed=5)["baselines"]["majtempl"] == first


def test_small_metrics() -> None:
    assert auc([0.1, 0.2], [False, True]) == 1.0
    assert auc([0.1, 0.2], [True, False]) == 0.0
    assert auc([0.3, 0.3], [True, False]) == 0.5
    assert auc([0.3], [True]) is None
    assert generalization_score(0.6, 0.5, 0.5) is None
    assert normalize_answer("Yes") == normalize_answer(True) == "true"
    assert normalize_answer(2.0) == normalize_answer("2") == "2"


def test_read_predictions_formats_and_errors(tmp_path: Path) -> None:
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text('{"qid": "a", "prediction": true}\n{"qid": "b", "answer": 2}\n')
    assert read_predictions(jsonl) == {"a": True, "b": 2}
    mapping = tmp_path / "p.json"
    mapping.write_text(json.dumps({"a": "red", "b": 1}))
    assert read_predictions(mapping) == {"a": "red", "b": 1}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "a", "prediction": true}\n{"qid": "a", "prediction": false}\n')
    with pytest.raises(ExampleError, match=r"bad.jsonl:2: qid: 'a' predicted twice"):
        read_predictions(bad)
    bad.write_text('{"qid": "a"}\n')
    with pytest.raises(ExampleError, match=r":1: prediction"):
        read_predictions(bad)
    bad.write_text("{oops\n")
    with pytest.raises(ExampleError, match=r"bad.jsonl:1: not JSON"):
        read_predictions(bad)
    with pytest.raises(ExampleError, match=r"missing.jsonl: cannot be read"):
        read_predictions(tmp_path / "missing.jsonl")
