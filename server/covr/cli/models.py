"""``covr models train|eval|info|score``: the exclusivity and presence classifiers.

Training orchestration lives here because it needs rooms the models room may not import
(DESIGN.md §1): the related room's lexicon rules label the exclusivity pairs, and its reference
matcher finds the presence model's positives and distractor negatives. Everything is built from
the project's own resources (lexicon, gold set, synthetic generator, bundled samples), so
``make models`` rebuilds the committed files with the same metrics.

Exit codes: 0 done; 1 a model or resource failed to load; 2 bad input.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, print_json

if TYPE_CHECKING:
    from covr.models.presence_train import Mined
    from covr.scene.model import SceneGraph

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
EXCLUSIVITY_IMAGES = 1000
PRESENCE_TRAIN_IMAGES = 1200
PRESENCE_HELDOUT_IMAGES = 400


# -- shared data -------------------------------------------------------------------------------


def _lexicon_data() -> dict[str, Any]:
    from covr.related.exclusivity import load_resource

    return {
        "nouns": load_resource("nouns.json"),
        "attributes": load_resource("attributes.json"),
        "relations": load_resource("relations.json"),
    }


def _sample_scenes() -> list[SceneGraph]:
    """The loaders' bundled samples as scene graphs (no store needed)."""
    from covr.scene.model import SceneGraph
    from covr_loaders.jsonio import ByteCounter
    from covr_loaders.samples import sample_jobs

    out: list[SceneGraph] = []
    for job in sample_jobs(load_settings()):
        for item in job.inputs:
            out.extend(r for r in item.records(ByteCounter()) if isinstance(r, SceneGraph))
    return out


def _synthetic(count: int, seed: int) -> list[SceneGraph]:
    from covr_loaders import synthetic

    return list(synthetic.generate(count, seed=seed))


def _out_path(out: Path | None, name: str) -> Path:
    from covr.models import bundled_model_path

    return out if out is not None else bundled_model_path(name)


# -- train -------------------------------------------------------------------------------------


