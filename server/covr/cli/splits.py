"""``covr split ...`` (``split correlate`` included), ``covr properties``, ``covr easiness``,
``covr baselines`` and ``covr evaluate``.

Everything here works on example files (the question engine's JSONL) and writes split
directories (``train.txt``, ``test.txt``, ``iid_test.txt``, ``manifest.json``); only ``split hop
--from-store`` opens the graph store, to read the scene graphs of the examples' images.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, print_json

if TYPE_CHECKING:  # the split builders are imported by the commands that run (fast --help)
    from covr.scene.model import SceneGraph
    from covr.splits.baselines import TextOnlyBaseline
    from covr.splits.builders import Split
    from covr.splits.examples import ExampleRecord

app = typer.Typer(
    help="Compositional splits of example files (zero-shot, few-shot, program, lexical, "
    "held-out attribute pairs, adversarial local-structure splits, budgeted training sets).",
    no_args_is_help=True,
)

T = TypeVar("T")

EXAMPLES = typer.Option(
    ..., "--examples", "-e", help="Examples JSONL (the question engine's output)."
)
OUT = typer.Option(..., "--out", "-o", help="Directory that receives one folder per split.")
OVERWRITE = typer.Option(False, "--overwrite", help="Replace an existing split folder.")


@contextmanager
def _bad_input() -> Iterator[None]:
    """Turn bad-input errors into one line on stderr and exit code 2."""
    from covr.splits.builders import SplitError
    from covr.splits.examples import ExampleError

    try:
        yield
    except (ExampleError, SplitError) as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    except ValueError as exc:
        fail(str(exc), EXIT_BAD_INPUT)


def _load(path: Path) -> list[ExampleRecord]:
    from covr.splits.examples import read_examples

    with _bad_input():
        return read_examples(path)
    raise AssertionError("unreachable")  # pragma: no cover


def _run(build: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with _bad_input():
        return build(*args, **kwargs)
    raise AssertionError("unreachable")  # pragma: no cover


def _write(splits: list[Split], out: Path, examples_path: Path, overwrite: bool) -> None:
    from covr.splits.builders import file_digest, write_split

    digest = file_digest(examples_path)
    written = []
    with _bad_input():
        for split in splits:
            target = write_split(
                split,
                out,
                inputs={"examples": str(examples_path), "examples_sha256": digest},
                overwrite=overwrite,
            )
            written.append({"name": split.name, "path": str(target), "counts": split.counts})
    print_json({"splits": written})


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        fail(f"--seeds: expected comma-separated integers, got {text!r}", EXIT_BAD_INPUT)
    if not seeds:
        fail("--seeds: no seed given", EXIT_BAD_INPUT)
    return seeds


@app.command("zero-shot")
def zero_shot_cmd(
    examples: Path = EXAMPLES,
    properties: str = typer.Option(
        ...,
        "--properties",
        "-p",
        help="Property expression: 'A&B' holds out the intersection, 'A|B' the union "
        "(e.g. 'HAS-QUANT-COMPSCOPE&HAS-QUANT-ALL', 'TPL-VERIFYCOUNT|TPL-VERIFYCOUNTGROUPBY').",
    ),
    out: Path = OUT,
    name: str | None = typer.Option(None, help="Split folder name (default from the expression)."),
    overwrite: bool = OVERWRITE,
) -> None:
    """Remove every training example with the properties; test on exactly those."""
    from covr.splits.builders import zero_shot

    data = _load(examples)
    split = _run(lambda: zero_shot(data, properties, name=name))
    _write([split], out, examples, overwrite)


@app.command("few-shot")
def few_shot_cmd(
    examples: Path = EXAMPLES,
    properties: str = typer.Option(..., "--properties", "-p", help="Property expression."),
    keep: int = typer.Option(..., "--keep", "-m", help="M: training examples kept with it."),
    seed: int = typer.Option(0, help="Seed of the draw of the kept examples."),
    out: Path = OUT,
    name: str | None = typer.Option(None, help="Split folder name."),
    overwrite: bool = OVERWRITE,
) -> None:
    """Keep only M training examples with the properties (the paper used 250 and 500)."""
    from covr.splits.builders import few_shot

    data = _load(examples)
    split = _run(lambda: few_shot(data, properties, keep, seed=seed, name=name))
    _write([split], out, examples, overwrite)


@app.command("program")
def program_cmd(
    examples: Path = EXAMPLES,
    holdout: float = typer.Option(0.2, help="Share of anonymized program structures held out."),
    seeds: str = typer.Option("0,1,2", help="Comma-separated seeds, one split each."),
    out: Path = OUT,
    overwrite: bool = OVERWRITE,
) -> None:
    """Hold out a share of the program structures (names anonymized)."""
    from covr.splits.builders import program_split

    data = _load(examples)
    splits = [_run(program_split, data, holdout=holdout, seed=s) for s in _seeds(seeds)]
    _write(splits, out, examples, overwrite)


@app.command("lexical")
def lexical_cmd(
    examples: Path = EXAMPLES,
    pairs: int = typer.Option(65, help="Name pairs held out per split."),
    min_train: int = typer.Option(
        50, help="Each name of a pair occurs in >= this many training examples."
    ),
    min_eval: int = typer.Option(
        15, help="Each name of a pair occurs in >= this many evaluation examples."
    ),
    seeds: str = typer.Option("0,1,2", help="Comma-separated seeds, one split each."),
    out: Path = OUT,
    overwrite: bool = OVERWRITE,
) -> None:
    """Hold out pairs of names never seen together in a training program."""
    from covr.splits.builders import lexical_split

    data = _load(examples)
    splits = [
        _run(lexical_split, data, pairs=pairs, min_train=min_train, min_eval=min_eval, seed=s)
        for s in _seeds(seeds)
    ]
    _write(splits, out, examples, overwrite)


def _scene_graphs(
    examples: list[ExampleRecord], gqa: list[Path], from_store: bool
) -> dict[str, SceneGraph]:
    wanted = {i for e in examples for i in e["scenes"]}
    graphs: dict[str, SceneGraph] = {}
    if gqa:
        from covr_loaders.errors import Problem
        from covr_loaders.gqa import read
        from covr_loaders.jsonio import ByteCounter

        counter = ByteCounter()
        for path in gqa:
            if not path.is_file():
                fail(f"--gqa {path}: no such file", EXIT_BAD_INPUT)
            for item in read(path, split="unknown", counter=counter):
                if isinstance(item, Problem):
                    fail(f"--gqa {path}: record {item.record}: {item.message}", EXIT_BAD_INPUT)
                if item.image_id in wanted:
                    graphs[item.image_id] = item
    if from_store:
        from covr.cli.common import store_session
        from covr_loaders.readback import get_scene_graph

        with store_session() as store:
            for image in sorted(wanted - graphs.keys()):
                graph = get_scene_graph(store, image)
                if graph is not None:
                    graphs[image] = graph
    if not gqa and not from_store:
        fail("give the scene graphs with --gqa FILE or --from-store", EXIT_BAD_INPUT)
    return graphs


@app.command("hop")
def hop_cmd(
    examples: Path = EXAMPLES,
    pair: list[str] = typer.Option(
        [], "--pair", help="Held-out pair 'wooden,table' or 'red,metal' (repeatable)."
    ),
    gqa: list[Path] = typer.Option([], "--gqa", help="GQA-format scene-graph file (repeatable)."),
    from_store: bool = typer.Option(
        False, "--from-store", help="Read scene graphs from the store."
    ),
    list_pairs: bool = typer.Option(
        False,
        "--list-pairs",
        help="Print candidate pairs with counts and diversity, write nothing.",
    ),
    min_diversity: int | None = typer.Option(None, help="With --pick: lowest diversity."),
    max_diversity: int | None = typer.Option(None, help="With --pick: highest diversity."),
    pick: int = typer.Option(0, help="Pick this many pairs from the candidates (seeded)."),
    minimal_limit: int = typer.Option(200, help="Positive images per minimal test set."),
    seed: int = typer.Option(0, help="Seed of the minimal sets and of --pick."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Directory for the split folders."),
    overwrite: bool = OVERWRITE,
) -> None:
    """Held-out attribute pairs (CLEVR-HOPE): complex/minimal x IID/OOD test sets, diversity."""
    import random

    from covr.splits.builders import file_digest, write_split
    from covr.splits.examples import write_examples
    from covr.splits.hop import candidate_pairs, hop_split, parse_pair

    data = _load(examples)
    scenes = _scene_graphs(data, gqa, from_store)
    pairs = [_run(parse_pair, p) for p in pair]
    if list_pairs or pick:
        rows = _run(lambda: candidate_pairs(data, scenes))
        rows = [
            r
            for r in rows
            if (min_diversity is None or r["diversity"] >= min_diversity)
            and (max_diversity is None or r["diversity"] <= max_diversity)
        ]
        if list_pairs:
            print_json({"pairs": rows})
            return
        chosen = random.Random(seed).sample(rows, min(pick, len(rows)))
        pairs += [_run(parse_pair, ",".join(r["pair"])) for r in chosen]
    if not pairs:
        fail("give --pair, --pick N or --list-pairs", EXIT_BAD_INPUT)
    if out is None:
        fail("--out is required to write splits", EXIT_BAD_INPUT)
    digest = file_digest(examples)
    written = []
    for p in pairs:
        result = _run(hop_split, data, scenes, p, seed=seed, minimal_limit=minimal_limit)
        with _bad_input():
            target = write_split(
                result.split,
                out,
                inputs={"examples": str(examples), "examples_sha256": digest},
                overwrite=overwrite,
            )
        write_examples(target / "minimal_ood.jsonl", result.minimal_ood)
        write_examples(target / "minimal_iid.jsonl", result.minimal_iid)
        written.append({"name": result.split.name, "path": str(target), "counts": result.split.counts,
                        "diversity": result.split.extra["diversity"]})  # fmt: skip
    print_json({"splits": written})


@app.command("adversarial")
def adversarial_cmd(
    examples: Path = EXAMPLES,
    n: int = typer.Option(2, help="Local-structure order (2, 3 or 4)."),
    max_test_share: float = typer.Option(0.3, help="K: largest share of programs held out."),
    tau: float | None = typer.Option(0.58, help="Discard splits with mean easiness above this."),
    max_splits: int = typer.Option(15, help="Return at most this many splits (seeded sample)."),
    max_candidates: int = typer.Option(500, help="Structures tried as split seeds."),
    keep_names: bool = typer.Option(False, help="Use names as symbols instead of anonymizing."),
    siblings: bool = typer.Option(
        True,
        "--siblings/--no-siblings",
        help="Count sibling edges in local structures (--no-siblings: the 2-LS-NoSib variant).",
    ),
    seed: int = typer.Option(0),
    out: Path = OUT,
    overwrite: bool = OVERWRITE,
) -> None:
    """Adversarial splits that hold out a structure and every structure similar to it."""
    from covr.splits.structure_splits import adversarial_splits

    data = _load(examples)
    splits = _run(
        lambda: adversarial_splits(
            data,
            n=n,
            max_test_share=max_test_share,
            tau=tau,
            max_splits=max_splits,
            max_candidates=max_candidates,
            anonymize=not keep_names,
            siblings=siblings,
            seed=seed,
        )
    )
    if not splits:
        fail("no adversarial split passed the filters (raise --tau or --max-test-share)")
    _write(splits, out, examples, overwrite)


@app.command("budget")
def budget_cmd(
    examples: Path = EXAMPLES,
    budget: int = typer.Option(..., "--budget", "-b", help="Training examples to select."),
    n: int = typer.Option(2, help="Local-structure order (2, 3 or 4)."),
    strategy: str = typer.Option(
        "structures",
        help="'structures' (pick training examples that cover the test's local structures) or "
        "'random'.",
    ),
    keep_names: bool = typer.Option(False, help="Use names as symbols instead of anonymizing."),
    seed: int = typer.Option(0),
    out: Path = OUT,
    overwrite: bool = OVERWRITE,
) -> None:
    """Select a training set of a fixed size that covers the most local structures."""
    from covr.splits.structure_splits import budget_split

    data = _load(examples)
    split = _run(
        lambda: budget_split(
            data, budget, n=n, anonymize=not keep_names, seed=seed, strategy=strategy
        )
    )
    _write([split], out, examples, overwrite)


# ``covr split correlate``: many splits of one example file, each scored by mean n-LS easiness
# (``covr easiness``) and TMCD compound divergence, and the correlation between the two (seed 004
# §5.2, Table 5).


def _correlate_orders(text: str) -> list[int]:
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


def _correlation_report(
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


@app.command("correlate")
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
    from covr.splits.correlation import (
        TABLE4_EXPRESSIONS,
        SplitPlan,
        build_splits,
        markdown_table,
        split_from_folder,
    )
    from covr.splits.examples import atomic_write_text

    n_values = _correlate_orders(orders)
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
    report = _correlation_report(data, built, n_values, anonymize, gold, examples)
    table = report["correlations"]
    if output is not None:
        atomic_write_text(output, [json.dumps(report, indent=2, sort_keys=True) + "\n"])
    if markdown:
        typer.echo(markdown_table(table), nl=False)
    else:
        print_json(report)


def properties(
    file: Path = typer.Argument(..., help="Examples JSONL; properties are written into it."),
    output: Path | None = typer.Option(
        None, "--output", help="Write here instead of rewriting FILE in place."
    ),
) -> None:
    """Compute every example's properties (the compositional properties splits filter on) and
    write them into the examples."""
    from collections import Counter

    from covr.splits.examples import read_examples, write_examples
    from covr.splits.properties import with_properties

    with _bad_input():
        data = read_examples(file, require_provenance=False)
    counts: Counter[str] = Counter()
    for example in data:
        counts.update(
            p for p in with_properties(example)["properties"] if not p.startswith("LEXICAL-")
        )
    write_examples(output or file, data)
    print_json(
        {
            "examples": len(data),
            "file": str(output or file),
            "properties": dict(sorted(counts.items())),
        }
    )


def _easiness_inputs(
    train: Path | None, test: Path | None, examples: Path | None, split: Path | None
) -> tuple[list[ExampleRecord], list[ExampleRecord]]:
    """(training, test) examples of ``covr easiness``: two files, or one file's split as
    ``covr split`` wrote it; a usage error (exit 2) names what is missing or mixed up, e.g. a
    split's ``train.txt`` id list given where examples are expected."""
    from covr.splits.builders import read_manifest
    from covr.splits.evaluate import split_sets
    from covr.splits.examples import read_examples

    by_files, by_split = (train, test) != (None, None), (examples, split) != (None, None)
    if by_files == by_split or None in ((train, test) if by_files else (examples, split)):
        fail("give --train and --test, or --examples and --split", EXIT_BAD_INPUT)
    for given in (train, test):
        if given is not None and given.suffix == ".txt":  # a split's id list, not examples
            fail(
                f"{given} is a split's id list; give the examples and the split folder: "
                f"--examples EXAMPLES.jsonl --split {given.parent}",
                EXIT_BAD_INPUT,
            )
    train_data: list[ExampleRecord] = []
    test_data: list[ExampleRecord] = []
    with _bad_input():
        if train is not None and test is not None:
            train_data = read_examples(train, require_provenance=False)
            test_data = read_examples(test, require_provenance=False)
        elif examples is not None and split is not None:
            lists = read_manifest(split)[1]
            test_data, train_data, _ = split_sets(
                read_examples(examples, require_provenance=False), lists
            )
    if not train_data or not test_data:
        empty = "training" if not train_data else "test"
        where = f"the {empty} list of {split} names none of {examples}" if split else ""
        fail(f"no {empty} examples: {where or f'--{empty} holds none'}", EXIT_BAD_INPUT)
    return train_data, test_data


