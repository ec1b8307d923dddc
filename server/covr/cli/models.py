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
from collections.abc import Callable, Sequence
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
COMPARE_HELP = (
    "Before overwriting, read the existing file and report whether the new model has the same "
    "version, thresholds and metrics."
)
QUIET_HELP = "No progress bar."
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


def _served_vocabulary(sample_vocab: dict[Any, set[str]]) -> dict[Any, set[str]]:
    """Terms the exclusivity model's lexical table covers beyond its training pairs: the
    samples' names and the synthetic generator's vocabulary (seed 0, what the quick start,
    tests and benchmarks load), so scoring them never opens WordNet."""
    from covr_loaders.synthetic import GENERIC_PREDICATES, Generator

    vocab = Generator(0).vocab
    out: dict[Any, set[str]] = {k: set(v) for k, v in sample_vocab.items()}
    out["object"].update(w for ws in vocab.nouns.values() for w in ws)
    out["attribute"].update(w for ws in vocab.attributes.values() for w in ws)
    out["relation"].update(w for ws in vocab.predicates.values() for w in ws)
    out["relation"].update(vocab.verbs)
    out["relation"].update(GENERIC_PREDICATES)
    return out


def _out_path(out: Path | None, name: str) -> Path:
    from covr.models import bundled_model_path

    return out if out is not None else bundled_model_path(name)


# -- progress, training extra, comparison ------------------------------------------------------


class _Stages:
    """A progress bar over the named steps of a job (each step can take tens of seconds)."""

    def __init__(self, title: str, total: int, *, quiet: bool) -> None:
        from covr.cli.progress import progress_bar

        self.title = title
        self.progress = progress_bar(quiet=quiet)
        self.task = self.progress.add_task(title, total=total)
        self.started = False

    def __enter__(self) -> _Stages:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def next(self, step: str) -> None:
        """Mark the previous step done and show ``step`` as the current one."""
        if self.started:
            self.progress.advance(self.task)
        self.started = True
        self.progress.update(self.task, description=f"{self.title}: {step}")

    def sub(self, description: str, total: int) -> Callable[[int], None]:
        """A second bar for a step with countable items; returns its ``advance``."""
        task = self.progress.add_task(f"  {description}", total=total)

        def advance(n: int = 1) -> None:
            self.progress.advance(task, n)

        return advance

    def done(self) -> None:
        self.progress.update(self.task, completed=self.progress.tasks[0].total or 0)
        self.progress.update(self.task, description=f"{self.title}: done")


def _require_training_extra() -> None:
    """Training needs scikit-learn and onnx, which `make run`'s install leaves out."""
    import importlib.util

    missing = [name for name in ("sklearn", "onnx") if importlib.util.find_spec(name) is None]
    if missing:
        fail(
            "training needs the 'train' extra (scikit-learn, onnx), which is not installed "
            "(missing: " + ", ".join(missing) + "); install it with "
            "`.venv/bin/pip install -e '.[train]'` (`make test` installs it too)"
        )


def _previous(path: Path) -> dict[str, Any] | None:
    """Version, thresholds and metrics of the file about to be replaced (None if absent)."""
    from covr.models.onnx_io import OnnxHead

    if not path.is_file():
        return None
    meta = OnnxHead(path).metadata
    return {k: meta.get(k) for k in ("version", "thresholds", "metrics")}


def _compare(previous: dict[str, Any], path: Path) -> dict[str, Any]:
    """What changed between the replaced file and the new one (``same`` when nothing did)."""
    now = _previous(path) or {}
    differs = {}
    for key in ("version", "thresholds", "metrics"):
        old, new = previous.get(key), now.get(key)
        if old != new:
            differs[key] = {"before": _loads(old), "after": _loads(new)}
    return {"same": not differs, "differs": differs}


def _loads(value: str | None) -> Any:
    if value is None or value[:1] not in "[{":
        return value
    return json.loads(value)


def _print_comparison(compared: dict[str, Any]) -> None:
    if compared["same"]:
        typer.echo("same version, thresholds and metrics as the file it replaced")
        return
    typer.echo("DIFFERS from the file it replaced:")
    for key, change in compared["differs"].items():
        typer.echo(f"  {key}: {json.dumps(change['before'])} -> {json.dumps(change['after'])}")
    typer.echo(
        "  (see docs/models.md, 'Reproducibility': same data and seed give the same model on "
        "one machine; another CPU's BLAS kernels round differently)"
    )


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
    _require_training_extra()
    from covr.models import EXCLUSIVITY_FILE

    path = _out_path(out, EXCLUSIVITY_FILE)
    previous = _previous(path) if compare else None
    started = time.perf_counter()
    with _Stages("training exclusivity", 6, quiet=quiet) as stages:
        result = _train_exclusivity(seed, images, path, stages)
    report: dict[str, Any] = {
        "file": str(path),
        "version": result.version,
        "seconds": round(time.perf_counter() - started, 1),
        "trained_on": result.trained_on,
        "metrics": result.metrics,
    }
    if previous is not None:
        report["compared"] = _compare(previous, path)
    if as_json:
        print_json(report)
        return
    typer.echo(f"wrote {path} (version {result.version}) in {report['seconds']} s")
    _print_exclusivity_table(result.metrics)
    if previous is not None:
        _print_comparison(report["compared"])


