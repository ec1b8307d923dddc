"""``covr build OUTDIR``: from dataset files (or the loaded store) to a release in one command
(issue 39 item 1): load → generate with per-form quotas → balance → splits → export → stats.

Each stage is what the single commands do (:mod:`covr.cli.build_stages` calls the same public
functions); this module only orders them, skips the ones a previous run completed with the same
fingerprint, measures each (wall time, peak memory) and prints the summary. Bookkeeping (state
files, fingerprints, atomic outputs): :mod:`covr.cli.build_state`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli import build_stages as stages
from covr.cli.build_state import BuildState, StageRecord, describe_input, fingerprint, measured
from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, print_json, store_session
from covr.cli.scale import RAY_HELP

if TYPE_CHECKING:
    from covr.graph import GraphStore
    from covr.questions.options import GenerationOptions
    from covr.settings import Settings

STAGES = ("load", "generate", "balance", "splits", "export", "stats")
BUILD_VERSION = 1
"""Part of every fingerprint: bumped when a stage's outputs change for the same inputs."""
SETTING_PREFIXES = ("load_", "limit_", "subgraph_", "related_", "questions_", "models_dir")
"""Settings that shape what is loaded or generated (caches and worker counts do not)."""
UNFINGERPRINTED = ("questions_workers", "related_cache_")


@dataclass
class Request:
    """What ``covr build`` was asked for (checked)."""

    out: Path
    inputs: list[stages.InputFile]
    splits: list[str]
    examples: int
    seed: int
    templates: str
    images: int | None
    workers: int | None
    max_image_share: float
    ray: str | None
    quiet: bool


@dataclass
class Row:
    """One line of the summary: a stage (or a split's generation) and what it cost."""

    record: StageRecord
    reused: bool


@dataclass
class Build:
    request: Request
    settings: Settings
    state: BuildState
    rows: list[Row] = field(default_factory=list)

    def say(self, message: str) -> None:
        typer.echo(message, err=True)

    def stage(
        self,
        name: str,
        print_: str,
        body: Callable[[], tuple[list[str], dict[str, Any]]],
        store_digest: Callable[[], str] | None = None,
    ) -> StageRecord:
        """Run ``body`` unless ``name`` completed with this fingerprint; record it."""
        number = STAGES.index(name.split(":")[0]) + 1
        label = f"[{number}/{len(STAGES)}] {name.replace(':', ' ')}"
        current = store_digest() if store_digest else None
        found = self.state.done(name, print_, current)
        if found is not None:
            self.say(f"{label}: done in an earlier run, reused")
            self.rows.append(Row(found, True))
            return found
        self.state.forget(name)
        self.say(f"{label} ...")
        with measured() as cost:
            outputs, details = body()
            recorded = self.state.outputs(outputs)
            if store_digest is not None:
                recorded["store:"] = store_digest()
        record = StageRecord(
            name,
            print_,
            recorded,
            cost.wall_s,
            cost.peak_rss_mb,
            cost.workers_peak_rss_mb,
            details,
        )
        self.state.save(record)
        self.rows.append(Row(record, False))
        self.say(f"{label}: done in {cost.wall_s:.1f} s")
        return record


def _settings_print(
    settings: Settings, prefixes: tuple[str, ...] = SETTING_PREFIXES
) -> dict[str, Any]:
    """The settings with these prefixes, for a fingerprint."""
    dumped = settings.model_dump()  # sets stay sets: the fingerprint sorts them
    return {
        k: v
        for k, v in sorted(dumped.items())
        if k.startswith(prefixes) and not k.startswith(UNFINGERPRINTED)
    }


def _load_stage(run: Build, store: GraphStore) -> StageRecord:
    request, settings = run.request, run.settings
    print_ = fingerprint(
        "load",
        BUILD_VERSION,
        [[i.source, i.split, describe_input(i.path)] for i in request.inputs],
        settings.graph_uri or str(settings.data_dir),
        settings.graph_backend,
        _settings_print(settings, ("load_", "limit_")),
    )

    def body() -> tuple[list[str], dict[str, Any]]:
        loaded = stages.load_inputs(store, request.inputs, settings.load, request.quiet)
        _, stats = stages.store_digest(store)
        return [], {"loaded": loaded, "store": stats["datasets"]}

    return run.stage("load", print_, body, lambda: stages.store_digest(store)[0])


