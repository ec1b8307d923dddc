"""Training and evaluation jobs behind ``covr models``: data, progress, comparison.

Why here and not in the models room: the jobs need rooms the models room may not import (the
related room's lexicon rules label the exclusivity pairs, its matcher finds the presence model's
positives and distractor negatives); ``covr/cli/models.py`` keeps the commands and their tables.
"""

from __future__ import annotations

import dataclasses
import hashlib
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
PRESENCE_SYNTHETIC_IMAGES = 1200
"""Synthetic images of the presence recipe's supplement (``--synthetic``; 0 = none)."""
PRESENCE_HELDOUT_SHARE = 30
"""Percent of the real images held out (by a hash of the image id, see :func:`heldout_image`)."""
PRESENCE_PER_IMAGE = 8
"""Simple subgraphs mined per real image (cycling over object, attribute and relation shapes)."""
REAL_FILES = (
    ("gqa", "gqa/train_sceneGraphs.first100.json"),
    ("vg", "vg/scene_graphs.first100.json"),
)
"""The real samples of ``../shared/data/real`` (README there) the presence recipe reads."""


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
    for job in sample_jobs(load_settings().load):
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
    featurizer = Featurizer(lexicon, open_configured_wordnet(load_settings().models))
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


SHAPES = ("object", "attribute", "relation")


def _shape(g: Any) -> str:
    if g.relations:
        return "relation"
    return "attribute" if g.objects[0].attribute is not None else "object"


def mine_presence(
    scenes: Sequence[SceneGraph],
    *,
    seed: int,
    subgraphs: int,
    per_side: int = 4,
    per_image: int = 1,
    min_area: float | None = None,
    advance: Callable[[int], None] | None = None,
) -> list[Mined]:
    """Simple subgraphs with positives and distractor negatives from the reference matcher
    (``advance(1)`` after each one found: the mining is most of a presence job's time).

    ``per_image`` > 1 picks that many per image, cycling over the shapes (a bare object, an
    object with an attribute, a relation) so that hidden objects (a hand, a neck) are not
    crowded out by relations; ``min_area`` overrides the enumeration's smallest box (real
    images annotate body parts with small boxes)."""
    from covr.models.presence import is_simple
    from covr.related.exclusivity import default_exclusivity
    from covr.related.matcher import SceneIndex
    from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs

    index = SceneIndex(scenes)
    exclusivity = default_exclusivity()
    rng = random.Random(seed)
    order = sorted(index.scenes)
    rng.shuffle(order)
    options = EnumerationOptions(max_relations=1, max_subgraphs=400, include_relmods=False)
    if min_area is not None:
        options = dataclasses.replace(options, min_object_area=min_area)
    seen: set[str] = set()
    out: list[Mined] = []
    for rank, image_id in enumerate(order):
        if len(out) >= subgraphs:
            break
        enumerated = [
            g for g in enumerate_subgraphs(index.scenes[image_id].graph, options) if is_simple(g)
        ]
        for pick in range(per_image):
            if len(out) >= subgraphs:
                break
            candidates = [g for g in enumerated if g.key not in seen]
            if per_image > 1:
                shape = SHAPES[(rank + pick) % len(SHAPES)]
                candidates = [g for g in candidates if _shape(g) == shape] or candidates
            if not candidates:
                break
            g = rng.choice(candidates)
            seen.add(g.key)
            found = _mined(index, g, exclusivity, rng, per_side)
            if found is not None:
                out.append(found)
                if advance is not None:
                    advance(1)
    return out


def _mined(index: Any, g: Any, exclusivity: Any, rng: random.Random, per_side: int) -> Mined | None:
    """``g``'s positives and distractor images (at most ``per_side`` each), or None without a
    distractor."""
    from covr.models.presence_train import Mined
    from covr.related.matcher import distractors, positives

    pos = positives(index, g)
    neg = distractors(index, g, exclusivity, max_distance=2)
    if not neg:
        return None
    pos_ids = rng.sample(pos, min(per_side, len(pos)))
    by_image: dict[str, str] = {}
    for d in neg:
        by_image.setdefault(d.image_id, d.signature)
    neg_ids = rng.sample(sorted(by_image), min(per_side, len(by_image)))
    return Mined(
        g,
        tuple(index.scenes[i].graph for i in pos_ids),
        tuple((index.scenes[i].graph, by_image[i]) for i in neg_ids),
    )


