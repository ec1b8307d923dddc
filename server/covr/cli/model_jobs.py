"""Training and evaluation jobs behind ``covr models``: data, progress, comparison.

Why here and not in the models room: the jobs need rooms the models room may not import (the
related room's lexicon rules label the exclusivity pairs, its matcher finds the presence model's
positives and distractor negatives); ``covr/cli/models.py`` keeps the commands and their tables.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli.common import fail, load_settings

if TYPE_CHECKING:
    from covr.models.presence_train import Mined
    from covr.scene.model import SceneGraph

PRESENCE_TRAIN_IMAGES = 1200
PRESENCE_HELDOUT_IMAGES = 400


# -- shared data -------------------------------------------------------------------------------


def lexicon_data() -> dict[str, Any]:
    from covr.related.exclusivity import load_resource

    return {
        "nouns": load_resource("nouns.json"),
        "attributes": load_resource("attributes.json"),
        "relations": load_resource("relations.json"),
    }


def sample_scenes() -> list[SceneGraph]:
    """The loaders' bundled samples as scene graphs (no store needed)."""
    from covr.scene.model import SceneGraph
    from covr_loaders.jsonio import ByteCounter
    from covr_loaders.samples import sample_jobs

    out: list[SceneGraph] = []
    for job in sample_jobs(load_settings()):
        for item in job.inputs:
            out.extend(r for r in item.records(ByteCounter()) if isinstance(r, SceneGraph))
    return out


def sample_vocabulary(samples: list[SceneGraph]) -> dict[Any, set[str]]:
    """The names of ``samples`` by model type: object, attribute and relation names."""
    vocab: dict[Any, set[str]] = {"object": set(), "attribute": set(), "relation": set()}
    for scene in samples:
        vocab["object"].update(o.name for o in scene.objects)
        vocab["attribute"].update(a for o in scene.objects for a in o.attributes)
        vocab["relation"].update(r.name for r in scene.relations)
    return vocab


def synthetic_scenes(count: int, seed: int) -> list[SceneGraph]:
    from covr_loaders import synthetic

    return list(synthetic.generate(count, seed=seed))


def served_vocabulary(sample_vocab: dict[Any, set[str]]) -> dict[Any, set[str]]:
    """Terms the exclusivity model's lexical table covers beyond its training pairs: the
    samples' names and the synthetic generator's vocabulary (seed 0, what the quick start,
    tests and benchmarks load), so scoring them never opens WordNet."""
    from covr_loaders.synthetic import Generator
    from covr_loaders.synthetic_words import GENERIC_PREDICATES

    vocab = Generator(0).vocab
    out: dict[Any, set[str]] = {k: set(v) for k, v in sample_vocab.items()}
    out["object"].update(w for ws in vocab.nouns.values() for w in ws)
    out["attribute"].update(w for ws in vocab.attributes.values() for w in ws)
    out["relation"].update(w for ws in vocab.predicates.values() for w in ws)
    out["relation"].update(vocab.verbs)
    out["relation"].update(GENERIC_PREDICATES)
    return out


def out_path(out: Path | None, name: str) -> Path:
    from covr.models import bundled_model_path

    return out if out is not None else bundled_model_path(name)


# -- progress, training extra, comparison ------------------------------------------------------


class Stages:
    """A progress bar over the named steps of a job (each step can take tens of seconds)."""

    def __init__(self, title: str, total: int, *, quiet: bool) -> None:
        from covr.cli.progress import progress_bar

        self.title = title
        self.progress = progress_bar(quiet=quiet)
        self.task = self.progress.add_task(title, total=total)
        self.started = False

    def __enter__(self) -> Stages:
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


def require_training_extra() -> None:
    """Training needs scikit-learn and onnx, which `make run`'s install leaves out."""
    import importlib.util

    missing = [name for name in ("sklearn", "onnx") if importlib.util.find_spec(name) is None]
    if missing:
        fail(
            "training needs the 'train' extra (scikit-learn, onnx), which is not installed "
            "(missing: " + ", ".join(missing) + "); install it with "
            "`.venv/bin/pip install -e '.[train]'` (`make test` installs it too)"
        )


def previous_file(path: Path) -> dict[str, Any] | None:
    """Version, thresholds and metrics of the file about to be replaced (None if absent)."""
    from covr.models.onnx_io import OnnxHead

    if not path.is_file():
        return None
    meta = OnnxHead(path).metadata
    return {k: meta.get(k) for k in ("version", "thresholds", "metrics")}


def compare_files(previous: dict[str, Any], path: Path) -> dict[str, Any]:
    """What changed between the replaced file and the new one (``same`` when nothing did)."""
    now = previous_file(path) or {}
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


def print_comparison(compared: dict[str, Any]) -> None:
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


def train_exclusivity_job(seed: int, images: int, path: Path, stages: Stages) -> Any:
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
    lexicon = Lexicon(lexicon_data())
    stages.next("opening WordNet")
    featurizer = Featurizer(lexicon, open_configured_wordnet(load_settings()))
    stages.next("mining contexts")
    samples = sample_scenes()
    contexts = mine_contexts(synthetic_scenes(images, seed) + samples, seed=seed)
    vocab = sample_vocabulary(samples)
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
    table = write_lexical_table(path, featurizer, result, served_vocabulary(vocab))
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


def presence_data(
    seed: int, subgraphs: int, stages: Stages, *, train: bool = True
) -> tuple[Any, Any, Any, dict[str, Any]]:
    """Training scenes, training and held-out examples, summary (``train=False``: evaluation
    needs only the held-out part, so the training subgraphs are not mined)."""
    from covr.models.presence_train import examples

    stages.next("generating synthetic graphs")
    scenes = synthetic_scenes(PRESENCE_TRAIN_IMAGES + PRESENCE_HELDOUT_IMAGES, seed)
    train_scenes = scenes[:PRESENCE_TRAIN_IMAGES]
    held_scenes = scenes[PRESENCE_TRAIN_IMAGES:] + sample_scenes()
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