def _chosen_splits(run: Build, lookup: Any) -> dict[str, list[str]]:
    """The source images of each split to generate from (the first ``--images`` of each)."""
    request = run.request
    stored = lookup.splits()
    wanted = request.splits or sorted({i.split for i in request.inputs}) or stored
    if not stored:
        fail(
            "the store holds no scene graph: give dataset files (--gqa FILE, --vg FILE) or "
            "load them first (covr load ...)",
            EXIT_BAD_INPUT,
        )
    chosen: dict[str, list[str]] = {}
    for split in stages.split_order(wanted):
        if split not in stored:
            fail(
                f"--split {split}: the store holds no image of it (its splits: "
                f"{', '.join(stored)})",
                EXIT_BAD_INPUT,
            )
        ids = lookup.image_ids(split)
        chosen[split] = ids[: request.images] if request.images is not None else ids
    return chosen


def _generate_stages(run: Build, store: GraphStore, load: StageRecord) -> dict[str, int]:
    """One state file per split; returns examples per form for each split."""
    from covr.cli.questions import generation_options
    from covr.questions.templates import select_templates
    from covr.related.api import RelatedError
    from covr.related.lookup import RelatedLookup

    request, settings = run.request, run.settings
    try:  # the image table only: each split's generation builds the service's lookup itself
        chosen = _chosen_splits(run, RelatedLookup(store, settings=settings.related))
    except RelatedError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    first = generation_options(next(iter(chosen)), request.seed, request.templates, 1, False)
    forms = len(select_templates(first.templates))
    per_form = stages.allocate(request.examples, forms, {s: len(i) for s, i in chosen.items()})
    for split, ids in chosen.items():
        options = generation_options(
            split, request.seed, request.templates, per_form[split], False, request.max_image_share
        )
        _generate_one(run, store, options, ids, load)
    return per_form


def _generate_one(
    run: Build,
    store: GraphStore,
    options: GenerationOptions,
    ids: list[str],
    load: StageRecord,
) -> None:
    """``generate:<split>``: fingerprinted by its options, its source images and the store.
    Each split gets a lookup of its own, built as ``covr generate`` builds it in a process of its
    own, so a split generated after a resume meets the same (cold) lookup as in one run."""
    from covr.questions.engine import GENERATOR_VERSION
    from covr.related.filters import RelatedLookups, serving_lookup

    request, settings = run.request, run.settings
    rel = stages.generated_path(options.split)
    print_ = fingerprint(
        "generate",
        BUILD_VERSION,
        GENERATOR_VERSION,
        dataclasses.asdict(options),
        fingerprint(ids),
        load.outputs,
        _settings_print(settings),
    )

    def body() -> tuple[list[str], dict[str, Any]]:
        out = request.out / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if request.ray is not None:
            made = stages.generate_split_on_ray(
                settings.tasks, options, ids, out, request.ray, request.quiet
            )
        else:
            workers = request.workers or settings.questions_workers
            lookups = RelatedLookups(store, settings.related, settings.models)
            lookup, missing = serving_lookup(lookups)
            if missing is not None:
                run.say(f"exclusivity model unavailable ({missing}); using the word lists")
            made = stages.generate_split(
                lookup, options, ids, out, workers=workers, quiet=request.quiet
            )
        return [rel, rel + ".dropped.json"], {**made, "per_template": options.per_template}

    run.stage(f"generate:{options.split}", print_, body)


def _release_stages(run: Build, per_form: dict[str, int]) -> None:
    """Balance, splits, export and stats: each fingerprinted by what the one before made."""
    out = run.request.out
    gen = {s: run.state.outputs([stages.generated_path(s)]) for s in per_form}
    balance = run.stage(
        "balance",
        fingerprint("balance", BUILD_VERSION, run.request.seed, per_form, gen),
        lambda: stages.balance_release(out, per_form, run.request.seed),
    )
    splits = run.stage(
        "splits",
        fingerprint("splits", BUILD_VERSION, balance.outputs),
        lambda: stages.build_split_folders(out),
    )
    run.stage(
        "export",
        fingerprint("export", BUILD_VERSION, balance.outputs, splits.outputs),
        lambda: stages.export_release(out),
    )
    dropped = {s: run.state.outputs([stages.generated_path(s) + ".dropped.json"]) for s in gen}
    run.stage(
        "stats",
        fingerprint("stats", BUILD_VERSION, balance.outputs, dropped),
        lambda: stages.write_stats(out, list(per_form)),
    )


