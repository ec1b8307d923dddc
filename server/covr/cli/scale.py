"""``covr generate --ray`` (the hand-off from ``covr generate``) and ``covr distractors``: batch
work sharded over a Ray cluster (docs/scale.md).

Exit codes: 0 done; 1 a shard failed past its retries or the store failed; 2 bad input (an
address no Ray cluster answers at, a shard count out of range, an unknown image, a bad line of
an input file).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, store_session
from covr.cli.related import PER_SIGNATURE_OPTION, POSITIVES_OPTION

if TYPE_CHECKING:
    from covr.questions.generate import GenerationOptions

RAY_HELP = (
    "Run on Ray: local (start Ray on this machine, COVR_RAY_CPUS), auto (the cluster this "
    "machine is a node of), HOST:PORT (a cluster's head) or ray://HOST:PORT (Ray Client)."
)
SHARDS_HELP = (
    "With --ray: shards of the source images, one Ray task each (default COVR_RAY_SHARDS)."
)
RESUME_HELP = "With --ray: reuse the parts of an earlier run whose checksums verify."
LOOKUPS = ("memory", "store")


def _say(quiet: bool) -> Any:
    def say(message: str) -> None:
        if not quiet:
            typer.echo(message, err=True)

    return say


def source_ids(
    store: Any, options: GenerationOptions, images: int | None, image: list[str]
) -> list[str]:
    """The source images of a run, in the order the single-process ``covr generate`` uses:
    the split's stored images in id order (the first ``images``), or the named ones."""
    from covr.questions.errors import QuestionError
    from covr.questions.generate import check_images
    from covr.related.api import RelatedError
    from covr.related.lookup import RelatedLookup
    from covr.related.store_provider import StoreRelated

    lookup = RelatedLookup(store, settings=load_settings())
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


def with_ray(command: Callable[..., None]) -> Callable[..., None]:
    """``covr generate`` with ``--ray ADDRESS``, ``--shards N`` and ``--resume`` added: without
    ``--ray`` the command runs as it is; with it the run goes to :func:`generate_on_ray`.

    Why a wrapper and not three more parameters: the generate command is at the function-size
    limit and owned by the question engine; the options and their hand-off live here, beside
    the module they hand off to."""
    hints = typing.get_type_hints(command)
    signature = inspect.signature(command)
    keyword = inspect.Parameter.KEYWORD_ONLY
    added = [
        inspect.Parameter(
            "ray", keyword, default=typer.Option(None, "--ray", metavar="ADDRESS", help=RAY_HELP)
        ),
        inspect.Parameter(
            "shards", keyword, default=typer.Option(None, "--shards", help=SHARDS_HELP)
        ),
        inspect.Parameter(
            "resume", keyword, default=typer.Option(False, "--resume", help=RESUME_HELP)
        ),
    ]
    types = {"ray": str | None, "shards": int | None, "resume": bool}

    @functools.wraps(command)
    def generate(
        *, ray: str | None = None, shards: int | None = None, resume: bool = False, **kwargs: Any
    ) -> None:
        if ray is None:
            if shards is not None or resume:
                fail("--shards and --resume go with --ray", EXIT_BAD_INPUT)
            command(**kwargs)
            return
        generate_on_ray(kwargs, ray, shards, resume)

    params = [
        p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()
    ]
    added = [p.replace(annotation=types[p.name]) for p in added]
    generate.__signature__ = signature.replace(parameters=[*params, *added])  # type: ignore[attr-defined]
    generate.__annotations__ = {**hints, **types}
    return generate


def _options(kwargs: dict[str, Any]) -> GenerationOptions:
    """The generation options of ``covr generate``'s arguments (as the command builds them)."""
    from covr.cli.questions import generation_options

    return generation_options(
        kwargs["split"],
        kwargs["seed"],
        kwargs["templates"],
        kwargs["per_template"],
        kwargs["single_answers"],
        kwargs["max_image_share"],
    )


