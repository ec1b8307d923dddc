"""``covr split correlate``: many splits of one example file, each scored by mean n-LS easiness
(``covr easiness``) and TMCD compound divergence, and the correlation between the two (seed 004
§5.2, Table 5). Its own module so that ``covr/cli/splits.py`` stays within the size limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, print_json


def _orders(text: str) -> list[int]:
    try:
        orders = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        fail(f"--orders: expected comma-separated integers, got {text!r}", EXIT_BAD_INPUT)
    if not orders or not set(orders) <= {2, 3, 4}:
        fail(f"--orders: each must be 2, 3 or 4, got {text!r}", EXIT_BAD_INPUT)
    return orders


def _accuracy(path: Path | None) -> dict[str, float] | None:
    """``{"split name": accuracy}``; a bad file exits 2 naming it and the entry."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"--accuracy {path}: cannot be read: {exc.strerror or exc}", EXIT_BAD_INPUT)
    except json.JSONDecodeError as exc:
        fail(f"--accuracy {path}: not JSON: {exc.msg}", EXIT_BAD_INPUT)
    if not isinstance(data, dict):
        fail(f"--accuracy {path}: expected an object split name -> accuracy", EXIT_BAD_INPUT)
    for name, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            fail(f"--accuracy {path}: {name}: expected a number, got {value!r}", EXIT_BAD_INPUT)
    return {str(k): float(v) for k, v in data.items()}


def _report(
    data: list[Any],
    built: Any,
    orders: list[int],
    anonymize: bool,
    gold: dict[str, float] | None,
    examples: Path,
) -> dict[str, Any]:
    """Score every built split (one the examples cannot support is listed as skipped) and
    correlate; fewer than 3 scored splits exit 2 with the reasons."""
    from covr.splits.builders import SplitError
    from covr.splits.correlation import correlations, score_split

    rows: list[dict[str, Any]] = []
    for one in built.splits:
        try:
            rows.append(score_split(data, one, orders=orders, anonymize=anonymize))
        except SplitError as exc:
            built.skipped.append({"split": one.name, "reason": str(exc)})
    if len(rows) < 3:
        fail(
            f"only {len(rows)} splits could be built from {examples} (need 3 for a correlation); "
            "skipped: " + "; ".join(s["reason"] for s in built.skipped),
            EXIT_BAD_INPUT,
        )
    return {
        "examples": str(examples),
        "splits": rows,
        "skipped": built.skipped,
        "correlations": correlations(rows, gold),
    }


def correlate_cmd(
    examples: Path = typer.Option(
        ..., "--examples", "-e", help="Examples JSONL with properties (covr properties)."
    ),
    program_seeds: int = typer.Option(10, min=0, help="Program splits to build (seeds 0..N-1)."),
    lexical_seeds: int = typer.Option(3, min=0, help="Lexical splits to build."),
    pairs: int = typer.Option(65, min=1, help="Name pairs held out per lexical split."),
    min_train: int = typer.Option(50, min=1, help="Lexical: each name's training count."),
    min_eval: int = typer.Option(15, min=1, help="Lexical: each name's evaluation count."),
    adversarial: int = typer.Option(10, min=0, help="Adversarial 2-LS splits to build, at most."),
    table4: bool = typer.Option(
        True,
        "--table4/--no-table4",
        help="Also the COVR paper's zero-shot splits (one per held-out construction).",
    ),
    split: list[Path] = typer.Option(
        [], "--split", help="A split folder 'covr split' wrote, scored too (repeatable)."
    ),
    orders: str = typer.Option("2,3,4", help="n-LS orders whose easiness is computed."),
    anonymize: bool = typer.Option(False, help="Replace names by a placeholder first."),
    accuracy: Path | None = typer.Option(
        None,
        "--accuracy",
        help="JSON object split name -> model accuracy: each predictor is also correlated with it.",
    ),
    markdown: bool = typer.Option(False, "--markdown", help="Print the table as Markdown."),
    output: Path | None = typer.Option(None, "--output", help="Also write the report (JSON)."),
    seed: int = typer.Option(0, help="First seed of every seeded split."),
) -> None:
    """Easiness against TMCD over many splits: builds program, lexical, adversarial and the
    COVR paper's zero-shot splits (and reads --split folders), scores each split by its test set's mean n-LS
    easiness and its compound divergence, and reports Pearson and Spearman correlations."""
    from covr.cli.splits import _bad_input, _load
    from covr.splits.correlation import (
        TABLE4_EXPRESSIONS,
        SplitPlan,
        build_splits,
        markdown_table,
        split_from_folder,
    )
    from covr.splits.examples import atomic_write_text

    n_values = _orders(orders)
    gold = _accuracy(accuracy)
    data = _load(examples)
    plan = SplitPlan(
        program_seeds=program_seeds,
        lexical_seeds=lexical_seeds,
        lexical_pairs=pairs,
        lexical_min_train=min_train,
        lexical_min_eval=min_eval,
        adversarial=adversarial,
        zero_shot=TABLE4_EXPRESSIONS if table4 else (),
        seed=seed,
    )
    with _bad_input():
        built = build_splits(data, plan)
        built.splits.extend(split_from_folder(path) for path in split)
    report = _report(data, built, n_values, anonymize, gold, examples)
    table = report["correlations"]
    if output is not None:
        atomic_write_text(output, [json.dumps(report, indent=2, sort_keys=True) + "\n"])
    if markdown:
        typer.echo(markdown_table(table), nl=False)
    else:
        print_json(report)
