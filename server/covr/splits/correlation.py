"""Split-level easiness against TMCD compound divergence over many splits (seed 004 §5.2, Table 5).

The paper scores a split two ways: the mean n-LS easiness of its test instances against the
training programs (§4.3, what ``covr easiness`` computes) and the compound divergence between the
training and test compound distributions (TMCD, App. D); it then correlates each with the models'
mean accuracy over 124 COVR splits (Table 5: Pearson 0.79 / 0.66 / 0.62 for 2/3/4-LS, −0.36 for
TMCD). Without model runs, the two predictors are correlated with each other (Pearson and
Spearman); given per-split accuracies, each predictor is also correlated with them, as in Table 5.

Splits come from the builders (program splits over seeds, adversarial splits, lexical splits,
zero-shot splits on the paper's Table 4 properties) or from split folders written by
``covr split``. A split the data cannot support (no test example, too few names for a lexical
split) is skipped and reported, not fatal: the table needs many splits, not every kind.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covr.splits.builders import (
    Split,
    SplitError,
    lexical_split,
    program_split,
    read_manifest,
    zero_shot,
)
from covr.splits.examples import ExampleRecord
from covr.splits.local_structures import EasinessModel, compound_divergence
from covr.splits.structure_splits import adversarial_splits

TABLE4_EXPRESSIONS = (
    "HAS-QUANT-COMPSCOPE&HAS-QUANT-ALL",
    "HAS-COUNT&HAS-ATTR",
    "HAS-COUNT&RM/V/C",
    "HAS-SAMEATTR-COLOR",
    "TPL-CHOOSEOBJECT",
    "TPL-VERIFYQUANTATTR",
    "TPL-VERIFYATTR",
    "TPL-VERIFYCOUNT|TPL-VERIFYCOUNTGROUPBY",
)
"""The zero-shot splits of COVR Table 4 (arXiv version), in this project's property names."""


@dataclass(frozen=True)
class SplitPlan:
    """Which splits to build: how many of each kind (0 = none)."""

    program_seeds: int = 10
    lexical_seeds: int = 3
    lexical_pairs: int = 65
    lexical_min_train: int = 50
    lexical_min_eval: int = 15
    adversarial: int = 10
    zero_shot: Sequence[str] = TABLE4_EXPRESSIONS
    holdout: float = 0.2
    seed: int = 0


@dataclass
class BuiltSplits:
    splits: list[Split] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


def build_splits(examples: Sequence[ExampleRecord], plan: SplitPlan) -> BuiltSplits:
    """Program, lexical, adversarial and Table 4 zero-shot splits of one example set."""
    out = BuiltSplits()

    def attempt(label: str, build: Any, *args: Any, **kwargs: Any) -> None:
        try:
            made = build(*args, **kwargs)
        except SplitError as exc:
            out.skipped.append({"split": label, "reason": str(exc)})
            return
        out.splits.extend(made if isinstance(made, list) else [made])

    for k in range(plan.program_seeds):
        attempt(f"program-{k}", program_split, examples, holdout=plan.holdout, seed=plan.seed + k)
    for k in range(plan.lexical_seeds):
        attempt(
            f"lexical-{k}",
            lexical_split,
            examples,
            pairs=plan.lexical_pairs,
            seed=plan.seed + k,
            min_train=plan.lexical_min_train,
            min_eval=plan.lexical_min_eval,
        )
    if plan.adversarial:
        attempt(
            "adversarial",
            adversarial_splits,
            examples,
            tau=None,
            max_splits=plan.adversarial,
            seed=plan.seed,
        )
    for expression in plan.zero_shot:
        attempt(expression, zero_shot, examples, expression)
    return out


def split_from_folder(path: Path) -> Split:
    """A split ``covr split`` wrote (folder or manifest), read back for scoring."""
    manifest, lists = read_manifest(path)
    for key in ("train", "test"):
        if key not in lists:
            raise SplitError(f"{path}: files.{key}: missing (not a split manifest)")
    return Split(
        name=str(manifest.get("name") or path.name),
        kind=str(manifest.get("kind", "")),
        definition=dict(manifest.get("definition") or {}),
        seed=manifest.get("seed"),
        train=lists["train"],
        test=lists["test"],
        iid_test=lists.get("iid_test", []),
        counts=dict(manifest.get("counts") or {}),
    )


def _examples_of(examples: Sequence[ExampleRecord], qids: Iterable[str]) -> list[ExampleRecord]:
    by_id = {e["qid"]: e for e in examples}
    return [by_id[q] for q in qids if q in by_id]


def score_split(
    examples: Sequence[ExampleRecord],
    split: Split,
    *,
    orders: Sequence[int] = (2, 3, 4),
    anonymize: bool = False,
) -> dict[str, Any]:
    """Mean test easiness per n-LS order (exactly ``covr easiness``) and TMCD divergences."""
    train = _examples_of(examples, split.train)
    test = _examples_of(examples, split.test)
    if not train or not test:
        raise SplitError(f"{split.name}: no training or no test example among the examples")
    row: dict[str, Any] = {
        "name": split.name,
        "kind": split.kind,
        "train": len(train),
        "test": len(test),
    }
    for n in orders:
        model = EasinessModel((e["program"] for e in train), n=n, anonymize=anonymize)
        scores = [model.easiness(e["program"]).score for e in test]
        row[f"easiness_{n}ls"] = statistics.fmean(scores)
    row.update(
        compound_divergence(
            (e["program"] for e in train), (e["program"] for e in test), anonymize=anonymize
        )
    )
    return row


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank (what Spearman's coefficient needs)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, or ``None`` when it is undefined (fewer than 2 values, a constant series)."""
    if len(xs) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    value = statistics.correlation(list(xs), list(ys))
    return None if math.isnan(value) else value


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    return pearson(_ranks(xs), _ranks(ys))


def correlations(
    rows: Sequence[Mapping[str, Any]],
    accuracy: Mapping[str, float] | None = None,
) -> list[dict[str, Any]]:
    """The comparison table: every n-LS easiness against compound divergence, and, given
    per-split accuracies (split name → accuracy), every predictor against accuracy (Table 5).

    Easiness rises with how much of a test set training already covers, divergence falls: a
    negative correlation between them means the two predictors agree."""
    easiness_keys = sorted(k for k in (rows[0] if rows else {}) if k.startswith("easiness_"))
    table: list[dict[str, Any]] = []

    def add(x: str, y: str, picked: Sequence[Mapping[str, Any]], ys: Sequence[float]) -> None:
        xs = [float(r[x]) for r in picked]
        table.append(
            {
                "x": x,
                "y": y,
                "splits": len(picked),
                "pearson": pearson(xs, ys),
                "spearman": spearman(xs, ys),
            }
        )

    divergence = [float(r["compound_divergence"]) for r in rows]
    for key in easiness_keys:
        add(key, "compound_divergence", rows, divergence)
    if accuracy:
        picked = [r for r in rows if r["name"] in accuracy]
        golds = [float(accuracy[r["name"]]) for r in picked]
        for key in [*easiness_keys, "compound_divergence"]:
            add(key, "accuracy", picked, golds)
    return table


def markdown_table(table: Sequence[Mapping[str, Any]]) -> str:
    """The correlation table as Markdown (docs/splits.md carries one)."""

    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    lines = ["| predictor | against | splits | Pearson | Spearman |", "|---|---|---|---|---|"]
    for row in table:
        lines.append(
            f"| {row['x']} | {row['y']} | {row['splits']} | {cell(row['pearson'])} "
            f"| {cell(row['spearman'])} |"
        )
    return "\n".join(lines) + "\n"
