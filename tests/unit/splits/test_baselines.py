"""Shortcut baselines (COVR §4) on hand-made example lists: text-only, image-identity, the
report, the exported text-only model and ``evaluate``'s measured text accuracy."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from covr.splits.baselines import (
    BaselineError,
    Baselines,
    ImageIdentityBaseline,
    NaiveBayes,
    TextOnlyBaseline,
    _answered_templates,
    compute_baselines,
    held_out_fold,
    markdown_report,
    text_features,
)
from covr.splits.evaluate import evaluate
from tests.unit.splits.programs import example

pytestmark = pytest.mark.unit

DOG = ("unique", ("find", "dog"))
PROGRAMS = {
    "VerifyAttr": ("verify_attr", DOG, "black"),
    "QueryAttr": ("query_attr", DOG, "color"),
    "Count": ("count", ("find", "dog")),
    "ChooseAttr": ("choose_attr", DOG, "red", "blue"),
    "VerifyQuant": ("all", ("find", "dog"), [("verify_attr", ("find", "dog"), "black")]),
}


def ex(
    qid: str,
    template: str,
    answer: Any,
    text: str,
    *,
    split: str = "train",
    scenes: list[str] | None = None,
) -> dict[str, Any]:
    return example(
        PROGRAMS[template],
        qid=qid,
        answer=answer,
        template=template,
        split=split,
        scenes=scenes,
        utterance=text,
    )


# -- text-only -------------------------------------------------------------------------------


def test_text_features_are_lowercased_unigrams_and_bigrams_with_bounds() -> None:
    assert text_features("Is the dog Black?") == sorted(
        {"is", "the", "dog", "black", "<s> is", "is the", "the dog", "dog black", "black </s>"}
    )
    assert text_features("") == ["<s> </s>"]


def test_naive_bayes_hand_computed() -> None:
    """Two classes, alpha 1: the word that only one class saw decides."""
    nb = NaiveBayes(1.0).fit(["sky blue", "sea blue", "grass green"], ["blue", "blue", "green"])
    assert nb.classes == ["blue", "green"]
    assert nb.predict("the sky") == "blue"
    assert nb.predict("grass") == "green"
    assert nb.predict("nothing known") == "blue"  # the prior: 2 of 3
    # text "sky": known features "sky" and "<s> sky", each seen once with blue
    features = {f for t in ("sky blue", "sea blue", "grass green") for f in text_features(t)}
    blue_total = len(text_features("sky blue")) + len(text_features("sea blue"))
    one = math.log((1 + 1) / (blue_total + len(features)))
    assert nb.scores("sky")[0] == pytest.approx(math.log(2 / 3) + 2 * one)


def _pool(n: int, seed: int, split: str = "train") -> list[dict[str, Any]]:
    """VerifyQuant questions whose word 'standing' gives the answer away (a text shortcut);
    VerifyAttr questions whose text says nothing (answer by coin, majority true);
    ChooseAttr questions "Is the dog red or blue?" (answer one of the two options)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for i in range(n):
        image = f"{split}-img{i // 2}"
        scenes = [image, f"{split}-other{rng.randrange(50)}"]
        pose = rng.choice(["standing", "sitting"])
        rows.append(
            ex(f"{split}-q{i}", "VerifyQuant", pose == "standing", f"Are all dogs {pose}?",
               split=split, scenes=scenes)
        )  # fmt: skip
        rows.append(
            ex(f"{split}-v{i}", "VerifyAttr", rng.random() < 0.6, "Is the dog black?",
               split=split, scenes=scenes)
        )  # fmt: skip
        a, b = rng.sample(["red", "blue", "green", "white"], 2)
        rows.append(
            ex(f"{split}-c{i}", "ChooseAttr", rng.choice([a, b]), f"Is the dog {a} or {b}?",
               split=split, scenes=scenes)
        )  # fmt: skip
        rows[-1]["program"][-1]["arguments"] = [a, b]
    return rows


