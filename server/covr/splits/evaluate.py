"""Evaluation of predictions against gold examples (paper §4, arXiv §5; seeds 002 and 004).

- accuracy overall, per template and per property (a missing prediction counts as wrong and is
  reported);
- MAJ (the majority answer of the training set) and MAJTEMPL (the majority answer of the
  question's template in training; for the two-option templates ChooseAttr / ChooseObject /
  ChooseRel a seeded pick between the two options, as the paper does);
- generalization score (paper §4): the share of the gap between a text-only baseline and an
  i.i.d.-size model that a model closes, ``(acc - acc_text) / (acc_iid_size - acc_text)``;
  ``acc_text`` is given or, with ``measure_text``, measured by the text-only baseline of
  :mod:`covr.splits.baselines` fitted on the training examples;
- systematicity gap (seed 002): OOD accuracy minus IID accuracy (split ``test`` vs ``iid_test``);
- AUC of the easiness score against per-example correctness (seed 004 §5).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from covr.jsonlines import json_lines
from covr.jsontext import JsonTextError, loads
from covr.splits.baselines import Baselines
from covr.splits.examples import (
    ExampleError,
    ExampleRecord,
    accuracy,
    is_train,
    normalize_answer,
    template_of,
)
from covr.splits.properties import compute_properties


def read_predictions(path: Path) -> dict[str, Any]:
    """qid → predicted answer, from JSONL (``{"qid", "prediction"}`` or ``"answer"``) or a JSON map."""
    name = str(path)
    whole = _prediction_map(path)
    if whole is not None:
        return whole
    out: dict[str, Any] = {}
    for number, _, _, row in json_lines(path, ExampleError.of_line):
        if not isinstance(row, dict):
            raise ExampleError(name, number, "", "expected a JSON object")
        qid = row.get("qid")
        if not isinstance(qid, str) or not qid:
            raise ExampleError(name, number, "qid", "expected a non-empty string")
        key = "prediction" if "prediction" in row else "answer"
        value = row.get(key)
        if value is None or not isinstance(value, bool | int | float | str):
            raise ExampleError(name, number, "prediction", "expected a boolean, number or string")
        if qid in out:
            raise ExampleError(name, number, "qid", f"{qid!r} predicted twice")
        out[qid] = value
    return out


def _prediction_map(path: Path) -> dict[str, Any] | None:
    """The predictions of a file that is one JSON map ``{qid: prediction}``; None for anything
    else (JSON lines, or a file :func:`covr.jsonlines.json_lines` then reports)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    stripped = text.lstrip()
    if not stripped.startswith("{") or "\n{" in stripped.rstrip():
        return None
    try:
        whole = loads(stripped)
    except json.JSONDecodeError:
        return None
    except JsonTextError as exc:
        raise ExampleError(str(path), 1, "", exc.message) from None
    if not isinstance(whole, dict) or "qid" in whole:
        return None
    for qid, value in whole.items():
        if not isinstance(value, bool | int | float | str):
            raise ExampleError(str(path), 0, qid, "expected a boolean, number or string")
    return dict(whole)