@train_app.command("exclusivity")
def train_exclusivity_cmd(
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    out: Path | None = typer.Option(None, "--out", help=OUT_HELP),
    images: int = typer.Option(
        EXCLUSIVITY_IMAGES, "--images", min=10, help="Synthetic images mined for contexts."
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Train the exclusivity model (nouns, attributes, relations) and export it to ONNX.

    Pairs come from App. A contexts mined from synthetic + sample graphs, the lexicon and WordNet
    neighbours; labels from WordNet and the lexicon's rules; the gold set is held out entirely.
    """
    from covr.models import EXCLUSIVITY_FILE, open_configured_wordnet
    from covr.models.exclusivity_train import (
        TrainOptions,
        build_pairs,
        export_exclusivity,
        mine_contexts,
        train_exclusivity,
    )
    from covr.models.features import Featurizer, Lexicon
    from covr.models.gold import load_gold
    from covr.related.exclusivity import default_exclusivity

    started = time.perf_counter()
    options = TrainOptions(seed=seed)
    lexicon = Lexicon(_lexicon_data())
    featurizer = Featurizer(lexicon, open_configured_wordnet(load_settings()))
    scenes = _synthetic(images, seed) + _sample_scenes()
    contexts = mine_contexts(scenes, seed=seed)
    vocab: dict[Any, set[str]] = {"object": set(), "attribute": set(), "relation": set()}
    for scene in _sample_scenes():
        vocab["object"].update(o.name for o in scene.objects)
        vocab["attribute"].update(a for o in scene.objects for a in o.attributes)
        vocab["relation"].update(r.name for r in scene.relations)
    gold = load_gold()
    pairs, summary = build_pairs(
        featurizer=featurizer,
        reference=default_exclusivity(),
        contexts=contexts,
        extra_vocab=vocab,
        gold=gold,
        options=options,
    )
    summary["sources"] = (
        f"{images} synthetic images (seed {seed}) + bundled samples ({len(_sample_scenes())} "
        "images) for App. A contexts; WordNet 3.0 (Debian); covr.related lexicon resources"
    )
    result = train_exclusivity(
        featurizer=featurizer, pairs=pairs, gold=gold, trained_on=summary, options=options
    )
    path = _out_path(out, EXCLUSIVITY_FILE)
    export_exclusivity(
        path, result, lexicon, created_by=f"covr models train exclusivity --seed {seed}"
    )
    report = {
        "file": str(path),
        "version": result.version,
        "seconds": round(time.perf_counter() - started, 1),
        "trained_on": result.trained_on,
        "metrics": result.metrics,
    }
    if as_json:
        print_json(report)
        return
    typer.echo(f"wrote {path} (version {result.version}) in {report['seconds']} s")
    _print_exclusivity_table(result.metrics)


def mine_presence(
    scenes: Sequence[SceneGraph], *, seed: int, subgraphs: int, per_side: int = 4
) -> list[Mined]:
    """Simple subgraphs with positives and distractor negatives from the reference matcher."""
    from covr.models.presence import is_simple
    from covr.models.presence_train import Mined
    from covr.related.exclusivity import default_exclusivity
    from covr.related.reference import SceneIndex, distractors, positives
    from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs

    index = SceneIndex(scenes)
    exclusivity = default_exclusivity()
    rng = random.Random(seed)
    order = sorted(index.scenes)
    rng.shuffle(order)
    options = EnumerationOptions(max_relations=1, max_subgraphs=400, include_relmods=False)
    seen: set[str] = set()
    out: list[Mined] = []
    for image_id in order:
        if len(out) >= subgraphs:
            break
        candidates = [
            g
            for g in enumerate_subgraphs(index.scenes[image_id].graph, options)
            if is_simple(g) and g.key not in seen
        ]
        if not candidates:
            continue
        g = rng.choice(candidates)
        seen.add(g.key)
        pos = positives(index, g)
        neg = distractors(index, g, exclusivity, max_distance=2)
        if not neg:
            continue
        pos_ids = rng.sample(pos, min(per_side, len(pos)))
        by_image: dict[str, str] = {}
        for d in neg:
            by_image.setdefault(d.image_id, d.signature)
        neg_ids = rng.sample(sorted(by_image), min(per_side, len(by_image)))
        out.append(
            Mined(
                g,
                tuple(index.scenes[i].graph for i in pos_ids),
                tuple((index.scenes[i].graph, by_image[i]) for i in neg_ids),
            )
        )
    return out


def _presence_data(seed: int, subgraphs: int) -> tuple[Any, Any, Any, dict[str, Any]]:
    from covr.models.presence_train import examples

    scenes = _synthetic(PRESENCE_TRAIN_IMAGES + PRESENCE_HELDOUT_IMAGES, seed)
    train_scenes = scenes[:PRESENCE_TRAIN_IMAGES]
    held_scenes = scenes[PRESENCE_TRAIN_IMAGES:] + _sample_scenes()
    train_mined = mine_presence(train_scenes, seed=seed, subgraphs=subgraphs)
    held_mined = mine_presence(held_scenes, seed=seed + 1, subgraphs=max(subgraphs // 2, 10))
    summary = {
        "sources": f"synthetic images (seed {seed}): {PRESENCE_TRAIN_IMAGES} for training, "
        f"{PRESENCE_HELDOUT_IMAGES} held out + the bundled samples; positives = images "
        "containing g_s with g_s hidden, negatives = its distractor images (reference matcher, "
        "lexicon exclusivity, edit distance <= 2)",
        "train_subgraphs": len(train_mined),
        "heldout_subgraphs": len(held_mined),
    }
    return (
        train_scenes,
        examples(train_mined, seed=seed),
        examples(held_mined, seed=seed + 1),
        summary,
    )


@train_app.command("presence")
def train_presence_cmd(
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    out: Path | None = typer.Option(None, "--out", help=OUT_HELP),
    subgraphs: int = typer.Option(
        300, "--subgraphs", min=10, help="Simple subgraphs mined for training."
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Train the presence model on graph context, calibrate per-type thresholds, export ONNX.

    The default model sees graphs, not pixels (image features are zeros).
    """
    from covr.models import PRESENCE_FILE
    from covr.models.features import Lexicon
    from covr.models.presence import CoStats, PresenceFeaturizer, collect_stats
    from covr.models.presence_train import export_presence, train_presence

    started = time.perf_counter()
    train_scenes, train_ex, held_ex, summary = _presence_data(seed, subgraphs)
    stats = collect_stats(train_scenes)
    lexicon = Lexicon(_lexicon_data())
    featurizer = PresenceFeaturizer(CoStats(stats), lexicon)
    result = train_presence(
        featurizer=featurizer, train=train_ex, heldout=held_ex, trained_on=summary, seed=seed
    )
    path = _out_path(out, PRESENCE_FILE)
    export_presence(
        path,
        result,
        stats=stats,
        lexicon=lexicon,
        created_by=f"covr models train presence --seed {seed} --subgraphs {subgraphs}",
    )
    report = {
        "file": str(path),
        "version": result.version,
        "seconds": round(time.perf_counter() - started, 1),
        "thresholds": result.thresholds,
        "metrics": result.metrics,
        "trained_on": result.trained_on,
    }
    if as_json:
        print_json(report)
        return
    typer.echo(f"wrote {path} (version {result.version}) in {report['seconds']} s")
    _print_presence_table(result.metrics)


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
        m = load_exclusivity_model(model, settings=load_settings())
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
    subgraphs: int = typer.Option(300, "--subgraphs", min=10, help="As given to training."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Hide present simple subgraphs in held-out graphs and report recall/precision per type,
    at the model's calibrated thresholds and at the paper's defaults (computed now)."""
    from covr.models import ModelResourceError, load_presence_model
    from covr.models.presence import PAPER_THRESHOLDS
    from covr.models.presence_train import _at, _auc

    try:
        m = load_presence_model(model, settings=load_settings())
    except ModelResourceError as exc:
        fail(str(exc))
    _, _, held, _ = _presence_data(seed, subgraphs)
    import numpy as np

    scores = m.score_batch([(e.subgraph, e.scene, None) for e in held])
    y = np.array([e.label for e in held])
    kinds = np.array([e.kind for e in held])
    report: dict[str, Any] = {}
    for kind in ("object", "relation", "attribute"):
        mask = kinds == kind
        if mask.any():
            report[kind] = {
                "calibrated": _at(scores[mask], y[mask], m.thresholds.get(kind, 0.5)),
                "paper_default": _at(scores[mask], y[mask], PAPER_THRESHOLDS[kind]),
            }
    metrics = {
        "heldout_by_type": report,
        "heldout_examples": len(held),
        "heldout_auc": round(_auc(scores, y), 4),
    }
    if as_json:
        print_json({"version": m.version, "thresholds": m.thresholds, "metrics": metrics})
        return
    typer.echo(f"model {m.path} version {m.version} (sees graphs, not pixels)")
    _print_presence_table(metrics)


# -- info / score ------------------------------------------------------------------------------


@app.command("info")
def info_cmd(as_json: bool = typer.Option(False, "--json", help=JSON_HELP)) -> None:
    """Name, version, inputs, training data and metrics of both ONNX models."""
    from covr.models import ModelResourceError, model_info

    try:
        info = model_info(load_settings())
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
        m = load_exclusivity_model(model, settings=load_settings())
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