def test_text_only_learns_a_word_shortcut_and_backs_off_where_the_text_says_nothing() -> None:
    train = _pool(200, seed=1)
    test = _pool(60, seed=2, split="val")
    model = TextOnlyBaseline(train, seed=0)
    assert model.held_out["examples"] >= 100
    assert model.classifier_templates is not None
    assert "VerifyQuant" in model.classifier_templates  # the word decides: 100 % held out
    assert "ChooseAttr" not in model.classifier_templates  # MAJTEMPL's pick of an option wins
    report, _ = compute_baselines(train, {"test": test}, seed=0)
    rows = report["sets"]["test"]["per_template"]
    assert rows["VerifyQuant"]["text_only"] == 1.0
    assert rows["VerifyQuant"]["majtempl"] < 0.8
    assert rows["ChooseAttr"]["text_only"] == rows["ChooseAttr"]["majtempl"]
    assert rows["VerifyAttr"]["text_only"] == rows["VerifyAttr"]["majtempl"]


def test_text_only_reads_only_the_utterance() -> None:
    train = _pool(200, seed=1)
    model = TextOnlyBaseline(train, seed=0)
    probe = ex("p", "VerifyQuant", True, "Are all dogs sitting?", split="val", scenes=["x"])
    other = dict(probe, scenes=["y", "z", "w"], answer=False, qid="p2", properties=["HAS-X"])
    other["program"] = [{"operation": "exists", "arguments": [], "dependencies": []}]
    assert model.predict(probe) == model.predict(other) == "false"


def test_text_only_is_deterministic_and_exports_its_parameters(tmp_path: Path) -> None:
    train = _pool(120, seed=3)
    test = _pool(40, seed=4, split="val")
    first = TextOnlyBaseline(train, seed=5)
    second = TextOnlyBaseline(list(train), seed=5)
    assert json.dumps(first.to_json(), sort_keys=True) == json.dumps(
        second.to_json(), sort_keys=True
    )
    path = tmp_path / "model.json"
    first.save(path)
    loaded = TextOnlyBaseline.load(path)
    assert [loaded.predict(e) for e in test] == [first.predict(e) for e in test]
    assert loaded.alpha == first.alpha
    assert loaded.classifier_templates == first.classifier_templates


def test_small_training_sets_show_no_evidence_so_majtempl_answers() -> None:
    train = [
        ex("t1", "QueryAttr", "blue", "What color is the sky?"),
        ex("t2", "QueryAttr", "blue", "What color is the sea?"),
        ex("t3", "QueryAttr", "green", "What color is the grass?"),
        ex("t4", "VerifyAttr", True, "Is the dog black?"),
    ]
    grass = ex("e", "QueryAttr", "green", "What color is the grass now?", split="val")
    model = TextOnlyBaseline(train)
    assert model.alpha == 1.0
    assert model.classifier_templates == []
    assert model.held_out["too_few"] is True
    assert model.predict(grass) == "blue"  # MAJTEMPL
    assert TextOnlyBaseline(train, choose_templates=False).predict(grass) == "green"
    assert TextOnlyBaseline().predict(train[0]) is None
    images = ImageIdentityBaseline(train)
    assert images.rule_templates == {"images": [], "image_count": []}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"format": "other"}, "format"),
        ({"format": "covr-text-only-nb/1", "alpha": 1.0, "seed": 0}, "not a text-only model"),
        (
            {"format": "covr-text-only-nb/1", "alpha": 1.0, "seed": 0, "classes": ["a"],
             "class_examples": [1], "class_feature_totals": [1], "features": {"x": [[3, 1]]},
             "majtempl": {"majority": "a", "per_template": {}}, "classifier_templates": None},
            "class index out of range",
        ),
    ],
)  # fmt: skip
def test_a_broken_model_file_is_refused(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match=message):
        TextOnlyBaseline.load(path)
    with pytest.raises(BaselineError, match="cannot read"):
        TextOnlyBaseline.load(tmp_path / "missing.json")


