"""``covr baselines``: the shortcut baselines of a split (COVR §4; ``covr.splits.baselines``).

Its own module beside ``covr.cli.splits`` (which registers it) for the module size limit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, print_json

if TYPE_CHECKING:  # numpy and the baselines are imported by the command when it runs
    from covr.splits.baselines import TextOnlyBaseline


def baselines(
    examples: Path = typer.Option(
        ..., "--examples", "-e", help="Examples JSONL that the --split folder's id lists name."
    ),
    split: Path | None = typer.Option(
        None,
        "--split",
        help="A 'covr split' output folder (or its manifest.json): fit on its train list, score "
        "its test and iid_test lists. Without it: the file's training pool against the rest.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report (the default)."),
    markdown: bool = typer.Option(
        False, "--markdown", help="Print Markdown tables (per template and overall) instead."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "--output",
        "-o",
        help="Also write the JSON report here, and the text-only model beside it "
        "(<name>.text-only.json).",
    ),
    model_out: Path | None = typer.Option(
        None, "--model-out", help="Write the text-only model's parameters (JSON) here."
    ),
    seed: int = typer.Option(
        0, help="Seed of MAJTEMPL's two-option pick and of the held-out fifth."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress messages on stderr."),
) -> None:
    """Shortcut baselines of a split, as in the COVR paper: MAJ, MAJTEMPL, a text-only
    classifier (naive Bayes on the question's words) and an image-identity baseline (answers
    from which image ids are shown), fitted on the training examples, accuracy per template and
    overall."""
    from covr.cli.splits import _bad_input
    from covr.splits.baselines import compute_baselines, markdown_report
    from covr.splits.builders import read_manifest
    from covr.splits.evaluate import split_sets
    from covr.splits.examples import read_examples

    if as_json and markdown:
        fail("give --json or --markdown, not both", EXIT_BAD_INPUT)
    if split is not None and not split.exists():
        fail(f"--split {split}: no such split folder or manifest", EXIT_BAD_INPUT)

    def say(message: str) -> None:
        if not quiet:
            typer.echo(message, err=True)

    with _bad_input():
        lists = read_manifest(split)[1] if split is not None else None
        say(f"reading {examples}")
        data = read_examples(examples, require_provenance=split is None)
    evaluated, train_set, iid = split_sets(data, lists)
    where = f"the train list of {split} names none of {examples}" if split else (
        f"no example of {examples} has split 'train'")  # fmt: skip
    if not train_set:
        fail(f"no training examples: {where}", EXIT_BAD_INPUT)
    if split is not None and not evaluated:
        fail(f"no test examples: the test list of {split} names none of {examples}", EXIT_BAD_INPUT)
    with _bad_input():
        report, model = compute_baselines(
            train_set, {"test": evaluated, "iid_test": iid}, seed=seed, progress=say
        )
    report["examples"] = str(examples)
    if split is not None:
        report["split"] = str(split)
        report["name"] = split.name if split.is_dir() else split.parent.name
    _write(report, model, out, model_out)
    if markdown:
        typer.echo(markdown_report(report), nl=False)
    else:
        print_json(report)


def _write(
    report: dict[str, Any], model: TextOnlyBaseline, out: Path | None, model_out: Path | None
) -> None:
    """The text-only model (``--model-out``, or beside ``--out``) and the JSON report."""
    from covr.splits.examples import atomic_write_text

    target = model_out or (out.with_name(f"{out.stem}.text-only.json") if out else None)
    if target is not None:
        try:
            model.save(target)
        except OSError as exc:
            fail(f"--model-out {target}: cannot write ({exc.strerror or exc})", EXIT_BAD_INPUT)
        report["text_only"]["model_file"] = str(target)
    if out is not None:
        try:
            atomic_write_text(out, [json.dumps(report, indent=2, sort_keys=True) + "\n"])
        except OSError as exc:
            fail(f"--out {out}: cannot write ({exc.strerror or exc})", EXIT_BAD_INPUT)
