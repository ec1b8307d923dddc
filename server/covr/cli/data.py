"""``covr load gqa|imsitu|vg``, ``covr show`` and ``covr synth``: data in and out of the store.

Exit codes: 0 loaded (skipped records, if any, are listed); 1 the store failed; 2 bad input (a
file that cannot be read at all, a ``--strict`` load with bad records, an unknown image id).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, print_json, store_session

if TYPE_CHECKING:  # the loaders and the graph room are imported lazily: `covr --help` stays fast
    from covr.graph import GraphStore
    from covr.scene.model import SceneGraph
    from covr_loaders.config import LoadSettings
    from covr_loaders.writer import LoadJob, LoadSummary

load_app = typer.Typer(
    help="Load scene graphs (GQA, imSitu, Visual Genome) into the store: streamed, batched, "
    "idempotent (loading a file twice changes nothing) and resumable (--resume).",
    no_args_is_help=True,
)

SPLIT_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
"""What a split name may be (``--split``; ``covr build --gqa-split`` / ``--vg-split``)."""
_KNOWN_SPLITS = ("train", "val", "test", "dev", "testdev", "challenge")

PATHS_HELP = "Input file(s); read one after the other."
SPLIT_HELP = "Split stored on each image (train, val, test, dev, ...); default: from the file name."
LIMIT_HELP = "Stop after N valid images."
RESUME_HELP = "Continue an interrupted load of the same files from its last checkpoint."
DRY_RUN_HELP = "Read and check everything, write nothing."
STRICT_HELP = "Fail (exit 2, nothing written) if any record is bad, instead of skipping it."
JSON_HELP = "Print the summary as JSON."
QUIET_HELP = "No progress bar."


def split_of_file(path: Path) -> str | None:
    """The split a dataset file's name tells (``train_sceneGraphs.json``: train), if any."""
    stem = path.name.lower()
    for known in _KNOWN_SPLITS:
        if stem == f"{known}.json" or stem.startswith(f"{known}_"):
            return known
    return None


def _split(split: str | None, paths: list[Path]) -> str:
    if split is None:
        for path in paths:
            if (known := split_of_file(path)) is not None:
                return known
        fail("cannot tell the split from the file name; pass --split", EXIT_BAD_INPUT)
    if not SPLIT_NAME.match(split):
        fail(
            f"--split {split!r}: use a short lower-case name such as train, val or test",
            EXIT_BAD_INPUT,
        )
    return split