def generate_on_ray(kwargs: dict[str, Any], address: str, shards: int | None, resume: bool) -> None:
    """``covr generate --ray ADDRESS`` (``kwargs``: the command's other arguments): shards on
    Ray, parts under ``OUT.parts/``, merged into ``OUT`` (the same bytes as without ``--ray``)
    with ``OUT.dropped.json`` beside it."""
    from covr.cli.questions import print_form_report, print_image_spread, write_dropped
    from covr.questions.generate import spread_over
    from covr.scale.cluster import ShardFailed
    from covr.scale.errors import ScaleError
    from covr.scale.generate import Run
    from covr.scale.generate import generate as run_generate

    if kwargs["gqa"] or kwargs["vg"] or kwargs["workers"]:
        fail(
            "--ray reads the store on every node; it excludes --gqa/--vg/--workers", EXIT_BAD_INPUT
        )
    if kwargs["images"] is not None and kwargs["image"]:
        fail("--images and --image exclude each other", EXIT_BAD_INPUT)
    if kwargs["lookup"] not in LOOKUPS:
        fail("--lookup must be memory or store", EXIT_BAD_INPUT)
    if shards is not None and shards < 1:
        fail(f"--shards must be >= 1, got {shards}", EXIT_BAD_INPUT)
    settings = load_settings()
    options = _options(kwargs)
    out: Path = kwargs["out"]
    with store_session() as store:
        ids = source_ids(store, options, kwargs["images"], kwargs["image"])
        options = spread_over(options, len(ids))
        run = Run(
            settings,
            options,
            kwargs["lookup"],
            tuple(ids),
            out,
            address,
            shards or settings.ray_shards,
            resume,
        )
        try:
            outcome = run_generate(run, _say(kwargs["quiet"]))
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


def distractors(
    images: Path | None = typer.Option(
        None,
        "--images",
        help='Requests, one a line: an image id, or {"image_id": ID, "subgraphs": [KEY, ...]}.',
    ),
    split: str | None = typer.Option(
        None,
        "--split",
        help="Every image of this split (without --images); related images only from it.",
    ),
    out: Path = typer.Option(..., "--out", help="Output: FILE.jsonl, or FILE.parquet."),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help=RAY_HELP),
    shards: int | None = typer.Option(None, "--shards", min=1, help=SHARDS_HELP),
    resume: bool = typer.Option(False, "--resume", help=RESUME_HELP),
    max_distance: int = typer.Option(2, "--max-distance", min=1, max=2, help="1 or 2."),
    per_signature: int | None = PER_SIGNATURE_OPTION,
    positives: int | None = POSITIVES_OPTION,
    max_subgraphs: int | None = typer.Option(
        None,
        "--max-subgraphs",
        min=1,
        help="Subgraphs per image without named ones (default: all).",
    ),
    seed: int = typer.Option(
        0, "--seed", min=0, help="Sampling seed (same seed + data, same file)."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No per-shard progress lines."),
) -> None:
    """Positives and edit-distance-1/2 distractors with their edit signatures for every subgraph
    of many images (or the subgraphs named per image): one row per image and subgraph, as JSONL
    or Parquet, in input order; sharded over Ray with --ray (the same bytes). See docs/scale.md.
    """
    from covr.related.lookup import RelatedLookup
    from covr.scale.cluster import ShardFailed
    from covr.scale.distractors import Batch, run
    from covr.scale.errors import ScaleError
    from covr.scale.tasks import RelatedOptions

    if images is None and split is None:
        fail("give --images FILE or --split S", EXIT_BAD_INPUT)
    if out.suffix not in (".jsonl", ".parquet"):
        fail(f"--out must end in .jsonl or .parquet, got {out.name!r}", EXIT_BAD_INPUT)
    if resume and ray is None:
        fail("--resume goes with --ray", EXIT_BAD_INPUT)
    settings = load_settings()
    options = RelatedOptions(
        split=split,
        max_distance=max_distance,
        per_signature=per_signature or settings.related_per_signature,
        positives=positives or settings.related_positives,
        max_subgraphs=max_subgraphs,
        seed=seed,
    )
    with store_session() as store:
        try:
            requests = _requests(RelatedLookup(store, settings=settings), images, split)
            batch = Batch(
                settings, tuple(requests), options, out, ray, shards or settings.ray_shards, resume
            )
            outcome = run(batch, _say(quiet), store)
        except ScaleError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        except ShardFailed as exc:
            fail(str(exc))
    typer.echo(f"{outcome.written} rows for {len(requests)} request(s) -> {out}", err=True)


def _requests(lookup: Any, images: Path | None, split: str | None) -> list[Any]:
    """The requests of ``--images FILE`` (checked against the store), else every image of
    ``--split``."""
    from covr.scale.distractors import Request, check_requests, read_requests

    if images is not None:
        requests = read_requests(images)
        check_requests(lookup, requests, str(images))
        return requests
    assert split is not None
    found = [Request(i) for i in lookup.image_ids(split)]
    if not found:
        fail(f"no scene graph of split {split!r} was found", EXIT_BAD_INPUT)
    return found


def register(app: typer.Typer) -> None:
    app.command()(distractors)
