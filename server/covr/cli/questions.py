"""``covr generate`` (in one process or sharded over Ray: docs/scale.md), ``covr balance``,
``covr export``, ``covr stats``: the question engine's batch commands (docs/questions.md)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli.common import (
    EXIT_BAD_INPUT,
    check_output_file,
    fail,
    load_settings,
    print_json,
    say_unless,
)
from covr.cli.scale import RAY_HELP, RESUME_HELP, SHARDS_HELP
from covr.questions.errors import QuestionError
from covr.questions.example import Example
from covr.scene.model import SceneGraph

if TYPE_CHECKING:
    from covr.questions.generate import GenerationOptions


LOOKUPS = ("memory", "store")
"""``covr generate --lookup``: the in-memory matcher or the store's Cypher lookup."""


def _read_files(gqa: list[Path], vg: list[Path], split: str) -> list[SceneGraph]:
    """Scene graphs of dataset files (GQA or VG format) with ``split`` stored on them."""
    from covr_loaders import gqa as gqa_reader
    from covr_loaders import vg as vg_reader
    from covr_loaders.errors import InputFileError
    from covr_loaders.jsonio import ByteCounter

    scenes: list[SceneGraph] = []
    problems = 0
    try:
        for path in gqa:
            for item in gqa_reader.read(path, split=split, counter=ByteCounter()):
                if isinstance(item, SceneGraph):
                    scenes.append(item)
                else:
                    problems += 1
                    typer.echo(f"skipped: {item}", err=True)
        for path in vg:
            for item in vg_reader.read(path, split=split, counter=ByteCounter()):
                if isinstance(item, SceneGraph):
                    scenes.append(item)
                else:
                    problems += 1
                    typer.echo(f"skipped: {item}", err=True)
    except (InputFileError, OSError) as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    if not scenes:
        fail("the input files hold no valid scene graph", EXIT_BAD_INPUT)
    return scenes


def _read_store_scenes(store: Any, split: str) -> list[SceneGraph]:
    from covr.graph import catalog
    from covr_loaders.readback import get_scene_graphs

    out: list[SceneGraph] = []
    after = ""
    while True:
        rows = store.read(catalog.get("load/image_ids_after"), {"after": after, "limit": 500})
        ids = [str(r["id"]) for r in rows]
        if not ids:
            break
        found = get_scene_graphs(store, ids)
        out += [found[i] for i in ids if i in found and found[i].split == split]
        after = ids[-1]
    # in Python's order: the stores order ids differently (Neo4j in UTF-16 order), and the
    # generated examples must not depend on the store
    return sorted(out, key=lambda s: s.image_id)


def _read_store(split: str) -> list[SceneGraph]:
    """Every stored scene graph of ``split`` (read back page by page)."""
    from covr.cli.common import store_session

    with store_session() as store:
        return _read_store_scenes(store, split)