def read_scores(path: Path, field: str = "easiness") -> dict[str, float]:
    """qid → a numeric score from a JSONL file (the output of ``covr easiness``)."""
    out: dict[str, float] = {}
    name = str(path)
    for number, _, _, row in json_lines(path, ExampleError.of_line):
        if not isinstance(row, dict) or not isinstance(row.get("qid"), str):
            raise ExampleError(name, number, "qid", "expected an object with a string qid")
        value = row.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ExampleError(name, number, field, "expected a number")
        out[row["qid"]] = float(value)
    return out


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Area under the ROC curve (probability a positive outranks a negative; ties count half)."""
    pairs = sorted(zip(scores, labels, strict=True), key=lambda p: p[0])
    positives = sum(1 for _, y in pairs if y)
    negatives = len(pairs) - positives
    if not positives or not negatives:
        return None
    rank_sum = 0.0
    i = 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        mean_rank = (i + 1 + j) / 2
        rank_sum += mean_rank * sum(1 for k in range(i, j) if pairs[k][1])
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def generalization_score(acc: float, acc_text: float, acc_iid_size: float) -> float | None:
    """``(acc - acc_text) / (acc_iid_size - acc_text)``; None when the baselines are equal."""
    gap = acc_iid_size - acc_text
    return None if gap == 0 else (acc - acc_text) / gap


def _group_accuracies(groups: Mapping[str, list[bool]]) -> dict[str, dict[str, Any]]:
    """Examples and accuracy per group (template or property), in name order."""
    return {k: {"examples": len(v), "accuracy": accuracy(v)} for k, v in sorted(groups.items())}


def _systematicity_gap(
    ood_accuracy: float, iid: Sequence[ExampleRecord], predictions: Mapping[str, Any]
) -> dict[str, Any]:
    """Accuracy on the i.i.d. test beside the out-of-distribution one, and their difference."""
    iid_ok = [
        predictions.get(e["qid"]) is not None
        and normalize_answer(predictions[e["qid"]]) == normalize_answer(e["answer"])
        for e in iid
    ]
    iid_acc = accuracy(iid_ok)
    return {
        "ood_accuracy": ood_accuracy,
        "iid_accuracy": iid_acc,
        "iid_examples": len(iid),
        "gap": None if iid_acc is None else ood_accuracy - iid_acc,
    }


def _text_accuracy(
    gold: Sequence[ExampleRecord],
    train: Sequence[ExampleRecord] | None,
    given: float | None,
    iid_size_accuracy: float | None,
    measure: bool,
    seed: int,
) -> tuple[float | None, str | None]:
    """(text-only accuracy, ``given`` / ``measured`` / None) for :func:`evaluate`. Without
    training examples nothing is measured, and an iid-size accuracy alone is then an error."""
    if given is not None:
        return given, "given"
    if measure and train:
        from covr.splits.baselines import text_only_accuracy

        return text_only_accuracy(train, gold, seed=seed), "measured"
    if measure and iid_size_accuracy is not None:
        raise ValueError(
            "no training examples to measure the text-only accuracy on: give --text-accuracy"
        )
    return None, None


def evaluate(
    gold: Sequence[ExampleRecord],
    predictions: Mapping[str, Any],
    *,
    train: Sequence[ExampleRecord] | None = None,
    iid: Sequence[ExampleRecord] | None = None,
    easiness: Mapping[str, float] | None = None,
    text_accuracy: float | None = None,
    iid_size_accuracy: float | None = None,
    lexical: bool = False,
    seed: int = 0,
    measure_text: bool = False,
) -> dict[str, Any]:
    """All metrics for the predictions of ``gold`` (see the module docstring). ``measure_text``
    without ``text_accuracy``: the text-only baseline (``covr.splits.baselines``) fitted on
    ``train`` gives ``baselines.text_only`` and the generalization score's text accuracy."""
    if not gold:
        raise ValueError("no gold examples to evaluate")
    text_accuracy, text_source = _text_accuracy(
        gold, train, text_accuracy, iid_size_accuracy, measure_text, seed
    )
    baseline_source = "train"
    if not train:
        train = list(gold)
        baseline_source = "evaluated (no training examples given)"
    baselines = Baselines(train, seed)
    correct: dict[str, bool] = {}
    maj_correct: list[bool] = []
    templ_correct: list[bool] = []
    per_template: defaultdict[str, list[bool]] = defaultdict(list)
    per_property: defaultdict[str, list[bool]] = defaultdict(list)
    for e in gold:
        gold_answer = normalize_answer(e["answer"])
        predicted = predictions.get(e["qid"])
        ok = predicted is not None and normalize_answer(predicted) == gold_answer
        correct[e["qid"]] = ok
        maj_correct.append(baselines.maj(e) == gold_answer)
        templ_correct.append(baselines.majtempl(e) == gold_answer)
        per_template[template_of(e)].append(ok)
        for prop in e.get("properties") or compute_properties(e):
            if lexical or not prop.startswith("LEXICAL-"):
                per_property[prop].append(ok)
    acc = accuracy(list(correct.values()))
    assert acc is not None
    result: dict[str, Any] = {
        "examples": len(gold),
        "predicted": sum(1 for e in gold if e["qid"] in predictions),
        "missing": sum(1 for e in gold if e["qid"] not in predictions),
        "unknown_predictions": len(set(predictions) - {e["qid"] for e in gold}),
        "accuracy": acc,
        "per_template": _group_accuracies(per_template),
        "per_property": _group_accuracies(per_property),
        "baselines": {
            "maj": accuracy(maj_correct),
            "maj_answer": baselines.majority,
            "majtempl": accuracy(templ_correct),
            "source": baseline_source,
            "train_examples": len(train),
        },
    }
    if text_source == "measured":
        result["baselines"]["text_only"] = text_accuracy
    if text_accuracy is not None and iid_size_accuracy is not None:
        result["generalization_score"] = generalization_score(acc, text_accuracy, iid_size_accuracy)
        result["generalization_inputs"] = {
            "text": text_accuracy,
            "iid_size": iid_size_accuracy,
            "text_accuracy_source": text_source,
        }
    if iid:
        result["systematicity_gap"] = _systematicity_gap(acc, iid, predictions)
    if easiness is not None:
        scored = [(easiness[q], ok) for q, ok in correct.items() if q in easiness]
        result["easiness_auc"] = {
            "auc": auc([s for s, _ in scored], [ok for _, ok in scored]) if scored else None,
            "scored_examples": len(scored),
        }
    return result