def _check_request(request: Request, files: list[tuple[str, Path]]) -> None:
    """Bad input exits 2 before any work, naming the option."""
    if request.examples < 1:
        fail(f"--examples must be >= 1, got {request.examples}", EXIT_BAD_INPUT)
    if request.images is not None and request.images < 1:
        fail(f"--images must be >= 1, got {request.images}", EXIT_BAD_INPUT)
    if request.workers is not None and request.workers < 1:
        fail(f"--workers must be >= 1, got {request.workers}", EXIT_BAD_INPUT)
    if not 0 < request.max_image_share <= 1:
        fail(f"--max-image-share must be in (0, 1], got {request.max_image_share}", EXIT_BAD_INPUT)
    if request.ray is not None and request.workers is not None:
        fail("--ray runs its own workers; it excludes --workers", EXIT_BAD_INPUT)
    for option, path in files:
        if not path.is_file():
            what = "is a directory" if path.is_dir() else "no such file"
            fail(f"{option} {path}: {what}", EXIT_BAD_INPUT)
    out = request.out
    if out.exists() and not out.is_dir():
        fail(f"OUTDIR {out}: is a file; give a directory (created when missing)", EXIT_BAD_INPUT)
    if not out.exists() and not out.parent.is_dir():
        fail(f"OUTDIR {out}: folder {out.parent} does not exist", EXIT_BAD_INPUT)


def _split_of(option: str, given: str | None, path: Path) -> str:
    """The split stored on a file's images: ``given``, else from the file name as ``covr load``
    tells it (``train_sceneGraphs.json``: train)."""
    from covr.cli.data import SPLIT_NAME, split_of_file

    if given is None:
        known = split_of_file(path)
        if known is not None:
            return known
        fail(
            f"{option} {path}: cannot tell the split from the file name; pass {option}-split",
            EXIT_BAD_INPUT,
        )
    if not SPLIT_NAME.match(given):
        fail(
            f"{option}-split {given!r}: use a short lower-case name such as train, val or test",
            EXIT_BAD_INPUT,
        )
    return given


def _inputs(
    gqa: list[Path], vg: list[Path], gqa_split: str | None, vg_split: str
) -> list[stages.InputFile]:
    files = [stages.InputFile("gqa", p, _split_of("--gqa", gqa_split, p)) for p in gqa]
    return files + [stages.InputFile("vg", p, _split_of("--vg", vg_split, p)) for p in vg]


OUTDIR = typer.Argument(
    ...,
    help="Build directory (created when missing): the release, the generated files and the "
    "state of each completed stage (.build/); a re-run continues where a run stopped.",
)
SPLIT_HELP = (
    "Split to generate from (repeatable); default: the input files' splits, or every split of "
    "the store. Examples of 'train' form the training pool of the compositional splits, the "
    "others the evaluation pool (both are needed for splits)."
)
EXAMPLES_HELP = (
    "Target size of the release: shared among the splits by their source images and among the "
    "forms (rounded up per form); the summary says when the images cannot give it."
)
GQA_HELP = "GQA *_sceneGraphs.json to load (repeatable)."
VG_HELP = "Visual Genome scene_graphs.json to load (repeatable)."
GQA_SPLIT_HELP = "Split stored on the GQA images; default: from the file name."
TEMPLATES_HELP = "Comma-separated template names or groups; default: the 19 forms."
IMAGES_HELP = "Use the first N source images of each split (sorted by id)."
WORKERS_HELP = "Generation worker processes (default COVR_QUESTIONS_WORKERS)."
SHARE_HELP = "As covr generate: no image in more than this share of a split's examples."