# -- held-out selection ----------------------------------------------------------------------


def test_held_out_fold_keeps_source_images_whole_and_is_seeded() -> None:
    groups = [f"img{i // 3}" for i in range(300)]
    dev, rest = held_out_fold(groups, seed=0)
    assert sorted(dev + rest) == list(range(300))
    assert {groups[i] for i in dev}.isdisjoint({groups[i] for i in rest})
    assert 60 <= len(dev) <= 62
    assert held_out_fold(groups, seed=0) == (dev, rest)
    assert held_out_fold(groups, seed=1) != (dev, rest)


def test_answered_templates_need_to_beat_majtempl() -> None:
    train = [ex(f"a{i}", "VerifyAttr", True, "x") for i in range(10)] + [
        ex(f"b{i}", "Count", i % 3, "y") for i in range(10)
    ]
    dev = [0, 1, 10, 11, 12]
    rest = [i for i in range(20) if i not in dev]
    right_on_count = {"b0": "0", "b1": "1", "b2": "2"}
    chosen, detail = _answered_templates(
        train, dev, rest, lambda e: right_on_count.get(e["qid"], "true"), seed=0
    )
    assert chosen == ["Count"]  # VerifyAttr: a tie with MAJTEMPL ("true") goes to MAJTEMPL
    assert detail["VerifyAttr"] == {"examples": 2, "model": 1.0, "majtempl": 1.0}
    assert detail["Count"]["model"] == 1.0
    none, _ = _answered_templates(train, dev, rest, lambda e: None, seed=0)
    assert none == []


# -- image-identity --------------------------------------------------------------------------


def test_image_rules_votes_then_image_count_then_majtempl() -> None:
    train = [
        ex("t1", "VerifyAttr", False, "q", scenes=["a", "b"]),
        ex("t2", "VerifyAttr", False, "q", scenes=["a", "c"]),
        ex("t3", "VerifyAttr", True, "q", scenes=["d", "e", "f"]),
        ex("t4", "VerifyAttr", True, "q", scenes=["g", "h", "i"]),
        ex("t5", "VerifyAttr", True, "q", scenes=["g", "j", "k"]),
        ex("t6", "ChooseAttr", "blue", "q", scenes=["a"]),
        ex("t7", "Count", 2, "q", scenes=["a"]),
    ]
    model = ImageIdentityBaseline(train, choose_templates=False)
    # image "a" voted false within VerifyAttr (its Count/ChooseAttr answers do not count)
    assert model.predict_with_rule(ex("e1", "VerifyAttr", True, "q", scenes=["a", "z", "y"])) == (
        "false",
        "images",
    )
    # a, g: one vote each (false, true); summed counts 2 false vs 2 true; then name order
    assert model.predict(ex("e2", "VerifyAttr", True, "q", scenes=["a", "g"])) == "false"
    # unseen images: the template's majority for three images
    assert model.predict_with_rule(ex("e3", "VerifyAttr", False, "q", scenes=["x", "y", "w"])) == (
        "true",
        "image_count",
    )
    # unseen images and an unseen count: MAJTEMPL
    assert (
        model.predict_with_rule(ex("e4", "VerifyAttr", False, "q", scenes=["x"]))[1] == "majtempl"
    )
    # choice templates: votes limited to the question's options; no image-count rule
    choose = ex("e5", "ChooseAttr", "red", "q", scenes=["a"])
    assert model.predict_with_rule(choose) == ("blue", "images")
    choose["program"][-1]["arguments"] = ["red", "green"]
    assert model.predict_with_rule(choose)[1] == "majtempl"