def split_sets(
    gold: Sequence[ExampleRecord], lists: Mapping[str, Sequence[str]] | None
) -> tuple[list[ExampleRecord], list[ExampleRecord], list[ExampleRecord]]:
    """(evaluated, training, iid) examples from a split's id lists, or by source split."""
    by_id = {e["qid"]: e for e in gold}
    if lists is None:
        train = [e for e in gold if is_train(e)]
        evaluated = [e for e in gold if not is_train(e)] or list(gold)
        return evaluated, train, []
    evaluated = [by_id[q] for q in lists.get("test", ()) if q in by_id]
    train = [by_id[q] for q in lists.get("train", ()) if q in by_id]
    iid = [by_id[q] for q in lists.get("iid_test", ()) if q in by_id]
    return evaluated, train, iid


class PlotError(ValueError):
    """The plot directory cannot be used (a file in the way, no permission)."""


def _slug(text: str) -> str:
    kept = "".join(c if c.isalnum() or c in "-_." else "-" for c in text.strip())
    return kept.strip("-.") or "all"


def write_plots(report: Mapping[str, Any], directory: Path, *, name: str = "all") -> list[Path]:
    """Bar charts of ``per_template`` and ``per_property`` accuracy of one evaluation report:
    ``<name>.per_template.png`` and ``<name>.per_property.png`` in ``directory``. ``name`` is the
    split's name, so plots of several splits can share one folder (issue 8 item 6: plots per
    split). The overall accuracy and the MAJ / MAJTEMPL baselines are drawn as horizontal lines
    so a reader sees at a glance which groups beat the baselines. Files are written to a temporary
    name and renamed, so an interrupted run leaves no half-written PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if directory.exists() and not directory.is_dir():
        raise PlotError(f"--plots {directory}: exists and is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PlotError(f"--plots {directory}: cannot create it ({exc.strerror})") from None
    stem = _slug(name)
    baselines = report.get("baselines") or {}
    lines = [
        ("accuracy", report.get("accuracy"), "black"),
        ("MAJ", baselines.get("maj"), "tab:red"),
        ("MAJTEMPL", baselines.get("majtempl"), "tab:orange"),
    ]
    written: list[Path] = []
    for key, title in (("per_template", "template"), ("per_property", "property")):
        groups = report.get(key) or {}
        labels = sorted(groups)
        values = [float(groups[k]["accuracy"] or 0.0) for k in labels]
        counts = [int(groups[k]["examples"]) for k in labels]
        # Horizontal bars: one row per group, so ~50 properties stay readable (a column per
        # group made a 2120x450 chart with unreadable rotated labels).
        fig, ax = plt.subplots(figsize=(8.0, max(3.0, 0.3 * len(labels) + 1.6)))
        rows = range(len(labels))
        ax.barh(rows, values, color="tab:blue")
        for y, (v, n) in enumerate(zip(values, counts, strict=True)):
            ax.text(min(v, 1.0) + 0.01, y, f"n={n}", ha="left", va="center", fontsize=7)
        for label, value, color in lines:
            if isinstance(value, int | float):
                ax.axvline(float(value), color=color, linestyle="--", linewidth=1, label=label)
        ax.set_yticks(list(rows))
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0.0, 1.25)
        ax.set_xlabel("accuracy (n = examples in the group)")
        ax.set_ylabel(title)
        ax.set_title(f"{name}: accuracy per {title}")
        ax.legend(loc="lower right", fontsize=7)
        fig.tight_layout()
        path = directory / f"{stem}.{key}.png"
        partial = directory / f".{stem}.{key}.png.partial"
        try:
            fig.savefig(partial, dpi=100, format="png")
            partial.replace(path)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise PlotError(f"--plots {directory}: cannot write {path.name} ({exc})") from None
        finally:
            plt.close(fig)
        written.append(path)
    return written