def generate(
    split: str = typer.Option(..., "--split", help="Split of the source and related images."),
    out: Path = typer.Option(..., "--out", help="Output JSONL file (written atomically)."),
    images: int | None = typer.Option(
        None, "--images", min=1, help="Use the first N images of the split (sorted by id)."
    ),
    image: list[str] = typer.Option(
        [], "--image", help="A source image id (repeatable); excludes --images."
    ),
    templates: str = typer.Option(
        "",
        "--templates",
        help="Comma-separated template names or groups (closure); default: the 19 base forms.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed (0 .. 2^63-1); same seed, same output."),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Worker processes (default COVR_QUESTIONS_WORKERS)."
    ),
    gqa: list[Path] = typer.Option(
        [], "--gqa", help="Read scene graphs from a GQA-format file (with --lookup memory)."
    ),
    vg: list[Path] = typer.Option(
        [], "--vg", help="Read scene graphs from a VG scene_graphs.json (with --lookup memory)."
    ),
    lookup: str = typer.Option(
        "store",
        "--lookup",
        help="Related and distractor images: store (default; the store's Cypher lookup, "
        "substitutions judged by the ONNX exclusivity model and candidates by the presence "
        "model, as the service does) or memory (explicit option: the in-memory matcher with "
        "the reviewed word lists over scene graphs held in RAM; needed for --gqa/--vg).",
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    per_template: int | None = typer.Option(
        None,
        "--per-template",
        min=1,
        help="Keep about N examples of each form (a text's two answers stay together) and "
        "stop filling a form once it has them; the run ends when every form is full. For a "
        "balanced release: covr balance --per-template N afterwards.",
    ),
    single_answers: bool = typer.Option(
        False,
        "--single-answers",
        help="Also keep texts for which no second image set with another answer was found "
        "(default: every text comes with two answers).",
    ),
    max_image_share: float = typer.Option(
        0.05,
        "--max-image-share",
        min=0.0,
        max=1.0,
        help="Keep no text that would show one of its images in more than this share of the "
        "examples kept so far (at least 2 examples; 1 turns the cap off), so that no image "
        "is in more than this share of the output.",
    ),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help=RAY_HELP),
    shards: int | None = typer.Option(None, "--shards", help=SHARDS_HELP),
    resume: bool = typer.Option(False, "--resume", help=RESUME_HELP),
) -> None:
    """Generate questions with programs and executed answers for source images of a split.

    By default related and distractor images come from the store's Cypher lookup judged by the
    ONNX classifiers, exactly as the service finds them (load data first: covr load or covr
    quickstart). --lookup memory uses the in-memory matcher with the word lists instead, over the
    store's scene graphs or dataset files (--gqa/--vg, no store). Prints a summary (examples, per
    template, two-answer share) to stderr.
    """
    from covr.questions.generate import check_images
    from covr.related.exclusivity import default_exclusivity
    from covr.related.memory import InMemoryRelated

    check_output_file(out, "--out")
    if ray is not None:
        if gqa or vg or workers:
            fail(
                "--ray reads the store on every node; it excludes --gqa/--vg/--workers",
                EXIT_BAD_INPUT,
            )
        if images is not None and image:
            fail("--images and --image exclude each other", EXIT_BAD_INPUT)
        if lookup not in LOOKUPS:
            fail("--lookup must be memory or store", EXIT_BAD_INPUT)
        if shards is not None and shards < 1:
            fail(f"--shards must be >= 1, got {shards}", EXIT_BAD_INPUT)
        options = generation_options(
            split, seed, templates, per_template, single_answers, max_image_share
        )
        _generate_on_ray(RayRun(options, lookup, images, image, out, ray, shards, resume, quiet))
        return
    if shards is not None or resume:
        fail("--shards and --resume go with --ray", EXIT_BAD_INPUT)
    settings = load_settings()
    if images is not None and image:
        fail("--images and --image exclude each other", EXIT_BAD_INPUT)
    options = generation_options(
        split, seed, templates, per_template, single_answers, max_image_share
    )
    if lookup not in LOOKUPS:
        fail("--lookup must be memory or store", EXIT_BAD_INPUT)
    if lookup == "store":
        if gqa or vg:
            fail(
                "--gqa/--vg read dataset files, which only the in-memory matcher searches: add "
                "--lookup memory, or load the files into the store (covr load gqa FILE --split "
                f"{split}) and generate from it",
                EXIT_BAD_INPUT,
            )
        _generate_from_store(options, out, images, image, workers, quiet)
        return
    scenes = _read_files(gqa, vg, split) if (gqa or vg) else _read_store(split)
    words = default_exclusivity(settings.related_cache_names)
    provider = InMemoryRelated(
        scenes, words, max_checks=settings.questions_max_checks, presort=True
    )
    ids = provider.images(split)
    if not ids:
        fail(f"no scene graph of split {split!r} was found", EXIT_BAD_INPUT)
    if image:
        ids = list(image)
    elif images is not None:
        ids = ids[:images]
    try:
        check_images(provider, options, ids if image else [])
    except QuestionError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    _write_generated(provider, options, ids, workers or settings.questions_workers, out, quiet)


def generation_options(
    split: str,
    seed: int,
    templates: str,
    per_template: int | None,
    single_answers: bool,
    max_image_share: float = 1.0,
) -> GenerationOptions:
    """The options of ``covr generate``'s arguments (in one process and on Ray)."""
    from covr.questions.generate import GenerationOptions

    names = tuple(t.strip() for t in templates.split(",") if t.strip())
    try:
        settings = load_settings()
        options = GenerationOptions.from_settings(
            settings.questions, settings.related, split=split, seed=seed, templates=names
        )
        return dataclasses.replace(
            options,
            per_template=per_template,
            pairs_only=not single_answers,
            max_image_share=None if max_image_share >= 1 else max_image_share,
        )
    except (QuestionError, ValueError) as exc:
        fail(str(exc), EXIT_BAD_INPUT)


