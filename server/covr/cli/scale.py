"""``covr distractors``: batch distractors sharded over a Ray cluster (docs/scale.md), and the
``--ray``/``--shards``/``--resume`` options it shares with ``covr generate`` (whose Ray path is
in :mod:`covr.cli.questions`, beside the rest of that command).

Exit codes: 0 done; 1 a shard failed past its retries or the store failed; 2 bad input (an
address no Ray cluster answers at, a shard count out of range, an unknown image, a bad line of
an input file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, say_unless, store_session
from covr.cli.related import PER_SIGNATURE_OPTION, POSITIVES_OPTION

RAY_HELP = (
    "Run on Ray: local (start Ray on this machine, COVR_RAY_CPUS), auto (the cluster this "
    "machine is a node of), HOST:PORT (a cluster's head) or ray://HOST:PORT (Ray Client)."
)
SHARDS_HELP = (
    "With --ray: shards of the source images, one Ray task each (default COVR_RAY_SHARDS)."
)
RESUME_HELP = "With --ray: reuse the parts of an earlier run whose checksums verify."


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
            requests = _requests(RelatedLookup(store, settings=settings.related), images, split)
            shards = shards or settings.ray_shards
            batch = Batch(settings.tasks, tuple(requests), options, out, ray, shards, resume)
            outcome = run(batch, say_unless(quiet), store)
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