def _train_exclusivity(seed: int, images: int, path: Path, stages: _Stages) -> Any:
    """The exclusivity recipe, one progress stage per step; writes the table and the model."""
    from covr.models import open_configured_wordnet
    from covr.models.exclusivity_train import (
        TrainOptions,
        build_pairs,
        export_exclusivity,
        mine_contexts,
        train_exclusivity,
        write_lexical_table,
    )
    from covr.models.features import Featurizer, Lexicon
    from covr.models.gold import load_gold
    from covr.related.exclusivity import default_exclusivity

    options = TrainOptions(seed=seed)
    lexicon = Lexicon(_lexicon_data())
    stages.next("opening WordNet")
    featurizer = Featurizer(lexicon, open_configured_wordnet(load_settings()))
    stages.next("mining contexts")
    samples = _sample_scenes()
    contexts = mine_contexts(_synthetic(images, seed) + samples, seed=seed)
    vocab: dict[Any, set[str]] = {"object": set(), "attribute": set(), "relation": set()}
    for scene in samples:
        vocab["object"].update(o.name for o in scene.objects)
        vocab["attribute"].update(a for o in scene.objects for a in o.attributes)
        vocab["relation"].update(r.name for r in scene.relations)
    gold = load_gold()
    stages.next("labelling pairs")
    pairs, summary = build_pairs(
        featurizer=featurizer,
        reference=default_exclusivity(),
        contexts=contexts,
        extra_vocab=vocab,
        gold=gold,
        options=options,
    )
    summary["sources"] = (
        f"{images} synthetic images (seed {seed}) + bundled samples ({len(samples)} "
        "images) for App. A contexts; WordNet 3.0 (Debian); covr.related lexicon resources"
    )
    stages.next(f"fitting on {len(pairs)} pairs")
    result = train_exclusivity(
        featurizer=featurizer, pairs=pairs, gold=gold, trained_on=summary, options=options
    )
    stages.next("writing the lexical table")
    table = write_lexical_table(path, featurizer, result, _served_vocabulary(vocab))
    stages.next("writing ONNX")
    export_exclusivity(
        path,
        result,
        lexicon,
        created_by=f"covr models train exclusivity --seed {seed}",
        lexical_table=table,
    )
    stages.done()
    return result


def mine_presence(
    scenes: Sequence[SceneGraph],
    *,
    seed: int,
    subgraphs: int,
    per_side: int = 4,
    advance: Callable[[int], None] | None = None,
) -> list[Mined]:
    """Simple subgraphs with positives and distractor negatives from the reference matcher
    (``advance(1)`` after each one found: the mining is most of a presence job's time)."""
    from covr.models.presence import is_simple
    from covr.models.presence_train import Mined
    from covr.related.exclusivity import default_exclusivity
    from covr.related.matcher import SceneIndex, distractors, positives
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
        if advance is not None:
            advance(1)
    return out


def _presence_data(
    seed: int, subgraphs: int, stages: _Stages, *, train: bool = True
) -> tuple[Any, Any, Any, dict[str, Any]]:
    """Training scenes, training and held-out examples, summary (``train=False``: evaluation
    needs only the held-out part, so the training subgraphs are not mined)."""
    from covr.models.presence_train import examples

    stages.next("generating synthetic graphs")
    scenes = _synthetic(PRESENCE_TRAIN_IMAGES + PRESENCE_HELDOUT_IMAGES, seed)
    train_scenes = scenes[:PRESENCE_TRAIN_IMAGES]
    held_scenes = scenes[PRESENCE_TRAIN_IMAGES:] + _sample_scenes()
    train_mined: list[Mined] = []
    if train:
        stages.next("mining training subgraphs")
        found = stages.sub("training subgraphs", subgraphs)
        train_mined = mine_presence(train_scenes, seed=seed, subgraphs=subgraphs, advance=found)
    stages.next("mining held-out subgraphs")
    held = max(subgraphs // 2, 10)
    found = stages.sub("held-out subgraphs", held)
    held_mined = mine_presence(held_scenes, seed=seed + 1, subgraphs=held, advance=found)
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
    compare: bool = typer.Option(False, "--compare", help=COMPARE_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Train the presence model on graph context, calibrate per-type thresholds, export ONNX.

    The default model sees graphs, not pixels (image features are zeros).
    """
    _require_training_extra()
    from covr.models import PRESENCE_FILE
    from covr.models.features import Lexicon
    from covr.models.presence import CoStats, PresenceFeaturizer, collect_stats
    from covr.models.presence_train import export_presence, train_presence

    path = _out_path(out, PRESENCE_FILE)
    previous = _previous(path) if compare else None
    started = time.perf_counter()
    with _Stages("training presence", 5, quiet=quiet) as stages:
        train_scenes, train_ex, held_ex, summary = _presence_data(seed, subgraphs, stages)
        stats = collect_stats(train_scenes)
        lexicon = Lexicon(_lexicon_data())
        featurizer = PresenceFeaturizer(CoStats(stats), lexicon)
        stages.next(f"fitting on {len(train_ex)} examples")
        result = train_presence(
            featurizer=featurizer, train=train_ex, heldout=held_ex, trained_on=summary, seed=seed
        )
        stages.next("writing ONNX")
        export_presence(
            path,
            result,
            stats=stats,
            lexicon=lexicon,
            created_by=f"covr models train presence --seed {seed} --subgraphs {subgraphs}",
        )
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
        report["compared"] = _compare(previous, path)
    if as_json:
        print_json(report)
        return
    typer.echo(f"wrote {path} (version {result.version}) in {report['seconds']} s")
    _print_presence_table(result.metrics)
    if previous is not None:
        _print_comparison(report["compared"])


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
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
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
    import numpy as np

    with _Stages("evaluating presence", 3, quiet=quiet) as stages:
        _, _, held, _ = _presence_data(seed, subgraphs, stages, train=False)
        stages.next(f"scoring {len(held)} examples")
        scores = m.score_batch([(e.subgraph, e.scene, None) for e in held])
        stages.done()
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