@dataclasses.dataclass(frozen=True)
class RayRun:
    """``covr generate --ray ADDRESS``: what the run needs of the command's arguments."""

    options: GenerationOptions
    lookup: str
    images: int | None
    image: list[str]
    out: Path
    address: str
    shards: int | None
    resume: bool
    quiet: bool


def _generate_on_ray(request: RayRun) -> None:
    """``covr generate --ray ADDRESS``: shards on Ray, parts under ``OUT.parts/``, merged into
    ``OUT`` (the same bytes as without ``--ray``) with ``OUT.dropped.json`` beside it."""
    from covr.cli.common import store_session
    from covr.questions.generate import spread_over
    from covr.scale.cluster import ShardFailed
    from covr.scale.errors import ScaleError
    from covr.scale.generate import Run
    from covr.scale.generate import generate as run_generate

    settings = load_settings()
    out = request.out
    with store_session() as store:
        ids = _ray_source_ids(store, request.options, request.images, request.image)
        options = spread_over(request.options, len(ids))
        run = Run(
            settings.tasks,
            options,
            request.lookup,
            tuple(ids),
            out,
            request.address,
            request.shards or settings.ray_shards,
            request.resume,
        )
        try:
            outcome = run_generate(run, say_unless(request.quiet))
        except ScaleError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        except ShardFailed as exc:
            fail(str(exc))
    write_dropped(out, outcome.dropped, outcome.forms, outcome.spread)
    nodes = ", ".join(f"{node[:8]}: {k}" for node, k in sorted(outcome.per_node.items()))
    typer.echo(f"{outcome.written} examples from {len(ids)} images -> {out}", err=True)
    typer.echo(
        f"shards: {outcome.ran} run, {outcome.reused} reused; per node: {nodes or '-'}; "
        f"parts in {outcome.parts} (kept for --resume)",
        err=True,
    )
    print_image_spread(outcome.spread)
    print_form_report(outcome.forms)


def _ray_source_ids(
    store: Any, options: GenerationOptions, images: int | None, image: list[str]
) -> list[str]:
    """The source images of a Ray run, in the order the single-process ``covr generate`` uses:
    the split's stored images in id order (the first ``images``), or the named ones."""
    from covr.questions.generate import check_images
    from covr.related.api import RelatedError
    from covr.related.lookup import RelatedLookup
    from covr.related.store_provider import StoreRelated

    lookup = RelatedLookup(store, settings=load_settings().related)
    try:
        ids = lookup.image_ids(options.split)
    except RelatedError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    if not ids:
        fail(f"no scene graph of split {options.split!r} was found", EXIT_BAD_INPUT)
    if image:
        try:
            check_images(StoreRelated(lookup, {options.split: ids}), options, image)
        except QuestionError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        return list(image)
    return ids[:images] if images is not None else ids


def _write_generated(
    provider: Any, options: Any, ids: list[str], workers: int, out: Path, quiet: bool
) -> None:
    """Generate for ``ids`` with a progress bar, write the JSONL and print a summary (stderr)."""
    from collections import Counter

    from covr.cli.progress import progress_bar
    from covr.questions.export import write_jsonl
    from covr.questions.generate import iter_examples as run
    from covr.questions.generate import spread_over
    from covr.questions.quota import FormQuota
    from covr.questions.templates import select_templates

    per_template: dict[str, int] = {}
    answers: dict[str, set[str]] = {}
    dropped: Counter[str] = Counter()
    options = spread_over(options, len(ids))
    quota = FormQuota.for_run(options)

    shown: Counter[str] = Counter()

    def counted(items: Iterator[Example]) -> Iterator[Example]:
        for ex in items:
            per_template[ex["template"]] = per_template.get(ex["template"], 0) + 1
            answers.setdefault(ex["utterance"], set()).add(repr(ex["answer"]))
            shown.update(set(ex["scenes"]))
            yield ex

    with progress_bar(quiet=quiet) as progress:
        task = progress.add_task("source images", total=len(ids))
        try:
            examples = run(
                provider,
                options,
                ids,
                workers=workers,
                progress=lambda k: progress.advance(task, k),
                dropped=dropped,
                quota=quota,
            )
            n = write_jsonl(counted(examples), out)
            forms = [t.name for t in select_templates(options.templates)]
            report = quota.report(forms, dropped)
            spread = quota.spread(shown, n)
            write_dropped(out, dropped, report, spread)
        except QuestionError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
    typer.echo(f"{n} examples from {len(ids)} images -> {out}", err=True)
    share = sum(len(a) >= 2 for a in answers.values()) / max(1, len(answers))
    typer.echo(f"texts with two answers: {share:.1%} of {len(answers)}", err=True)
    print_image_spread(spread)
    print_form_report(report)