def test_image_count_shortcut_is_found_and_image_ids_never_seen_fall_back() -> None:
    """Count questions whose answer is the number of images shown: image-identity finds it on
    unseen images, MAJTEMPL cannot; text-only (same text everywhere) cannot either."""
    rng = random.Random(7)

    def pool(n: int, split: str) -> list[dict[str, Any]]:
        rows = []
        for i in range(n):
            k = rng.randrange(1, 5)
            scenes = [f"{split}-{i}-{j}" for j in range(k)]
            rows.append(ex(f"{split}{i}", "Count", k, "How many dogs?", split=split, scenes=scenes))
        return rows

    train, test = pool(300, "train"), pool(100, "val")
    report, _ = compute_baselines(train, {"test": test})
    scored = report["sets"]["test"]
    assert scored["overall"]["image_identity"] == 1.0
    assert scored["overall"]["majtempl"] < 0.5
    assert scored["overall"]["text_only"] == scored["overall"]["majtempl"]
    assert scored["image_identity_coverage"] == {"images": 0.0, "image_count": 1.0, "majtempl": 0.0}
    assert scored["images_seen_in_training"] == 0.0
    assert report["image_identity"]["rule_templates"]["image_count"] == ["Count"]


# -- the report ------------------------------------------------------------------------------


def test_report_reuses_maj_and_majtempl_and_prints_markdown() -> None:
    train = _pool(50, seed=1)
    test = _pool(20, seed=2, split="val")
    iid = _pool(10, seed=3, split="val")
    for e in iid:
        e["qid"] = "iid-" + e["qid"]
    report, model = compute_baselines(train, {"test": test, "iid_test": iid, "empty": []}, seed=3)
    assert set(report["sets"]) == {"test", "iid_test"}
    majority = Baselines(train, 3)
    overall = report["sets"]["test"]["overall"]
    assert overall["examples"] == len(test)
    assert overall["maj"] == pytest.approx(
        sum(majority.maj(e) == str(e["answer"]).lower() for e in test) / len(test)
    )
    gold = evaluate(test, {}, train=train, seed=3)
    assert overall["majtempl"] == gold["baselines"]["majtempl"]
    assert overall["maj"] == gold["baselines"]["maj"]
    per = report["sets"]["test"]["per_template"]
    assert sum(row["examples"] for row in per.values()) == len(test)
    assert report["text_only"]["train_examples"] == len(train) == report["train_examples"]
    assert model.train_examples == len(train)
    table = markdown_report(report)
    assert "| template | n | MAJ | MAJTEMPL | text-only | image-identity |" in table
    assert "**test** (60 examples, 150 training)" in table
    assert f"| **all** | {len(test)} |" in table
    assert "| VerifyQuant | 20 |" in table
    with pytest.raises(BaselineError, match="no training examples"):
        compute_baselines([], {"test": test})


def test_evaluate_measures_the_text_accuracy_when_not_given() -> None:
    train = _pool(100, seed=1)
    test = _pool(30, seed=2, split="val")
    predictions = {e["qid"]: e["answer"] for e in test}
    measured = evaluate(test, predictions, train=train, iid_size_accuracy=0.9, measure_text=True)
    text = TextOnlyBaseline(train).predict
    expected = sum(text(e) == str(e["answer"]).lower() for e in test) / len(test)
    assert measured["baselines"]["text_only"] == pytest.approx(expected)
    inputs = measured["generalization_inputs"]
    assert inputs == {"text": expected, "iid_size": 0.9, "text_accuracy_source": "measured"}
    assert measured["generalization_score"] == pytest.approx((1.0 - expected) / (0.9 - expected))
    given = evaluate(test, predictions, train=train, text_accuracy=0.5, iid_size_accuracy=0.9,
                     measure_text=True)  # fmt: skip
    assert given["generalization_inputs"]["text_accuracy_source"] == "given"
    assert "text_only" not in given["baselines"]
    plain = evaluate(test, predictions, train=train)
    assert "text_only" not in plain["baselines"]
    assert "generalization_score" not in plain
    with pytest.raises(ValueError, match="give --text-accuracy"):
        evaluate(test, predictions, iid_size_accuracy=0.9, measure_text=True)
    alone = evaluate(test, predictions, measure_text=True)  # no training: nothing measured
    assert "text_only" not in alone["baselines"]