def easiness(
    train: Path | None = typer.Option(None, "--train", help="Training examples JSONL."),
    test: Path | None = typer.Option(None, "--test", help="Test examples JSONL."),
    examples: Path | None = typer.Option(
        None, "--examples", "-e", help="Examples JSONL that a --split folder's id lists name."
    ),
    split: Path | None = typer.Option(
        None,
        "--split",
        help="A 'covr split' output folder (or its manifest.json): its train and test lists "
        "of --examples replace --train and --test.",
    ),
    n: int = typer.Option(2, help="Local-structure order (2, 3 or 4)."),
    anonymize: bool = typer.Option(False, help="Replace names by a placeholder first."),
    siblings: bool = typer.Option(
        True,
        "--siblings/--no-siblings",
        help="Count sibling edges in local structures (--no-siblings: the 2-LS-NoSib variant).",
    ),
    output: Path | None = typer.Option(None, "--output", help="Per-example scores (JSONL)."),
) -> None:
    """Instance easiness: how many of each test program's local structures the training programs
    already contain. Give the training and test examples as two files (--train, --test) or as a
    split of one file (--examples with --split: what 'covr split' writes)."""
    from covr.splits.examples import atomic_write_text
    from covr.splits.local_structures import EasinessModel, compound_divergence

    if n not in (2, 3, 4):
        fail(f"--n must be 2, 3 or 4, got {n}", EXIT_BAD_INPUT)
    train_data, test_data = _easiness_inputs(train, test, examples, split)
    model = EasinessModel(
        (e["program"] for e in train_data), n=n, anonymize=anonymize, siblings=siblings
    )
    rows: list[dict[str, Any]] = []
    for e in test_data:
        result = model.easiness(e["program"])
        rows.append(
            {
                "qid": e["qid"],
                "easiness": result.score,
                "unobserved": result.unobserved,
                "hardest": list(result.hardest) if result.hardest else None,
            }
        )
    if output is not None:
        atomic_write_text(output, (json.dumps(r) + "\n" for r in rows))
    scores = [r["easiness"] for r in rows]
    summary: dict[str, Any] = {
        "train_examples": len(train_data),
        "test_examples": len(test_data),
        "n": n,
        "mean_easiness": statistics.fmean(scores),
        "share_fully_observed": sum(1 for s in scores if s >= 1.0) / len(scores),
        **compound_divergence(
            (e["program"] for e in train_data),
            (e["program"] for e in test_data),
            anonymize=anonymize,
        ),
    }
    if output is not None:
        summary["output"] = str(output)
    print_json(summary)