def _run(
    build: Callable[[LoadSettings], LoadJob],
    *,
    limit: int | None,
    resume: bool,
    dry_run: bool,
    strict: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Build the job (file checks), then validate or load it, and report."""
    from covr_loaders.errors import InputFileError, LoadFailed
    from covr_loaders.progress import NullReporter, Reporter, RichReporter
    from covr_loaders.writer import run_load, validate_only

    settings = load_settings().load
    try:
        job = build(settings)
        if dry_run:
            summary = validate_only(job, limit=limit)
            if strict and summary.skipped:
                raise LoadFailed(summary.problems)
        else:
            reporter: Reporter = NullReporter() if quiet or as_json else RichReporter()
            with store_session() as store:
                store.apply_schema()
                summary = run_load(
                    store,
                    job,
                    data_dir=settings.data_dir,
                    batch_images=settings.load_batch_images,
                    writers=settings.load_writers,
                    limit=limit,
                    resume=resume,
                    strict=strict,
                    reporter=reporter,
                )
    except InputFileError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    except LoadFailed as exc:
        for problem in exc.problems[:20]:
            typer.echo(f"  {problem}", err=True)
        fail(f"--strict: {exc}; nothing was written", EXIT_BAD_INPUT)
    if as_json:
        print_json(summary.as_dict())
    else:
        _print_summary(summary)
    if summary.images == 0 and summary.skipped:
        fail("no valid image could be read from the input", EXIT_BAD_INPUT)


def _print_summary(summary: LoadSummary, *, err: bool = False) -> None:
    """The load's summary lines (on stderr with ``err``: a command whose stdout is JSON)."""
    from covr_loaders.writer import problem_lines

    verb = "checked (dry run)" if summary.dry_run else "loaded"
    typer.echo(
        f"{summary.source} {summary.split}: {verb} {summary.images:,} images, "
        f"{summary.objects:,} objects, {summary.attributes:,} attributes, "
        f"{summary.relations:,} relations, {summary.relmods:,} rel-mods "
        f"in {summary.seconds:.1f} s ({summary.images_per_s:,.0f} images/s)",
        err=err,
    )
    if not summary.dry_run:
        typer.echo(
            f"  written: {summary.images_written:,} images in {summary.batches_written} batches"
            f" ({summary.nodes_created:,} nodes, {summary.relationships_created:,} "
            f"relationships); already there after a resume: {summary.batches_resumed} batches",
            err=err,
        )
    if summary.skipped:
        typer.echo(f"  skipped {summary.skipped:,} record(s):", err=True)
        for reason, count in summary.skipped_by_reason.items():
            typer.echo(f"    {count:>6,} × {reason}", err=True)
        for line in problem_lines(summary):
            typer.echo(f"    {line}", err=True)


@load_app.command("gqa")
def load_gqa(
    paths: list[Path] = typer.Argument(..., help=f"GQA *_sceneGraphs.json. {PATHS_HELP}"),
    split: str | None = typer.Option(None, "--split", help=SPLIT_HELP),
    limit: int | None = typer.Option(None, "--limit", min=1, help=LIMIT_HELP),
    resume: bool = typer.Option(False, "--resume", help=RESUME_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Load GQA scene graphs ({train,val}_sceneGraphs.json), streamed record by record."""
    from covr_loaders.jobs import gqa_job

    the_split = _split(split, paths)
    _run(
        lambda s: gqa_job(paths, the_split, s),
        limit=limit,
        resume=resume,
        dry_run=dry_run,
        strict=strict,
        as_json=as_json,
        quiet=quiet,
    )


@load_app.command("imsitu")
def load_imsitu(
    paths: list[Path] = typer.Argument(..., help=f"imSitu {{train,dev,test}}.json. {PATHS_HELP}"),
    space: Path = typer.Option(..., "--space", help="imsitu_space.json (verbs and nouns)."),
    templates: Path | None = typer.Option(
        None,
        "--templates",
        help="Verb sentence templates (verb<TAB>AGENT staples ITEM onto SURFACE ...); default: "
        "COVR_LOAD_IMSITU_TEMPLATES or the bundled file, then the space file's abstracts.",
    ),
    nouns: Path | None = typer.Option(
        None, "--nouns", help="Extra noun table (id<TAB>gloss) for ids missing from --space."
    ),
    split: str | None = typer.Option(None, "--split", help=SPLIT_HELP),
    limit: int | None = typer.Option(None, "--limit", min=1, help=LIMIT_HELP),
    resume: bool = typer.Option(False, "--resume", help=RESUME_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Load imSitu situations: subject, verb relation, and every later role as a rel-mod."""
    from covr_loaders.jobs import imsitu_job

    the_split = _split(split, paths)
    _run(
        lambda s: imsitu_job(paths, the_split, s, space=space, templates=templates, nouns=nouns),
        limit=limit,
        resume=resume,
        dry_run=dry_run,
        strict=strict,
        as_json=as_json,
        quiet=quiet,
    )


@load_app.command("vg")
def load_vg(
    paths: list[Path] = typer.Argument(
        ...,
        help="Visual Genome scene_graphs.json, or objects.json with attributes.json and/or "
        "relationships.json (merged image by image).",
    ),
    split: str | None = typer.Option(None, "--split", help=SPLIT_HELP),
    limit: int | None = typer.Option(None, "--limit", min=1, help=LIMIT_HELP),
    resume: bool = typer.Option(False, "--resume", help=RESUME_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Load Visual Genome scene graphs (names, attributes and predicates normalized)."""
    from covr_loaders.jobs import vg_job

    the_split = split or "train"
    _split(the_split, paths)
    _run(
        lambda s: vg_job(paths, the_split, s),
        limit=limit,
        resume=resume,
        dry_run=dry_run,
        strict=strict,
        as_json=as_json,
        quiet=quiet,
    )


@load_app.command("samples")
def load_samples(
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Load the small sample files bundled with the loaders (GQA, imSitu, VG)."""
    from covr_loaders.samples import load_bundled_samples

    settings = load_settings()
    with store_session() as store:
        store.apply_schema()
        summaries = load_bundled_samples(store, settings.load)
    if as_json:
        print_json({k: v.as_dict() for k, v in summaries.items()})
    else:
        for summary in summaries.values():
            _print_summary(summary)


def load_samples_if_empty(store: GraphStore) -> None:
    """Load the bundled sample data when the store holds no image yet (``covr serve``);
    messages on stderr, so stdout stays the command's own output."""
    from covr.graph import catalog
    from covr_loaders.samples import load_bundled_samples

    if store.read(catalog.get("load/any_image")):
        typer.echo("store already holds images; samples not loaded again", err=True)
        return
    for summary in load_bundled_samples(store, load_settings().load).values():
        _print_summary(summary, err=True)


def load_samples_unless_present(store: GraphStore) -> list[str]:
    """Load the bundled sample data unless the store already holds the samples' val images
    (``covr quickstart``); return those images' ids. Other data in the store is left alone
    (and not asked about). Messages go to stderr: the quick start's stdout is its JSON."""
    from covr_loaders.readback import get_scene_graphs
    from covr_loaders.samples import load_bundled_samples, sample_val_images

    ids = sample_val_images()
    if len(get_scene_graphs(store, ids)) == len(ids):
        typer.echo("the store already holds the samples; not loaded again", err=True)
        return ids
    for summary in load_bundled_samples(store, load_settings().load).values():
        _print_summary(summary, err=True)
    return ids


def render_text(graph: SceneGraph) -> str:
    """A scene graph as readable text: objects with attributes and boxes, then relations."""
    facts = [graph.source, f"split {graph.split}"]
    if graph.width is not None and graph.height is not None:
        facts.append(f"{graph.width}×{graph.height}")
    facts += [f"{k}={v}" for k, v in graph.extras.items()]
    lines = [f"{graph.image_id}  ({', '.join(facts)})", f"objects ({len(graph.objects)}):"]
    names = {o.id: f"{o.name}#{o.id}" for o in graph.objects}
    for obj in graph.objects:
        attrs = f" [{', '.join(obj.attributes)}]" if obj.attributes else ""
        box = ""
        if obj.box is not None:
            box = f"  at {obj.box.x},{obj.box.y} size {obj.box.w}×{obj.box.h}"
        more = f"  also: {', '.join(obj.names)}" if obj.names else ""
        lines.append(f"  {obj.id}: {obj.name}{attrs}{box}{more}")
    lines.append(f"relations ({len(graph.relations)}):")
    for rel in graph.relations:
        mods = "".join(f", {m.name} {names[m.object]}" for m in rel.mods)
        lines.append(f"  {names[rel.subject]} --{rel.name}--> {names[rel.object]}{mods}")
    return "\n".join(lines)


def show(
    image_id: str = typer.Argument(
        ...,
        help="Image id as stored, e.g. gqa:2370799, vg:1, imsitu:stapling_1.jpg; a bare "
        "original id is looked up in every source.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print JSON in the shape of a GQA scene-graph record."
    ),
) -> None:
    """Print one stored scene graph as text (or JSON), exactly as it was loaded."""
    from covr.scene.model import to_gqa_dict
    from covr_loaders.readback import get_scene_graph

    with store_session() as store:
        graph = get_scene_graph(store, image_id)
        if graph is None and ":" not in image_id:
            found = [
                g
                for source in ("gqa", "vg", "imsitu")
                if (g := get_scene_graph(store, f"{source}:{image_id}")) is not None
            ]
            if len(found) > 1:
                fail(
                    f"{image_id!r} exists in several sources: "
                    + ", ".join(g.image_id for g in found),
                    EXIT_BAD_INPUT,
                )
            graph = found[0] if found else None
    if graph is None:
        fail(f"no image {image_id!r} in the store", EXIT_BAD_INPUT)
    if as_json:
        print_json(to_gqa_dict(graph))
    else:
        typer.echo(render_text(graph))


def synth(
    images: int = typer.Option(..., "--images", min=1, help="Number of images to generate."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed → same files)."),
    fmt: str = typer.Option("gqa", "--format", help="gqa, imsitu or vg."),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Output file; for imsitu, imsitu_space.json and "
        "generation_templates.tab are written beside it.",
    ),
    split: str = typer.Option("train", "--split", help="Split named in imSitu/VG ids."),
) -> None:
    """Write synthetic scene graphs with GQA-like vocabulary and Zipf-like frequencies."""
    from covr_loaders import synthetic

    if fmt not in synthetic.FORMATS:
        fail(f"--format must be one of {', '.join(synthetic.FORMATS)}", EXIT_BAD_INPUT)
    written = synthetic.write(fmt, out, images=images, seed=seed, split=split)
    for path in written:
        typer.echo(str(path))
