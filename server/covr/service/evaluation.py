"""``Evaluate``: request fields to the splits room's :func:`covr.splits.evaluate.evaluate` and back.

Examples travel as JSON objects in the exported JSONL format because that is what evaluation
code already holds (the files ``covr generate`` / ``covr export`` write); every entry is checked
with the same contract as ``covr evaluate`` and a bad one is reported with its field path
(``gold_examples[3].answer``). Predictions are JSON values so that ``true``, ``3`` and ``"red"``
keep their types. No metric is computed here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from covr.questions.example import ExampleRecord
from covr.service.errors import FieldViolation, InvalidArgument
from covr.splits.evaluate import evaluate
from covr.splits.examples import check_example
from covr.v1 import evaluation_pb2


def _examples(
    lines: Iterable[str], field: str, out: list[FieldViolation], most: int
) -> list[ExampleRecord]:
    """The checked examples of one field; at most ``most`` (``COVR_SERVICE_MAX_EVALUATE_EXAMPLES``:
    the message size limit usually binds first)."""
    examples: list[ExampleRecord] = []
    seen: set[str] = set()
    for i, line in enumerate(lines):
        if i >= most:
            out.append(FieldViolation(field, f"at most {most} examples per request"))
            break
        where = f"{field}[{i}]"
        try:
            example = check_example(json.loads(line), require_provenance=False)
        except json.JSONDecodeError as exc:
            out.append(FieldViolation(where, f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        except RecursionError:  # a line nested past the decoder's depth (INTERNAL before)
            out.append(FieldViolation(where, "not JSON: nested too deeply"))
            continue
        except ValueError as exc:
            out.append(FieldViolation(f"{where}.{str(exc).split(':', 1)[0]}", str(exc)))
            continue
        if example["qid"] in seen:
            out.append(FieldViolation(f"{where}.qid", f"qid {example['qid']!r} is given twice"))
            continue
        seen.add(example["qid"])
        examples.append(dict(example))
    return examples


def _predictions(raw: Mapping[str, str], out: list[FieldViolation]) -> dict[str, Any]:
    predictions: dict[str, Any] = {}
    for qid, text in raw.items():
        where = f"predictions[{qid!r}]"
        if not qid:
            out.append(FieldViolation("predictions", "an empty qid"))
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            # not JSON, an integer past Python's digit limit (4,300: ValueError, issue 21), or
            # nesting past the decoder's depth: all were INTERNAL before, each is the caller's
            out.append(FieldViolation(where, 'must be a JSON value (true, 3, "red")'))
            continue
        if not isinstance(value, bool | int | float | str) or (
            isinstance(value, float) and not math.isfinite(value)
        ):
            out.append(FieldViolation(where, "must be a JSON boolean, number or string"))
            continue
        predictions[qid] = value
    return predictions


def _accuracy_field(value: float | None, field: str, out: list[FieldViolation]) -> float | None:
    if value is not None and not 0.0 <= value <= 1.0:
        out.append(FieldViolation(field, "must be an accuracy between 0 and 1"))
    return value


def _group(entry: Mapping[str, Any]) -> evaluation_pb2.GroupAccuracy:
    msg = evaluation_pb2.GroupAccuracy(examples=int(entry["examples"]))
    if entry.get("accuracy") is not None:
        msg.accuracy = float(entry["accuracy"])
    return msg


def run_evaluation(
    request: evaluation_pb2.EvaluateRequest, max_examples: int
) -> evaluation_pb2.EvaluateResponse:
    """Validate every field (all violations at once), evaluate, convert the report;
    ``max_examples`` caps each list of examples (the server's settings)."""
    violations: list[FieldViolation] = []
    gold = _examples(request.gold_examples, "gold_examples", violations, max_examples)
    if not request.gold_examples:
        violations.append(FieldViolation("gold_examples", "give at least one example"))
    train = _examples(request.train_examples, "train_examples", violations, max_examples)
    iid = _examples(request.iid_examples, "iid_examples", violations, max_examples)
    predictions = _predictions(request.predictions, violations)
    easiness: dict[str, float] = {}
    for qid, score in request.easiness.items():
        if not math.isfinite(score):
            violations.append(FieldViolation(f"easiness[{qid!r}]", "must be a finite number"))
        easiness[qid] = score
    text = _accuracy_field(
        request.text_accuracy if request.HasField("text_accuracy") else None,
        "text_accuracy",
        violations,
    )
    iid_size = _accuracy_field(
        request.iid_size_accuracy if request.HasField("iid_size_accuracy") else None,
        "iid_size_accuracy",
        violations,
    )
    if (text is None) != (iid_size is None):
        violations.append(
            FieldViolation("iid_size_accuracy", "give text_accuracy and iid_size_accuracy together")
        )
    if violations:
        raise InvalidArgument(violations[:100])
    report = evaluate(
        gold,
        predictions,
        train=train or None,
        iid=iid or None,
        easiness=easiness or None,
        text_accuracy=text,
        iid_size_accuracy=iid_size,
        lexical=request.lexical,
        seed=request.seed,
    )
    response = evaluation_pb2.EvaluateResponse(
        examples=report["examples"],
        predicted=report["predicted"],
        missing=report["missing"],
        unknown_predictions=report["unknown_predictions"],
        accuracy=report["accuracy"],
        report_json=json.dumps(report, sort_keys=True),
    )
    for name, entry in report["per_template"].items():
        response.per_template[name].CopyFrom(_group(entry))
    for name, entry in report["per_property"].items():
        response.per_property[name].CopyFrom(_group(entry))
    baselines = report["baselines"]
    if baselines.get("maj") is not None:
        response.maj = baselines["maj"]
    if baselines.get("majtempl") is not None:
        response.majtempl = baselines["majtempl"]
    if report.get("generalization_score") is not None:
        response.generalization_score = report["generalization_score"]
    gap = report.get("systematicity_gap", {}).get("gap")
    if gap is not None:
        response.systematicity_gap = gap
    auc = report.get("easiness_auc", {}).get("auc")
    if auc is not None:
        response.easiness_auc = auc
    return response