def build(
    outdir: Path = OUTDIR,
    gqa: list[Path] = typer.Option([], "--gqa", help=GQA_HELP),
    vg: list[Path] = typer.Option([], "--vg", help=VG_HELP),
    gqa_split: str | None = typer.Option(None, "--gqa-split", help=GQA_SPLIT_HELP),
    vg_split: str = typer.Option("train", "--vg-split", help="Split stored on the VG images."),
    split: list[str] = typer.Option([], "--split", help=SPLIT_HELP),
    examples: int = typer.Option(..., "--examples", help=EXAMPLES_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed of generation and balancing."),
    templates: str = typer.Option("", "--templates", help=TEMPLATES_HELP),
    images: int | None = typer.Option(None, "--images", help=IMAGES_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    max_image_share: float = typer.Option(0.05, "--max-image-share", help=SHARE_HELP),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help=RAY_HELP),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Build a release: load the files (or use the loaded store), generate with per-form quotas
    until the target size, balance, cut the paper's splits (zero-shot, program, lexical), export
    (released COVR JSONL, Parquet with a dataset card) and write the statistics and plots.

    Resumable: each completed stage leaves a state file under OUTDIR/.build/, and a re-run
    skips the stages whose inputs and options are unchanged (a kill loses at most the stage it
    interrupted). Prints a summary with the wall time and peak memory of each stage.
    """
    request = Request(
        outdir,
        [],
        list(split),
        examples,
        seed,
        templates,
        images,
        workers,
        max_image_share,
        ray,
        quiet,
    )
    _check_request(request, [("--gqa", p) for p in gqa] + [("--vg", p) for p in vg])
    request.inputs = _inputs(gqa, vg, gqa_split, vg_split)
    settings = load_settings()
    outdir.mkdir(exist_ok=True)
    run = Build(request, settings, BuildState(outdir))
    started = time.perf_counter()
    with store_session() as store:
        load = _load_stage(run, store)
        per_form = _generate_stages(run, store, load)
    _release_stages(run, per_form)
    summary = _summary(run, time.perf_counter() - started)
    if as_json:
        print_json(summary)
    else:
        sys.stdout.write(_table(summary))


def _summary(run: Build, wall: float) -> dict[str, Any]:
    """What was built, what each stage cost, and whether the target was reached."""
    import resource

    rows = {r.record.stage: r for r in run.rows}
    balance = rows["balance"].record.details
    made = int(balance["examples"])
    target = run.request.examples
    short: dict[str, dict[str, list[int]]] = {}
    for split, entry in balance["splits"].items():
        forms = rows[f"generate:{split}"].record.details["forms"]  # every form, made or not
        wanted = int(entry["per_template"])
        lacking = {f: [entry["per_form"].get(f, 0), wanted] for f in sorted(forms)}
        short[split] = {f: pair for f, pair in lacking.items() if pair[0] < wanted}
    note = None
    if made < target:
        names = sorted({f for forms in short.values() for f in forms})
        note = (
            f"the images cannot give the target: {made} of {target} examples (forms short of "
            f"their quota: {', '.join(names) or '-'}); load more images, lower --examples, or "
            "raise --max-image-share (generated/<split>.jsonl.dropped.json says per form why)"
        )
    return {
        "out": str(run.request.out),
        "target": target,
        "examples": made,
        "per_split": {s: e["examples"] for s, e in balance["splits"].items()},
        "short_forms": {s: f for s, f in short.items() if f},
        "note": note,
        "splits": rows["splits"].record.details,
        "release": rows["export"].record.details["files"],
        "stages": [
            {
                "stage": r.record.stage,
                "status": "reused" if r.reused else "ran",
                "wall_s": r.record.wall_s,
                "peak_rss_mb": r.record.peak_rss_mb,
                "workers_peak_rss_mb": r.record.workers_peak_rss_mb,
            }
            for r in run.rows
        ],
        "wall_s": round(wall, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _table(summary: dict[str, Any]) -> str:
    """The summary as text: one row per stage, then the release."""

    def mb(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f}"

    lines = [f"{'stage':18s} {'status':7s} {'wall s':>9s} {'peak MB':>8s} {'workers MB':>10s}"]
    for row in summary["stages"]:
        lines.append(
            f"{row['stage']:18s} {row['status']:7s} {row['wall_s']:9.1f} "
            f"{mb(row['peak_rss_mb']):>8s} {mb(row['workers_peak_rss_mb']):>10s}"
        )
    lines.append(
        f"{'this run':18s} {'':7s} {summary['wall_s']:9.1f} {mb(summary['peak_rss_mb']):>8s}"
    )
    per_split = ", ".join(f"{s} {n}" for s, n in summary["per_split"].items())
    lines.append(
        f"release: {summary['examples']} examples (target {summary['target']}): {per_split}"
    )
    built, skipped = summary["splits"]["built"], summary["splits"]["skipped"]
    lines.append(f"splits: {len(built)} built ({', '.join(built)}); {len(skipped)} skipped")
    for item in skipped:
        lines.append(f"  skipped {item['split']}: {item['reason']}")
    for split, forms in summary["short_forms"].items():
        made = ", ".join(f"{f} {n}/{w}" for f, (n, w) in forms.items())
        lines.append(f"short of the quota in {split} (made/wanted): {made}")
    if summary["note"]:
        lines.append(f"note: {summary['note']}")
    lines.append(f"files under {summary['out']}: examples.jsonl, splits/, release/, stats/")
    return "\n".join(lines) + "\n"
