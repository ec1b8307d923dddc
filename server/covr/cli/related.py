"""``covr subgraphs`` and ``covr related``: the subgraphs of a stored image and their related images.

Exit codes: 0 done; 1 the store failed; 2 bad input (unknown image id, a subgraph key that does
not parse or is not in the image, an argument out of range).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, print_json, store_session

if TYPE_CHECKING:  # the lookup (numpy, drivers, models) is imported by the commands that run
    from covr.related.lookup import RelatedResult
    from covr.scene.subgraph import Subgraph

IMAGE_HELP = "Image id as stored, e.g. gqa:2370799 or imsitu:stapling_1.jpg."
JSON_HELP = "Print JSON (shapes in docs/cli.md)."
# shared with `covr distractors` (covr.cli.scale), which asks the same lookup for many images
PER_SIGNATURE_OPTION = typer.Option(
    None,
    "--per-signature",
    min=1,
    help="Distractors per edit signature (default COVR_RELATED_PER_SIGNATURE).",
)
POSITIVES_OPTION = typer.Option(
    None, "--positives", min=1, help="Positive images (default COVR_RELATED_POSITIVES)."
)


def subgraph_json(g: Subgraph) -> dict[str, Any]:
    """A subgraph as the CLI prints it."""
    from covr.scene.text import describe, describe_short

    return {
        "key": g.key,
        "shape": g.shape,
        "shape_key": g.shape_key,
        "text": describe(g),
        "short": describe_short(g),
    }


def result_json(result: RelatedResult) -> dict[str, Any]:
    """One lookup result as the CLI prints it."""
    from covr.scene.text import describe

    return {
        "query": subgraph_json(result.query),
        "split": result.split,
        "seed": result.seed,
        "offset": result.offset,
        "next_offset": result.next_offset,
        "positives": list(result.positives),
        "distractors": [
            {
                "image_id": d.image_id,
                "signature": d.signature,
                "distance": d.distance,
                "subgraph": d.subgraph.key,
                "text": describe(d.subgraph),
                "alternatives": [a.key for a in d.alternatives],
            }
            for d in result.distractors
        ],
    }


def subgraphs(
    image_id: str = typer.Argument(..., help=IMAGE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """List the subgraphs of a stored image (COVR_SUBGRAPH_* options): key, shape and text."""
    from covr.related.lookup import RelatedError, RelatedLookup
    from covr.scene.text import describe

    settings = load_settings().related
    with store_session() as store:
        lookup = RelatedLookup(store, settings=settings)
        try:
            found = lookup.subgraphs_of_image(image_id)
        except RelatedError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
    if as_json:
        print_json({"image_id": image_id, "subgraphs": [subgraph_json(g) for g in found]})
        return
    typer.echo(f"{image_id}: {len(found)} subgraph(s)")
    for g in found:
        typer.echo(f"  {g.shape:<6} {g.key}  —  {describe(g)}")


def related(
    image_id: str = typer.Argument(..., help=IMAGE_HELP),
    subgraph: str | None = typer.Option(
        None, "--subgraph", help="Key of one subgraph of the image (see `covr subgraphs`)."
    ),
    max_distance: int = typer.Option(
        2, "--max-distance", min=1, max=2, help="Largest edit distance of distractors (1 or 2)."
    ),
    per_signature: int | None = PER_SIGNATURE_OPTION,
    positives: int | None = POSITIVES_OPTION,
    seed: int = typer.Option(0, "--seed", help="Sampling seed (same seed + data → same result)."),
    split: str | None = typer.Option(None, "--split", help="Only images of this split."),
    offset: int = typer.Option(0, "--offset", min=0, help="Skip this many per signature."),
    max_subgraphs: int = typer.Option(
        10, "--max-subgraphs", min=1, help="Without --subgraph: this many subgraphs of the image."
    ),
    exclusivity: str | None = typer.Option(
        None,
        "--exclusivity",
        help="Who decides which substitutions are exclusive: 'model' (ONNX classifier) or "
        "'resource' (reviewed word lists); default COVR_RELATED_EXCLUSIVITY.",
    ),
    presence: bool = typer.Option(
        True,
        "--presence/--no-presence",
        help="Drop distractors in which the presence model finds the subgraph probably present "
        "(only when COVR_RELATED_PRESENCE is on).",
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Positive and distractor images for one subgraph of an image (or its first subgraphs).

    Distractors contain the subgraph with 1 or 2 names replaced by mutually exclusive ones (and
    neither the subgraph nor an overlap-relaxed copy); each comes with its edit signature and the
    concrete subgraph found. See docs/related.md.
    """
    from covr.related.lookup import RelatedError
    from covr.scene.subgraph import SubgraphError

    settings = load_settings()
    if exclusivity not in (None, "model", "resource"):
        fail(f"--exclusivity must be 'model' or 'resource', got {exclusivity!r}", EXIT_BAD_INPUT)
    with store_session() as store:
        lookup = _lookup_for(store, settings, image_id, exclusivity)
        try:
            results = lookup.for_image(
                image_id,
                subgraph,
                max_subgraphs=max_subgraphs,
                split=split,
                max_distance=max_distance,
                per_signature=per_signature or settings.related_per_signature,
                positives_limit=positives or settings.related_positives,
                seed=seed,
                offset=offset,
                presence=presence,
            )
        except (RelatedError, SubgraphError) as exc:
            fail(str(exc), EXIT_BAD_INPUT)
    if as_json:
        print_json({"image_id": image_id, "results": [result_json(r) for r in results]})
        return
    _print_results(results)


def _lookup_for(store: Any, settings: Any, image_id: str, exclusivity: str | None) -> Any:
    """The configured lookup, after checking the image exists: an unknown image fails at once,
    before the classifiers are loaded (seconds with WordNet, ~1 s with the lexical table)."""
    from covr.models import ModelResourceError
    from covr.related.filters import build_lookup
    from covr.related.lookup import RelatedError, RelatedLookup

    try:
        RelatedLookup(store, settings=settings.related).scene_graph(image_id)
    except RelatedError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    try:
        return build_lookup(
            store,
            settings.related,
            settings.models,
            model=None if exclusivity is None else exclusivity == "model",
        )
    except ModelResourceError as exc:
        fail(f"{exc} (or use --exclusivity resource)", EXIT_BAD_INPUT)


def _print_results(results: list[RelatedResult]) -> None:
    from covr.scene.text import describe

    for result in results:
        typer.echo(f"{result.query.key}  —  {describe(result.query)}")
        typer.echo(f"  positives: {', '.join(result.positives) or '-'}")
        for d in result.distractors:
            typer.echo(f"  {d.signature:<28} {d.image_id}  {d.subgraph.key}")
        if not result.distractors:
            typer.echo("  no distractors")
