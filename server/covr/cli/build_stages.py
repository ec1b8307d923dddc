"""The stages of ``covr build`` (:mod:`covr.cli.build`): each one calls the rooms' public
functions, the same ones ``covr load``, ``covr generate --per-template``, ``covr balance``,
``covr split``, ``covr export`` and ``covr stats`` call, and writes its outputs under the build
directory atomically. What a stage returns (its details) goes into its state file and the
build's summary.

Layout of a build directory::

    generated/<split>.jsonl (+ .dropped.json)    covr generate --per-template, per split
    examples.jsonl                               the balanced release with properties
    splits/<name>/..., splits/index.json         covr split program / lexical / zero-shot
    release/covr/<split>.jsonl                   the released COVR layout, split markers
    release/hub/data/*.parquet, release/hub/README.md   Parquet and dataset card
    stats/stats.json, stats/stats.txt, stats/plots/*.png   covr stats and its plots
    .build/state/<stage>.json                    one per completed stage
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli.build_state import atomic_dir, fingerprint
from covr.cli.common import EXIT_BAD_INPUT, fail

if TYPE_CHECKING:
    from covr.graph import GraphStore
    from covr.questions.example import Example, ExampleRecord
    from covr.questions.options import GenerationOptions
    from covr.scale.config import TaskSettings
    from covr_loaders.config import LoadSettings

EXAMPLES_FILE = "examples.jsonl"
TRAIN_SPLIT = "train"
"""Examples of this source split form the training pool of every compositional split."""
PROGRAM_SEEDS = (0, 1, 2)
LEXICAL_SEEDS = (0, 1, 2)
"""As ``covr split program`` / ``covr split lexical`` by default: three seeds each."""


@dataclass(frozen=True)
class InputFile:
    """One dataset file to load: its reader, path and the split stored on its images."""

    source: str
    path: Path
    split: str


def generated_path(split: str) -> str:
    return f"generated/{split}.jsonl"


def split_order(splits: Sequence[str]) -> list[str]:
    """The training split first, then the others by name (the release's order)."""
    return sorted(set(splits), key=lambda s: (s != TRAIN_SPLIT, s))


# -- load ----------------------------------------------------------------------------------------


def load_inputs(
    store: GraphStore, inputs: Sequence[InputFile], settings: LoadSettings, quiet: bool
) -> list[dict[str, Any]]:
    """Load every input file (``covr load gqa|vg FILE --split S --resume``): idempotent, and
    continued from the loader's own checkpoint after a kill. One summary per file."""
    from covr_loaders.errors import InputFileError
    from covr_loaders.jobs import gqa_job, vg_job
    from covr_loaders.progress import NullReporter, Reporter, RichReporter
    from covr_loaders.writer import run_load

    store.apply_schema()
    done: list[dict[str, Any]] = []
    for item in inputs:
        make = gqa_job if item.source == "gqa" else vg_job
        reporter: Reporter = NullReporter() if quiet else RichReporter()
        try:
            job = make([item.path], item.split, settings)
            summary = run_load(
                store,
                job,
                data_dir=settings.data_dir,
                batch_images=settings.load_batch_images,
                writers=settings.load_writers,
                resume=True,
                reporter=reporter,
            )
        except InputFileError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        if summary.images == 0:
            fail(f"--{item.source} {item.path}: no valid image could be read", EXIT_BAD_INPUT)
        typer.echo(
            f"  {item.source} {item.split}: {summary.images:,} images from {item.path.name} "
            f"({summary.images_written:,} written, {summary.batches_resumed} batches already "
            f"there, {summary.skipped:,} records skipped)",
            err=True,
        )
        done.append(
            {
                "source": item.source,
                "file": str(item.path),
                "split": item.split,
                "images": summary.images,
                "images_written": summary.images_written,
                "skipped": summary.skipped,
            }
        )
    return done


def store_digest(store: GraphStore) -> tuple[str, dict[str, Any]]:
    """A digest of what the store holds (counts per label, per source and split): what every
    later stage was made from, so a store changed since invalidates them."""
    from covr.graph.report import store_stats

    stats = store_stats(store)
    return fingerprint(stats), stats


# -- generate --------------------------------------------------------------------------------------


PAIR = 2
"""A text comes with two answers (two examples): a form's quota is never below one text."""


def allocate(target: int, forms: int, images: Mapping[str, int]) -> dict[str, int]:
    """Examples per form for each split: the target shared among the splits in proportion to
    their source images, then among the forms (rounded up, and one text of two examples at
    least: every form gets the same number, so the release may be a little over the target)."""
    total = sum(images.values())
    out: dict[str, int] = {}
    for split, count in images.items():
        share = target * count / total
        out[split] = max(PAIR, -(-round(share) // forms))
    return out


def generate_split(
    lookup: Any,
    options: GenerationOptions,
    ids: list[str],
    out: Path,
    *,
    workers: int,
    quiet: bool,
) -> dict[str, Any]:
    """``covr generate --split S --per-template N`` through the store's lookup (the default
    path), with its progress bar; writes ``out`` atomically and its ``.dropped.json`` report."""
    from covr.cli.progress import progress_bar
    from covr.cli.questions import write_dropped
    from covr.questions.errors import QuestionError
    from covr.questions.export import write_jsonl
    from covr.questions.generate import iter_examples, spread_over
    from covr.questions.quota import FormQuota
    from covr.questions.templates import select_templates
    from covr.related.store_provider import StoreRelated

    provider = StoreRelated(lookup, {options.split: lookup.image_ids(options.split)})
    provider.prepare()
    options = spread_over(options, len(ids))
    quota = FormQuota.for_run(options)
    dropped: Counter[str] = Counter()
    shown: Counter[str] = Counter()

    def counted(items: Iterator[Example]) -> Iterator[Example]:
        for example in items:
            shown.update(set(example["scenes"]))
            yield example

    with progress_bar(quiet=quiet) as progress:
        task = progress.add_task(f"generate {options.split}", total=len(ids))
        try:
            stream = iter_examples(
                provider,
                options,
                ids,
                workers=workers,
                progress=lambda k: progress.advance(task, k),
                dropped=dropped,
                quota=quota,
            )
            n = write_jsonl(counted(stream), out)
        except QuestionError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
    forms = quota.report([t.name for t in select_templates(options.templates)], dropped)
    write_dropped(out, dropped, forms, quota.spread(shown, n))
    provider.remember()
    return {"examples": n, "source_images": len(ids), "forms": _made(forms)}


def generate_split_on_ray(
    settings: TaskSettings,
    options: GenerationOptions,
    ids: list[str],
    out: Path,
    address: str,
    quiet: bool,
) -> dict[str, Any]:
    """The same on Ray (``covr generate --ray ADDRESS --resume``): shards' parts under
    ``out.parts/`` are reused after a kill when their checksums verify; same bytes."""
    from covr.cli.common import say_unless
    from covr.cli.questions import write_dropped
    from covr.questions.generate import spread_over
    from covr.scale.cluster import ShardFailed
    from covr.scale.errors import ScaleError
    from covr.scale.generate import Run
    from covr.scale.generate import generate as run_generate

    options = spread_over(options, len(ids))
    shards = settings.scale.ray_shards
    run = Run(settings, options, "store", tuple(ids), out, address, shards, True)
    try:
        outcome = run_generate(run, say_unless(quiet))
    except ScaleError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    except ShardFailed as exc:
        fail(str(exc))
    write_dropped(out, outcome.dropped, outcome.forms, outcome.spread)
    return {"examples": outcome.written, "source_images": len(ids), "forms": _made(outcome.forms)}


def _made(forms: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Per form: [made, wanted] (the quota's report, kept small for the state file)."""
    return {name: [row["made"], row["wanted"]] for name, row in sorted(forms.items())}


# -- balance ---------------------------------------------------------------------------------------


def balance_release(
    out: Path, per_template: Mapping[str, int], seed: int
) -> tuple[list[str], dict[str, Any]]:
    """``covr balance --per-template N`` on each split's generated file, the splits joined
    (training split first) with their properties (``covr properties``) into ``examples.jsonl``.
    Returns the output and, per split, examples kept and per form."""
    from covr.questions.balance import balance
    from covr.questions.errors import QuestionError
    from covr.questions.export import read_jsonl, write_jsonl
    from covr.splits.properties import with_properties

    kept: list[ExampleRecord] = []
    details: dict[str, Any] = {}
    try:
        for split in split_order(list(per_template)):
            generated = list(read_jsonl(out / generated_path(split)))
            balanced = balance(generated, per_template=per_template[split], seed=seed)
            per_form = Counter(str(e["template"]) for e in balanced)
            details[split] = {
                "generated": len(generated),
                "examples": len(balanced),
                "per_template": per_template[split],
                "per_form": dict(sorted(per_form.items())),
            }
            kept += balanced
    except QuestionError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    n = write_jsonl((with_properties(e) for e in kept), out / EXAMPLES_FILE)
    return [EXAMPLES_FILE], {"examples": n, "splits": details}


# -- splits ----------------------------------------------------------------------------------------


def split_plan(examples: Sequence[ExampleRecord]) -> Any:
    """The paper's splits for this release: program and lexical splits (three seeds each, as
    ``covr split`` does by default) and the Table 4 zero-shot splits. The lexical split's name
    counts (paper: 50 training and 15 evaluation examples per name, on 248 k examples) are
    scaled down with a small release (1 % of each pool, 2 at least) and recorded."""
    from covr.splits.correlation import TABLE4_EXPRESSIONS, SplitPlan
    from covr.splits.examples import is_train

    train = sum(1 for e in examples if is_train(e))
    evaluation = len(examples) - train
    return SplitPlan(
        program_seeds=len(PROGRAM_SEEDS),
        lexical_seeds=len(LEXICAL_SEEDS),
        lexical_min_train=min(50, max(2, train // 100)),
        lexical_min_eval=min(15, max(2, evaluation // 100)),
        adversarial=0,
        zero_shot=TABLE4_EXPRESSIONS,
    )


def build_split_folders(out: Path) -> tuple[list[str], dict[str, Any]]:
    """Every split of :func:`split_plan` as ``covr split`` writes it (``splits/<name>/`` with
    id lists and manifest), and ``splits/index.json``: what was built, with counts, and what
    the release cannot support (skipped, with the reason)."""
    from covr.splits.builders import SplitError, file_digest, write_split
    from covr.splits.correlation import build_splits
    from covr.splits.examples import ExampleError, read_examples

    examples_path = out / EXAMPLES_FILE
    try:
        examples = read_examples(examples_path)
        plan = split_plan(examples)
        built = build_splits(examples, plan)
    except (ExampleError, SplitError) as exc:
        fail(f"splits: {exc}", EXIT_BAD_INPUT)
    inputs = {"examples": EXAMPLES_FILE, "examples_sha256": file_digest(examples_path)}
    rows = [
        {"name": s.name, "kind": s.kind, "counts": s.counts, "path": f"splits/{s.name}"}
        for s in built.splits
    ]
    index = {
        "plan": {
            "program_seeds": list(PROGRAM_SEEDS),
            "lexical_seeds": list(LEXICAL_SEEDS),
            "lexical_min_train": plan.lexical_min_train,
            "lexical_min_eval": plan.lexical_min_eval,
            "zero_shot": list(plan.zero_shot),
        },
        "splits": rows,
        "skipped": built.skipped,
    }
    with atomic_dir(out / "splits") as tmp:
        for split in built.splits:
            write_split(split, tmp, inputs=inputs)
        text = json.dumps(index, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        (tmp / "index.json").write_text(text, encoding="utf-8")
    return ["splits"], {"built": [r["name"] for r in rows], "skipped": built.skipped}


# -- export ----------------------------------------------------------------------------------------


def export_release(out: Path) -> tuple[list[str], dict[str, Any]]:
    """``covr export --format covr --splits ...`` per source split (``release/covr/<split>
    .jsonl``, held-out examples marked ``program_N`` / ``lexical_N``) and ``covr export
    --format parquet`` (``release/hub``: ``data/<split>-*.parquet`` and the dataset card)."""
    from covr.cli.export_covr import MARKED_KINDS, export_covr
    from covr.questions.errors import QuestionError
    from covr.questions.export import read_jsonl
    from covr.questions.parquet import write_parquet

    examples_path = out / EXAMPLES_FILE
    index = json.loads((out / "splits" / "index.json").read_text(encoding="utf-8"))
    folders = [out / r["path"] for r in index["splits"] if r["kind"] in MARKED_KINDS]
    try:
        examples = list(read_jsonl(examples_path))
    except QuestionError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    by_split: dict[str, list[ExampleRecord]] = {}
    for example in examples:
        by_split.setdefault(str(example.get("split", TRAIN_SPLIT)), []).append(example)
    counts: dict[str, int] = {}
    with atomic_dir(out / "release") as tmp:
        (tmp / "covr").mkdir()
        for split in split_order(list(by_split)):
            target = tmp / "covr" / f"{split}.jsonl"
            counts[split] = export_covr(by_split[split], examples_path, target, folders)
        parquet = write_parquet(examples, tmp / "hub")
    files = [f"covr/{s}.jsonl" for s in counts] + [p.relative_to(tmp).as_posix() for p in parquet]
    return ["release"], {"per_split": counts, "files": [*files, "hub/README.md"]}


# -- stats -----------------------------------------------------------------------------------------


def write_stats(out: Path, splits: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """``covr stats examples.jsonl --plots``: the report as ``stats/stats.json`` and
    ``stats/stats.txt`` (with each split's per-form generation report), and the PNG charts."""
    from covr.questions.export import read_jsonl
    from covr.questions.stats import image_spread, plots, table3

    examples = list(read_jsonl(out / EXAMPLES_FILE))
    table = table3(examples)
    for split in split_order(splits):
        record = json.loads((out / (generated_path(split) + ".dropped.json")).read_text())
        table[f"generation {split}: per form (made / wanted)"] = {
            name: f"{row['made']} / {row['wanted'] or '-'}"
            for name, row in sorted(record.get("forms", {}).items())
        }
    spread = image_spread(examples)
    with atomic_dir(out / "stats") as tmp:
        (tmp / "stats.json").write_text(
            json.dumps(table, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
        )
        (tmp / "stats.txt").write_text("".join(_stats_lines(table)), encoding="utf-8")
        drawn = plots(examples, tmp / "plots")
    return ["stats"], {"plots": len(drawn), "image_spread": spread}


def _stats_lines(table: Mapping[str, Any]) -> Iterator[str]:
    """The report as ``covr stats`` prints it."""
    for key, value in table.items():
        if isinstance(value, dict):
            yield f"{key}:\n"
            for name, count in value.items():
                yield f"  {name:28s} {count}\n"
        else:
            yield f"{key:45s} {value}\n"
