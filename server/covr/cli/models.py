"""``covr models train|eval|info|score``: the exclusivity and presence classifiers.

The commands and their tables; the jobs behind them (data, mining, progress, comparison) are in
:mod:`covr.cli.model_jobs`. Everything is built from the project's own resources (lexicon, gold
set, synthetic generator, bundled samples), so ``make models`` rebuilds the committed files; it
reports whether they came out identical (docs/models.md, "Rebuilding and reproducibility").

Exit codes: 0 done; 1 a model or resource failed to load; 2 bad input.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, print_json
from covr.cli.model_jobs import (
    PRESENCE_SYNTHETIC_IMAGES,
    Stages,
    compare_files,
    default_real_dir,
    heldout_metrics,
    lexicon_data,
    out_path,
    presence_data,
    previous_file,
    print_comparison,
    require_training_extra,
    score_previous,
    train_exclusivity_job,
)

app = typer.Typer(
    help="Exclusivity and presence classifiers (ONNX, onnxruntime): train, evaluate, inspect, "
    "score. See docs/models.md.",
    no_args_is_help=True,
)
train_app = typer.Typer(help="Train a model and write its ONNX file.", no_args_is_help=True)
eval_app = typer.Typer(help="Evaluate a model and print its metrics tables.", no_args_is_help=True)
app.add_typer(train_app, name="train")
app.add_typer(eval_app, name="eval")

SEED_HELP = "Seed of every random choice (same seed, same data → same metrics)."
OUT_HELP = "Where to write the ONNX file (default: the bundled file under covr/models/resources)."
MODEL_HELP = "ONNX file to use (default: COVR_MODELS_DIR or the bundled model)."
JSON_HELP = "Print JSON instead of tables."
COMPARE_HELP = (
    "Before overwriting, read the existing file and report whether the new model has the same "
    "version, thresholds and metrics."
)
QUIET_HELP = "No progress bar."
EXCLUSIVITY_IMAGES = 1000


# -- train -------------------------------------------------------------------------------------


@train_app.command("exclusivity")
def train_exclusivity_cmd(
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    out: Path | None = typer.Option(None, "--out", help=OUT_HELP),
    images: int = typer.Option(
        EXCLUSIVITY_IMAGES, "--images", min=10, help="Synthetic images mined for contexts."
    ),
    compare: bool = typer.Option(False, "--compare", help=COMPARE_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Train the exclusivity model (nouns, attributes, relations) and export it to ONNX, with
    its lexical table (what WordNet says about every term it knows) beside it.

    Pairs come from contexts mined from synthetic and sample graphs (names seen in the same
    place), the lexicon and WordNet neighbours; labels come from WordNet and the lexicon's rules;
    the gold set is held out entirely.
    """
    require_training_extra()
    from covr.models import EXCLUSIVITY_FILE

    path = out_path(out, EXCLUSIVITY_FILE)
    previous = previous_file(path) if compare else None
    started = time.perf_counter()
    with Stages("training exclusivity", 6, quiet=quiet) as stages:
        result = train_exclusivity_job(seed, images, path, stages)
    report: dict[str, Any] = {
        "file": str(path),
        "version": result.version,
        "seconds": round(time.perf_counter() - started, 1),
        "trained_on": result.trained_on,
        "metrics": result.metrics,
    }
    if previous is not None:
        report["compared"] = compare_files(previous, path)
    if as_json:
        print_json(report)
        return
    typer.echo(f"wrote {path} (version {result.version}) in {report['seconds']} s")
    _print_exclusivity_table(result.metrics)
    if previous is not None:
        print_comparison(report["compared"])


REAL_HELP = (
    "Folder with the real GQA and VG samples (gqa/train_sceneGraphs.first100.json, "
    "vg/scene_graphs.first100.json; default: ../shared/data/real beside the repository)."
)