def print_image_spread(spread: Mapping[str, Any]) -> None:
    """One line (stderr): the most-shown image, and whether the image share was held."""
    top, wanted = spread["most_shown"], spread["max_image_share"]
    line = f"most-shown image: {top['image']} in {top['examples']} examples ({top['share']:.1%})"
    if wanted is not None and not spread.get("applies", True):
        line += (
            f"; --max-image-share {wanted:g} does not apply: an even spread over these images, "
            "or over fewer source images than 1 / share, would pass it"
        )
    elif wanted is not None and not spread["held"]:
        line += (
            f"; --max-image-share {wanted:g} is not reachable on these images without keeping "
            "less than half of what the quota keeps (covr balance --max-image-share applies it "
            "to a release)"
        )
    typer.echo(line, err=True)


def print_form_report(report: Mapping[str, Any]) -> None:
    """Per form (stderr): examples made, wanted, and the main reasons candidates were dropped."""
    typer.echo(f"  {'form':28s} {'made':>6s} {'wanted':>6s}  main drop reasons", err=True)
    for name, row in sorted(report.items()):
        wanted = "-" if row["wanted"] is None else str(row["wanted"])
        reasons = sorted(row["dropped"].items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        why = ", ".join(f"{reason} {k}" for reason, k in reasons)
        typer.echo(f"  {name:28s} {row['made']:6d} {wanted:>6s}  {why}", err=True)


def _generate_from_store(
    options: Any,
    out: Path,
    images: int | None,
    image: list[str],
    workers: int | None,
    quiet: bool,
) -> None:
    """``covr generate`` (default ``--lookup store``): related and distractor images from the
    store's Cypher lookup with the classifiers, built as the service builds it
    (:func:`~covr.related.filters.serving_lookup`). Forked workers inherit the warmed lookup."""
    from covr.cli.common import store_session
    from covr.questions.generate import check_images
    from covr.related.api import RelatedError
    from covr.related.store_provider import StoreRelated

    settings = load_settings()
    with store_session() as store:
        lookup, _ = _serving_lookup(store, settings)
        try:
            ids = lookup.image_ids(options.split)
            if not ids:
                fail(_no_images(options.split, lookup.splits()), EXIT_BAD_INPUT)
        except RelatedError as exc:  # e.g. name statistics missing after an interrupted load
            fail(str(exc), EXIT_BAD_INPUT)
        provider = StoreRelated(lookup, {options.split: ids})
        if image:
            ids = list(image)
        elif images is not None:
            ids = ids[:images]
        try:
            check_images(provider, options, ids if image else [])
        except QuestionError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        provider.prepare()  # vocabularies and the model's per-term work, once, before any fork
        _write_generated(provider, options, ids, workers or settings.questions_workers, out, quiet)
        provider.remember()  # the model's pair scores, for the next run over this store


def _serving_lookup(store: Any, settings: Any) -> tuple[Any, bool]:
    """The service's lookup (:func:`~covr.related.filters.serving_lookup`) and whether it has
    the exclusivity model; a fallback to the word lists is said on stderr."""
    from covr.related.filters import RelatedLookups, serving_lookup

    lookup, missing = serving_lookup(RelatedLookups(store, settings.related, settings.models))
    if missing is not None:
        typer.echo(f"exclusivity model unavailable ({missing}); using the word lists", err=True)
    return lookup, missing is None


def _no_images(split: str, stored: list[str]) -> str:
    """Why the store path has nothing to generate from, and what to run (``stored``: the
    store's split names)."""
    load = f"covr load gqa FILE --split {split}, covr load samples, or covr quickstart"
    if not stored:
        return (
            f"the store holds no scene graph, so split {split!r} has no image: load data first "
            f"({load}); --lookup memory --gqa FILE generates from a file without the store"
        )
    return (
        f"the store holds no image of split {split!r} (its splits: {', '.join(stored)}): "
        f"load it ({load})"
    )


def sample_questions(
    store: Any, split: str, out: Path, *, shown: int = 3, images: Sequence[str] | None = None
) -> dict[str, Any]:
    """Questions for every stored image of ``split`` (or only ``images``: the quick start's
    samples, so other data in the store changes nothing) through the Cypher lookup with the
    configured classifiers (the quick start's last step); a summary with a few examples.

    Falls back to the reviewed word lists (and says so) when the exclusivity model cannot load,
    as ``covr generate`` and the service do (:func:`~covr.related.filters.serving_lookup`).
    """
    from covr.questions.export import write_jsonl
    from covr.questions.generate import GenerationOptions
    from covr.questions.generate import iter_examples as run
    from covr.related.store_provider import StoreRelated

    settings = load_settings()
    if images is None:
        ids = [s.image_id for s in _read_store_scenes(store, split)]
    else:
        ids = sorted(images)
    options = GenerationOptions.from_settings(
        settings.questions, settings.related, split=split, seed=0, templates=()
    )
    lookup, with_model = _serving_lookup(store, settings)
    exclusivity = settings.related_exclusivity if with_model else "resource"
    examples: list[Example] = []
    per_template: dict[str, int] = {}

    def kept(items: Iterator[Example]) -> Iterator[Example]:
        for ex in items:
            per_template[ex["template"]] = per_template.get(ex["template"], 0) + 1
            if len(examples) < shown and ex["template"] not in {e["template"] for e in examples}:
                examples.append(ex)
            yield ex

    n = write_jsonl(kept(run(StoreRelated(lookup, {split: ids}), options, ids)), out)
    return {
        "split": split,
        "source_images": len(ids),
        "exclusivity": exclusivity,
        "presence_filter": settings.related_presence,
        "examples": n,
        "file": str(out),
        "per_template": dict(sorted(per_template.items())),
        "samples": [
            {"utterance": e["utterance"], "answer": e["answer"], "scenes": e["scenes"]}
            for e in examples
        ],
    }


def balance(
    src: Path = typer.Argument(..., help="Generated examples (JSONL)."),
    dst: Path = typer.Argument(..., help="Balanced examples (JSONL)."),
    per_template: int | None = typer.Option(
        None,
        "--per-template",
        min=1,
        help="Examples per template (default: the smallest group, 2 at least).",
    ),
    by: str = typer.Option("template", "--by", help="template (19 forms) or paper_template (15)."),
    seed: int = typer.Option(0, "--seed", help="Tie-breaking seed."),
    max_image_share: float | None = typer.Option(
        None,
        "--max-image-share",
        help="No image in more than this share of the balanced examples (0 < share <= 1); "
        "default: no cap, and a warning when the most-shown image is in more than 5 %.",
    ),
) -> None:
    """De-duplicate and balance: equal count per template; two-answer questions
    first, then the least-seen answer and subgraph structure; no image over --max-image-share."""
    from collections import Counter

    from covr.questions.balance import IMAGE_SHARE_GOAL
    from covr.questions.balance import balance as run
    from covr.questions.export import read_jsonl, write_jsonl

    if by not in ("template", "paper_template"):
        fail("--by must be template or paper_template", EXIT_BAD_INPUT)
    try:
        examples = list(read_jsonl(src))
        result = run(
            examples, per_template=per_template, seed=seed, key=by, max_image_share=max_image_share
        )
    except QuestionError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    n = write_jsonl(result, dst)
    typer.echo(f"{len(examples)} -> {n} examples -> {dst}", err=True)
    shown = Counter(i for ex in result for i in set(ex["scenes"]))
    if shown and max_image_share is None:
        image, count = shown.most_common(1)[0]
        if count > IMAGE_SHARE_GOAL * n:
            typer.echo(
                f"warning: {image} is in {count / n:.1%} of the balanced examples (goal: at most "
                f"{IMAGE_SHARE_GOAL:.0%}); --max-image-share {IMAGE_SHARE_GOAL} caps every "
                "image, at the price of the examples that need it",
                err=True,
            )


EXPORT_FORMATS = ("jsonl", "parquet", "covr")


def export(
    src: Path = typer.Argument(..., help="Examples (JSONL)."),
    dst: Path = typer.Argument(..., help="Output file (jsonl, covr) or directory (parquet)."),
    fmt: str = typer.Option(
        "jsonl",
        "--format",
        help="jsonl (default: the canonical layout), parquet, or covr (the released COVR layout).",
    ),
    split: str | None = typer.Option(None, "--split", help="Split name (default: from examples)."),
    splits: list[Path] = typer.Option(
        [],
        "--splits",
        help="With --format covr: a program or lexical split folder (covr split) whose held-out "
        "examples get the marker program_N / lexical_N (repeatable; N counts each kind).",
    ),
) -> None:
    """Export examples: canonical JSONL, Parquet laid out for the Hugging Face Hub
    (DST/data/<split>-0000i-of-0000N.parquet and DST/README.md with dataset_info), or the
    released COVR dataset's layout (--format covr)."""
    from covr.questions.export import read_jsonl, write_jsonl
    from covr.questions.parquet import write_parquet

    if fmt not in EXPORT_FORMATS:
        fail(f"--format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}", EXIT_BAD_INPUT)
    if splits and fmt != "covr":
        fail("--splits goes with --format covr", EXIT_BAD_INPUT)
    try:
        examples = list(read_jsonl(src))
        if fmt == "covr":
            from covr.cli.export_covr import export_covr

            n = export_covr(examples, src, dst, splits)
            typer.echo(f"{n} examples -> {dst} (released COVR layout)", err=True)
            return
    except QuestionError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    if fmt == "jsonl":
        n = write_jsonl(examples, dst)
        typer.echo(f"{n} examples -> {dst}", err=True)
        return
    for path in write_parquet(examples, dst, split=split):
        typer.echo(str(path))


def dropped_path(examples: Path) -> Path:
    """Where ``covr generate`` records the dropped candidates of an examples file."""
    return examples.with_name(examples.name + ".dropped.json")


def write_dropped(
    examples: Path,
    dropped: Mapping[str, int],
    forms: Mapping[str, Any] | None = None,
    spread: Mapping[str, Any] | None = None,
) -> None:
    """Why candidates were not emitted (no distractor, a co-referring name, an execution
    failure, a repeat, no second answer), next to the examples: a file alone cannot say what it
    lacks. ``dropped``: the totals per reason (``form/reason`` keys are per form); ``forms``:
    per form, examples wanted, made and why dropped (:meth:`FormQuota.report`); ``spread``: the
    most-shown image against the image share (:func:`image_spread`)."""
    totals = {k: n for k, n in sorted(dropped.items()) if "/" not in k}
    record: dict[str, Any] = {"dropped": totals}
    if forms is not None:
        record["forms"] = dict(forms)
    if spread is not None:
        record["image_spread"] = dict(spread)
    dropped_path(examples).write_text(json.dumps(record, indent=1) + "\n")


def stats(
    src: Path = typer.Argument(..., help="Examples (JSONL)."),
    plots: Path | None = typer.Option(None, "--plots", help="Write PNG plots into this directory."),
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
) -> None:
    """Dataset statistics of an examples file: counts per template, answer and operator, with
    optional PNG charts."""
    from covr.questions.export import read_jsonl
    from covr.questions.stats import plots as draw
    from covr.questions.stats import table3

    try:
        examples = list(read_jsonl(src))
    except QuestionError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    table = table3(examples)
    if dropped_path(src).is_file():
        record = json.loads(dropped_path(src).read_text())
        table["dropped candidates"] = record["dropped"]
        if "forms" in record:  # per form: made / wanted, and the main reason candidates dropped
            table["per form (made / wanted: main drop reason)"] = {
                name: f"{row['made']} / {row['wanted'] or '-'}: "
                + ", ".join(
                    f"{r} {k}" for r, k in sorted(row["dropped"].items(), key=lambda kv: -kv[1])[:2]
                )
                for name, row in sorted(record["forms"].items())
            }
    if as_json:
        print_json(table)
    else:
        for key, value in table.items():
            if isinstance(value, dict):
                sys.stdout.write(f"{key}:\n")
                for name, count in value.items():
                    sys.stdout.write(f"  {name:28s} {count}\n")
            else:
                sys.stdout.write(f"{key:45s} {value}\n")
    if plots is not None:
        for path in draw(examples, plots):
            typer.echo(str(path), err=True)


def register(app: typer.Typer) -> None:
    app.command()(generate)
    app.command()(balance)
    app.command()(export)
    app.command()(stats)
