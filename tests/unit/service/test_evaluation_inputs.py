"""Evaluate's request fields that reached the service as INTERNAL (found by
tests/integration/service/test_fuzz_mutations.py): a prediction that is an integer of 4,500
digits (past Python's int-from-text limit, a ValueError that is not a JSONDecodeError) and
JSON nested past the decoder's depth (RecursionError), in a prediction or a gold line. Each is
now an INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import json

import pytest

from covr.service.errors import InvalidArgument
from covr.service.evaluation import run_evaluation
from covr.v1 import evaluation_pb2
from tests.unit.splits.test_evaluate import GOLD, PREDICTIONS

pytestmark = pytest.mark.unit

DEEP = "[" * 100_000 + "]" * 100_000


def request(**changes: object) -> evaluation_pb2.EvaluateRequest:
    predictions = {q: json.dumps(a) for q, a in PREDICTIONS.items()}
    gold = [json.dumps(e) for e in GOLD]
    message = evaluation_pb2.EvaluateRequest(gold_examples=gold, predictions=predictions)
    if "prediction" in changes:
        message.predictions["e1"] = str(changes["prediction"])
    if "gold_line" in changes:
        message.gold_examples.append(str(changes["gold_line"]))
    return message


def test_the_unchanged_request_is_evaluated() -> None:
    assert run_evaluation(request(), 1000).accuracy >= 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"prediction": "1" * 4_500}, "predictions['e1']"),
        ({"prediction": DEEP}, "predictions['e1']"),
        ({"gold_line": DEEP}, f"gold_examples[{len(GOLD)}]"),
    ],
    ids=["4500-digit-prediction", "deep-prediction", "deep-gold-line"],
)
def test_hostile_json_is_an_invalid_argument_naming_the_field(
    change: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        run_evaluation(request(**change), 1000)
    assert field in str(refused.value) or any(v.field == field for v in refused.value.violations), (
        refused.value
    )
