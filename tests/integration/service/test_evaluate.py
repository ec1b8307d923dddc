"""The Evaluate RPC: the same report as the splits room's ``evaluate`` on the hand-computed
example of ``tests/unit/splits/test_evaluate.py``, through the SDK (sync and async), and every
bad field reported with its path."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from covr.splits.evaluate import evaluate
from covr_client import AsyncClient, Client, InvalidArgumentError
from tests.support.service_server import TestServer
from tests.unit.splits.test_evaluate import EASINESS, GOLD, IID, PREDICTIONS, TRAIN

pytestmark = pytest.mark.integration

ALL_PREDICTIONS = {**PREDICTIONS, "i1": True, "i2": 3}


def test_evaluate_equals_the_library(client: Client) -> None:
    expected = evaluate(
        GOLD,
        ALL_PREDICTIONS,
        train=TRAIN,
        iid=IID,
        easiness=EASINESS,
        text_accuracy=0.5,
        iid_size_accuracy=0.75,
    )
    got = client.evaluate(
        GOLD,
        ALL_PREDICTIONS,
        train=TRAIN,
        iid=IID,
        easiness=EASINESS,
        text_accuracy=0.5,
        iid_size_accuracy=0.75,
    )
    assert got.report == json.loads(json.dumps(expected, sort_keys=True))
    assert got.accuracy == pytest.approx(4 / 6)
    assert got.missing == 1
    assert got.per_template["VerifyAttr"] == pytest.approx(1 / 3)
    assert got.per_property["ANS-BOOL"] == pytest.approx(1 / 3)
    assert got.maj == pytest.approx(2 / 6)
    assert got.generalization_score == expected["generalization_score"]
    assert got.systematicity_gap == expected["systematicity_gap"]["gap"]
    assert got.easiness_auc == expected["easiness_auc"]["auc"]


def test_evaluate_minimal_and_json_lines(client: Client) -> None:
    lines = [json.dumps(e) for e in GOLD]
    got = client.evaluate(lines, PREDICTIONS)
    assert got.accuracy == pytest.approx(4 / 6)
    assert got.generalization_score is None
    assert got.systematicity_gap is None
    assert got.easiness_auc is None
    assert got.report["baselines"]["source"].startswith("evaluated")


def test_evaluate_async(server: TestServer) -> None:
    async def run() -> float:
        async with AsyncClient(server.target) as client:
            return (await client.evaluate(GOLD, PREDICTIONS)).accuracy

    assert asyncio.run(run()) == pytest.approx(4 / 6)


@pytest.mark.parametrize(
    ("gold", "predictions", "extra", "field"),
    [
        ([], {}, {}, "gold_examples"),
        (["{not json"], {}, {}, "gold_examples[0]"),
        ([{**GOLD[0], "qid": ""}], {}, {}, "gold_examples[0].qid"),
        ([GOLD[0], GOLD[0]], {}, {}, "gold_examples[1].qid"),
        ([{**GOLD[0], "answer": [1, 2]}], {}, {}, "gold_examples[0].answer"),
        (GOLD, {"e1": float("nan")}, {}, "predictions['e1']"),
        (GOLD, {}, {"text_accuracy": 1.5, "iid_size_accuracy": 0.5}, "text_accuracy"),
        (GOLD, {}, {"text_accuracy": 0.5}, "iid_size_accuracy"),
        (GOLD, {}, {"train": ["[]"]}, "train_examples[0]"),
    ],
)
def test_evaluate_bad_fields(
    client: Client,
    gold: list[Any],
    predictions: dict[str, Any],
    extra: dict[str, Any],
    field: str,
) -> None:
    with pytest.raises(InvalidArgumentError) as err:
        client.evaluate(gold, predictions, **extra)
    fields = [v.field for v in err.value.field_violations]
    assert any(f.startswith(field) for f in fields), fields