def evaluate(
    predictions: Path = typer.Argument(
        ..., help="Predictions: JSONL {qid, prediction} or a JSON map."
    ),
    gold: Path = typer.Option(..., "--gold", help="Gold examples JSONL."),
    split: Path | None = typer.Option(None, "--split", help="Split manifest (or its folder)."),
    easiness_file: Path | None = typer.Option(
        None, "--easiness", help="Output of 'covr easiness --output' for the AUC."
    ),
    text_accuracy: float | None = typer.Option(
        None,
        help="Accuracy of a text-only model for the generalization score (default: the "
        "text-only baseline of 'covr baselines', fitted on the training examples).",
    ),
    iid_size_accuracy: float | None = typer.Option(
        None, help="Accuracy of the iid-size model (with it: the generalization score)."
    ),
    measure_text: bool = typer.Option(
        True,
        "--measure-text/--no-measure-text",
        help="Without --text-accuracy, fit the text-only baseline on the training examples and "
        "report its accuracy (baselines.text_only).",
    ),
    lexical: bool = typer.Option(False, help="Also report LEXICAL-* properties."),
    seed: int = typer.Option(0, help="Seed of MAJTEMPL's pick between two options."),
    output: Path | None = typer.Option(None, "--output", help="Also write the report here (JSON)."),
    plots: Path | None = typer.Option(
        None, "--plots", help="Write PNG bar charts of accuracy per template and property here."
    ),
) -> None:
    """Accuracy per template and property, MAJ/MAJTEMPL/text-only baselines, generalization
    score, systematicity gap, AUC. Without --text-accuracy the generalization score uses the
    measured text-only baseline (generalization_inputs.text_accuracy_source: measured)."""
    from covr.splits.builders import SplitError, read_manifest
    from covr.splits.evaluate import evaluate as run_evaluation
    from covr.splits.evaluate import read_predictions, read_scores, split_sets, write_plots
    from covr.splits.examples import atomic_write_text, read_examples

    if text_accuracy is not None and iid_size_accuracy is None:
        fail(
            "--text-accuracy needs --iid-size-accuracy: give both, or --iid-size-accuracy alone "
            "to use the measured text-only accuracy",
            EXIT_BAD_INPUT,
        )
    if iid_size_accuracy is not None and text_accuracy is None and not measure_text:
        fail("--no-measure-text needs --text-accuracy with --iid-size-accuracy", EXIT_BAD_INPUT)
    with _bad_input():
        gold_data = read_examples(gold, require_provenance=False)
        preds = read_predictions(predictions)
        lists = read_manifest(split)[1] if split is not None else None
        scores = read_scores(easiness_file) if easiness_file is not None else None
        evaluated, train_set, iid = split_sets(gold_data, lists)
        if not evaluated:
            raise SplitError(f"{split}: none of the split's test ids is in {gold}")
        report = run_evaluation(
            evaluated,
            preds,
            train=train_set,
            iid=iid,
            easiness=scores,
            text_accuracy=text_accuracy,
            iid_size_accuracy=iid_size_accuracy,
            lexical=lexical,
            seed=seed,
            measure_text=measure_text,
        )
    report["gold"] = str(gold)
    if split is not None:
        report["split"] = str(split)
    if plots is not None:
        with _bad_input():
            name = split.name if split is not None and split.is_dir() else None
            name = name or (split.parent.name if split is not None else "all")
            report["plots"] = [str(p) for p in write_plots(report, plots, name=name)]
    if output is not None:
        atomic_write_text(output, [json.dumps(report, indent=2, sort_keys=True) + "\n"])
    print_json(report)


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
    _write_baselines(report, model, out, model_out)
    if markdown:
        typer.echo(markdown_report(report), nl=False)
    else:
        print_json(report)


def _write_baselines(
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


__all__ = ["app", "baselines", "easiness", "evaluate", "properties"]