@train_app.command("presence")
def train_presence_cmd(
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    out: Path | None = typer.Option(None, "--out", help=OUT_HELP),
    real: Path | None = typer.Option(None, "--real", help=REAL_HELP),
    synthetic: int = typer.Option(
        PRESENCE_SYNTHETIC_IMAGES,
        "--synthetic",
        min=0,
        help="Synthetic images mined as a supplement (0 = real graphs only).",
    ),
    subgraphs: int = typer.Option(
        300, "--subgraphs", min=10, help="Simple subgraphs mined from the synthetic images."
    ),
    compare: bool = typer.Option(False, "--compare", help=COMPARE_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Train the presence model on real scene graphs (hidden objects, attributes and
    relations against truly unannotated ones), calibrate per-type thresholds on held-out real
    images, export ONNX.

    The default model sees graphs, not pixels (image features are zeros). With --compare the
    replaced file is also scored on the same held-out images.
    """
    require_training_extra()
    from covr.models import PRESENCE_FILE
    from covr.models.features import Lexicon
    from covr.models.presence import CoStats, PresenceFeaturizer, collect_stats
    from covr.models.presence_train import export_presence, train_presence

    path = out_path(out, PRESENCE_FILE)
    real_dir = real if real is not None else default_real_dir()
    previous = previous_file(path) if compare else None
    started = time.perf_counter()
    with Stages("training presence", 8 if synthetic else 7, quiet=quiet) as stages:
        data = presence_data(
            seed, stages, real_dir=real_dir, synthetic=synthetic, subgraphs=subgraphs
        )
        stats = collect_stats(data.stats_scenes, classes=data.classes)
        lexicon = Lexicon(lexicon_data())
        featurizer = PresenceFeaturizer(CoStats(stats), lexicon)
        real_only = None
        if data.synthetic_train:
            stages.next(f"fitting on {len(data.real_train)} real examples (for the report)")
            real_only = train_presence(
                featurizer=featurizer,
                train=data.real_train,
                heldout=data.heldout,
                trained_on=data.summary,
                seed=seed,
            )
        train = data.real_train + data.synthetic_train
        stages.next(f"fitting on {len(train)} examples")
        result = train_presence(
            featurizer=featurizer,
            train=train,
            heldout=data.heldout,
            trained_on=data.summary,
            seed=seed,
        )
        if real_only is not None:
            result.metrics["real_only"] = {
                "heldout_by_type": real_only.metrics["heldout_by_type"],
                "heldout_auc": real_only.metrics["heldout_auc"],
                "thresholds": real_only.thresholds,
            }
        before = None
        if previous is not None:
            before = score_previous(path, data.heldout)
        stages.next("writing ONNX")
        command = f"covr models train presence --seed {seed}"
        if synthetic != PRESENCE_SYNTHETIC_IMAGES or subgraphs != 300:
            command += f" --synthetic {synthetic} --subgraphs {subgraphs}"
        export_presence(path, result, stats=stats, lexicon=lexicon, created_by=command)
        stages.done()
    report: dict[str, Any] = {
        "file": str(path),
        "version": result.version,
        "seconds": round(time.perf_counter() - started, 1),
        "thresholds": result.thresholds,
        "metrics": result.metrics,
        "trained_on": result.trained_on,
    }
    if previous is not None:
        report["compared"] = compare_files(previous, path)
        report["previous_on_heldout"] = before
    if as_json:
        print_json(report)
        return
    typer.echo(f"wrote {path} (version {result.version}) in {report['seconds']} s")
    typer.echo(f"held-out real images: {json.dumps(result.trained_on['heldout_images'])}")
    _print_presence_table(result.metrics)
    if "real_only" in result.metrics:
        typer.echo("without the synthetic supplement (same held-out examples):")
        _print_presence_table(result.metrics["real_only"])
    if before is not None:
        typer.echo(f"the replaced file ({before['version']}) on the same held-out examples:")
        _print_presence_table(before["metrics"])
    if previous is not None:
        print_comparison(report["compared"])


# -- eval --------------------------------------------------------------------------------------


def _print_exclusivity_table(metrics: dict[str, Any]) -> None:
    paper = metrics.get("paper_accuracy", {})
    typer.echo(
        f"{'type':<10} {'set':<15} {'n':>6} {'accuracy':>9} {'paper':>7} "
        f"{'false excl':>10} {'false ovl':>9}"
    )
    for set_name in ("gold", "silver_heldout"):
        for kind, row in metrics.get(set_name, {}).items():
            typer.echo(
                f"{kind:<10} {set_name:<15} {row['n']:>6} {row['accuracy']:>9.4f} "
                f"{paper.get(kind, 0):>7.3f} {row['false_exclusive']:>10} {row['false_overlap']:>9}"
            )


def _print_presence_table(metrics: dict[str, Any]) -> None:
    typer.echo(
        f"{'changed type':<12} {'thresholds':<14} {'tau':>9} {'recall':>7} "
        f"{'precision':>9} {'base rate':>9} {'hidden':>6} {'absent':>6}"
    )
    for kind, rows in metrics.get("heldout_by_type", {}).items():
        for name in ("calibrated", "paper_default"):
            r = rows[name]
            typer.echo(
                f"{kind:<12} {name:<14} {r['threshold']:>9.4f} {r['recall']:>7.3f} "
                f"{r['precision']:>9.3f} {r['base_rate']:>9.3f} {r['hidden']:>6} {r['absent']:>6}"
            )
    typer.echo(f"held-out AUC {metrics.get('heldout_auc')}")


@eval_app.command("exclusivity")
def eval_exclusivity_cmd(
    model: Path | None = typer.Option(None, "--model", help=MODEL_HELP),
    errors: bool = typer.Option(False, "--errors", help="Also list every misclassified pair."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Accuracy per type on the hand-written gold set, computed now through onnxruntime."""
    from covr.models import ModelResourceError, load_exclusivity_model
    from covr.models.exclusivity_train import PAPER_ACCURACY, accuracy_by_type
    from covr.models.gold import load_gold

    try:
        m = load_exclusivity_model(model, settings=load_settings().models)
    except ModelResourceError as exc:
        fail(str(exc))
    gold = load_gold()
    scores = m.scores([(g.kind, g.x, g.x_prime) for g in gold])
    metrics = {
        "gold": accuracy_by_type([g.kind for g in gold], [g.label for g in gold], scores),
        "paper_accuracy": PAPER_ACCURACY,
    }
    wrong = [
        {
            "type": g.kind,
            "x": g.x,
            "x_prime": g.x_prime,
            "label": g.label,
            "score": round(float(s), 4),
        }
        for g, s in zip(gold, scores, strict=True)
        if int(s > 0.5) != g.label
    ]
    if as_json:
        print_json({"version": m.version, "metrics": metrics, "errors": wrong if errors else None})
        return
    typer.echo(f"model {m.path} version {m.version}")
    _print_exclusivity_table(metrics)
    if errors:
        for w in wrong:
            typer.echo(
                f"  {w['type']:<9} {w['x']!r} -> {w['x_prime']!r} label {w['label']} "
                f"score {w['score']}"
            )


@eval_app.command("presence")
def eval_presence_cmd(
    model: Path | None = typer.Option(None, "--model", help=MODEL_HELP),
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    real: Path | None = typer.Option(None, "--real", help=REAL_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Hide present simple subgraphs in the held-out real images and report recall/precision
    per changed type, at the model's calibrated thresholds and at the paper's defaults
    (computed now; a version-1 file, trained on synthetic graphs, is scored the same way)."""
    from covr.models import ModelResourceError, load_presence_model

    try:
        m = load_presence_model(model, settings=load_settings().models)
    except ModelResourceError as exc:
        fail(str(exc))
    real_dir = real if real is not None else default_real_dir()
    with Stages("evaluating presence", 4, quiet=quiet) as stages:
        data = presence_data(seed, stages, real_dir=real_dir, train=False)
        stages.next(f"scoring {len(data.heldout)} examples")
        metrics = heldout_metrics(m, data.heldout)
        stages.done()
    if as_json:
        print_json(
            {
                "version": m.version,
                "thresholds": m.thresholds,
                "heldout_images": data.summary["heldout_images"],
                "metrics": metrics,
            }
        )
        return
    typer.echo(f"model {m.path} version {m.version} (sees graphs, not pixels)")
    typer.echo(f"held-out real images: {json.dumps(data.summary['heldout_images'])}")
    _print_presence_table(metrics)


# -- info / score ------------------------------------------------------------------------------


@app.command("info")
def info_cmd(as_json: bool = typer.Option(False, "--json", help=JSON_HELP)) -> None:
    """Name, version, inputs, training data and metrics of both ONNX models."""
    from covr.models import ModelResourceError, model_info

    try:
        info = model_info(load_settings().models)
    except ModelResourceError as exc:
        fail(str(exc))
    if as_json:
        print_json(info)
        return
    for key, item in info.items():
        meta = item["metadata"]
        typer.echo(f"{key}: {meta.get('model_name')} {meta.get('version')}")
        typer.echo(f"  file     {item['file']} ({item['bytes']} bytes)")
        typer.echo(f"  inputs   {item['inputs']} -> {item['output']}")
        typer.echo(f"  labels   {meta.get('labels')}")
        if "thresholds" in meta:
            typer.echo(f"  thresholds {meta['thresholds']}")
        if "sees" in meta:
            typer.echo(f"  sees     {meta['sees']}")
        typer.echo(f"  trained  {json.dumps(meta.get('trained_on'), sort_keys=True)}")
        typer.echo(f"  metrics  {json.dumps(meta.get('metrics'), sort_keys=True)}")


@app.command("score")
def score_cmd(
    x: str = typer.Argument(..., help="The question's term (e.g. 'riding')."),
    x_prime: str = typer.Argument(..., help="The candidate image's term (e.g. 'near')."),
    node_type: str = typer.Option(
        ..., "--type", help="noun|object, attribute, relation or relmod."
    ),
    model: Path | None = typer.Option(None, "--model", help=MODEL_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Exclusivity score m(x, x') (directional for relations); > 0.5 means exclusive."""
    from covr.models import ModelInputError, ModelResourceError, load_exclusivity_model
    from covr.models.terms import node_type as parse_type

    try:
        kind = parse_type(node_type, "--type")
        m = load_exclusivity_model(model, settings=load_settings().models)
        score = m.m(kind, x, x_prime)
    except ModelInputError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    except ModelResourceError as exc:
        fail(str(exc))
    if as_json:
        print_json(
            {
                "type": kind,
                "x": x,
                "x_prime": x_prime,
                "score": round(score, 6),
                "exclusive": score > 0.5,
                "version": m.version,
            }
        )
        return
    typer.echo(f"{score:.4f} {'exclusive' if score > 0.5 else 'not exclusive'}")