def default_real_dir() -> Path:
    """``../shared/data/real`` beside the repository (the machine's shared folder; CI has it)."""
    import covr

    return Path(covr.__file__).resolve().parents[2].parent / "shared" / "data" / "real"


def heldout_image(image_id: str) -> bool:
    """Whether a real image is held out: the first 8 bytes of SHA-256 of its id, modulo 100,
    below :data:`PRESENCE_HELDOUT_SHARE` (a fixed rule: adding images never moves others)."""
    digest = hashlib.sha256(image_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % 100 < PRESENCE_HELDOUT_SHARE


def real_scenes(real_dir: Path) -> tuple[list[SceneGraph], dict[str, Any]]:
    """The GQA and VG samples of ``real_dir`` read by the project's loaders, and a summary
    (file names, SHA-256, images) that does not depend on where the folder is."""
    from covr.scene.model import SceneGraph
    from covr_loaders import gqa as gqa_reader
    from covr_loaders import vg as vg_reader
    from covr_loaders.jsonio import ByteCounter

    readers = {"gqa": gqa_reader.read, "vg": vg_reader.read}
    scenes: list[SceneGraph] = []
    files: dict[str, Any] = {}
    for source, name in REAL_FILES:
        path = real_dir / name
        if not path.is_file():
            fail(
                f"the real scene-graph sample {path} is missing (--real names the folder with "
                "gqa/ and vg/, by default ../shared/data/real; see its README)"
            )
        found = [
            r
            for r in readers[source](path, split="train", counter=ByteCounter())
            if isinstance(r, SceneGraph)
        ]
        scenes.extend(found)
        files[name] = {
            "images": len(found),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()[:16],
        }
    return scenes, files


def noun_classes(nouns: Sequence[str]) -> dict[str, str]:
    """WordNet class (lexicographer file of the first noun sense, ``noun.body`` -> ``body``) of
    each normalized noun, and of every noun of the exclusivity model's lexical table: from that
    table where it holds the noun, from WordNet (opened once, only then) for the rest."""
    from covr.models import EXCLUSIVITY_FILE, bundled_model_path
    from covr.models.lexical import LexicalTable, table_path, wordnet_facts
    from covr.models.wordnet import LEXNAMES

    table = LexicalTable.read(table_path(bundled_model_path(EXCLUSIVITY_FILE)))
    known = {t for k, t in table.terms() if k == "object"}
    out: dict[str, str] = {}
    wn: Any = None
    for noun in sorted(known | set(nouns)):
        facts = table.get("object", noun)
        if facts is None:
            if wn is None:
                from covr.models import open_configured_wordnet

                wn = open_configured_wordnet(load_settings().models)
            facts = wordnet_facts(wn, "object", noun)
        if facts.lexname >= 0 and LEXNAMES[facts.lexname].startswith("noun."):
            out[noun] = LEXNAMES[facts.lexname].split(".", 1)[1]
    return out


@dataclasses.dataclass
class PresenceData:
    """What the presence recipe trains and evaluates on."""

    stats_scenes: list[SceneGraph]
    """Real training images + bundled samples: the co-occurrence statistics come from these."""
    classes: dict[str, str]
    real_train: list[Any]
    synthetic_train: list[Any]
    heldout: list[Any]
    summary: dict[str, Any]


def presence_data(
    seed: int,
    stages: Stages,
    *,
    real_dir: Path,
    synthetic: int = PRESENCE_SYNTHETIC_IMAGES,
    subgraphs: int = 300,
    train: bool = True,
) -> PresenceData:
    """Real training and held-out examples, the synthetic supplement (``synthetic`` images,
    ``subgraphs`` mined from them; 0 = none) and a summary. ``train=False``: evaluation needs
    only the held-out part, so nothing else is mined."""
    from covr.models.presence import noun_key
    from covr.models.presence_train import examples

    stages.next("reading real scene graphs")
    real, files = real_scenes(real_dir)
    held_scenes = [s for s in real if heldout_image(s.image_id)]
    train_real = [s for s in real if not heldout_image(s.image_id)]
    real_ids = {s.image_id for s in real}
    samples = [s for s in sample_scenes() if s.image_id not in real_ids]  # ids are unique
    pool = train_real + samples
    real_train: list[Any] = []
    synthetic_train: list[Any] = []
    classes: dict[str, str] = {}
    if train:
        stages.next("mining real training subgraphs")
        want = len(pool) * PRESENCE_PER_IMAGE
        found = stages.sub("real training subgraphs", want)
        mined = mine_presence(
            pool,
            seed=seed,
            subgraphs=want,
            per_image=PRESENCE_PER_IMAGE,
            min_area=0.0,
            advance=found,
        )
        real_train = examples(mined, seed=seed)
        if synthetic:
            stages.next("mining synthetic subgraphs")
            found = stages.sub("synthetic subgraphs", subgraphs)
            syn = mine_presence(
                synthetic_scenes(synthetic, seed), seed=seed, subgraphs=subgraphs, advance=found
            )
            synthetic_train = examples(syn, seed=seed)
        classes = noun_classes(sorted({noun_key(o.name) for s in pool for o in s.objects}))
    stages.next("mining held-out subgraphs")
    want = len(held_scenes) * PRESENCE_PER_IMAGE
    found = stages.sub("held-out subgraphs", want)
    held_mined = mine_presence(
        held_scenes,
        seed=seed + 1,
        subgraphs=want,
        per_image=PRESENCE_PER_IMAGE,
        min_area=0.0,
        advance=found,
    )
    heldout = examples(held_mined, seed=seed + 1)

    def sources(items: Sequence[SceneGraph]) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in items:
            out[s.source] = out.get(s.source, 0) + 1
        return dict(sorted(out.items()))

    summary = {
        "sources": "real scene graphs (GQA and VG samples of ../shared/data/real, CC BY 4.0) "
        f"split by a hash of the image id ({PRESENCE_HELDOUT_SHARE} % held out) + the bundled "
        "samples for training; positives = images containing g_s with g_s hidden (an object, "
        "attribute or relation removed), negatives = its distractor images, in which g_s is "
        "not annotated (reference matcher, lexicon exclusivity, edit distance <= 2); "
        f"{PRESENCE_PER_IMAGE} simple subgraphs per image; synthetic images only as a "
        "supplement",
        "real_files": files,
        "train_images": {"real": sources(train_real), "samples": sources(samples)},
        "heldout_images": sources(held_scenes),
        "synthetic": {"images": synthetic, "seed": seed, "subgraphs": subgraphs}
        if synthetic
        else None,
        "examples": {
            "real_train": _counts(real_train),
            "synthetic_train": _counts(synthetic_train),
            "heldout": _counts(heldout),
        },
        "classes": len(classes),
    }
    return PresenceData(pool, classes, real_train, synthetic_train, heldout, summary)


def _counts(items: Sequence[Any]) -> dict[str, int]:
    pos = sum(1 for e in items if e.label == 1)
    return {"positives": pos, "negatives": len(items) - pos}


def heldout_metrics(model: Any, heldout: Sequence[Any]) -> dict[str, Any]:
    """A presence model's recall and precision per changed type on held-out examples, at its
    own thresholds and at the paper's, and its AUC."""
    import numpy as np

    from covr.models.presence import PAPER_THRESHOLDS
    from covr.models.presence_train import TYPE_ORDER, metrics_at, roc_auc

    scores = model.score_batch([(e.subgraph, e.scene, None) for e in heldout])
    y = np.array([e.label for e in heldout])
    kinds = np.array([e.kind for e in heldout])
    report: dict[str, Any] = {}
    for kind in TYPE_ORDER:
        mask = kinds == kind
        if mask.any():
            report[kind] = {
                "calibrated": metrics_at(scores[mask], y[mask], model.thresholds.get(kind, 0.5)),
                "paper_default": metrics_at(scores[mask], y[mask], PAPER_THRESHOLDS[kind]),
            }
    return {
        "heldout_by_type": report,
        "heldout_examples": len(heldout),
        "heldout_auc": round(roc_auc(scores, y), 4),
    }


def score_previous(path: Path, heldout: Sequence[Any]) -> dict[str, Any] | None:
    """The file about to be replaced, scored on the new held-out examples (None when it cannot
    be read: another feature layout)."""
    from covr.models.errors import ModelResourceError
    from covr.models.presence import PresenceModel

    try:
        model = PresenceModel(path)
    except ModelResourceError:
        return None
    return {
        "version": model.version,
        "thresholds": model.thresholds,
        "metrics": heldout_metrics(model, heldout),
    }
