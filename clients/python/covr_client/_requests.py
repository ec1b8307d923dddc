"""Request messages built from keyword arguments, and the keyword options of the RPCs that
take many; shared by :class:`Client` and :class:`AsyncClient` so the two cannot drift apart.

The option sets are ``TypedDict`` s: each client method takes ``**options: Unpack[...]``, so the
names and types of the options are declared once (here) and type checkers and editors still see
every one. Defaults are applied here, by the builders.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypedDict, Unpack

from covr_client._proto import (
    evaluation_pb2,
    questions_pb2,
    related_pb2,
    store_pb2,
    wire_pb2,
)
from covr_client._rpcs import SERVICE_NAME
from covr_client.types import (
    BatchItem,
    NodeType,
    PresenceQuery,
    SceneGraph,
    Subgraph,
    subgraph_ref,
    term_pair,
)


class ListImagesOptions(TypedDict, total=False):
    """Options of ``list_images``: ``source``/``split`` narrow the listing (default: all),
    ``page_size`` is the ids per response message (0 = the server's default)."""

    source: str | None
    split: str | None
    page_size: int


class RelatedOptions(TypedDict, total=False):
    """Options of ``find_related_images`` (all optional).

    ``image_id`` instead of a subgraph: the related images of each subgraph of that image (up to
    ``max_subgraphs``). ``split``: images of that split only. ``seed``: the seeded order of
    candidates. ``page_size``/``page_token``: paging (0 = the server's default page).
    ``max_results``: stop after this many distractors per subgraph (0 = all). ``max_distance``:
    1 or 2 substitutions (0 = 2). ``per_signature_cap``: distractors per edit signature.
    ``positives``/``distractors``: which kinds to return (default both). ``presence_filter=False``
    keeps distractors the presence model would drop; ``exclusivity_model=False`` scores
    substitutions with the reviewed word lists instead of the ONNX exclusivity model.
    """

    image_id: str | None
    split: str | None
    seed: int
    page_size: int
    page_token: str
    max_results: int
    max_distance: int
    per_signature_cap: int
    positives: bool
    distractors: bool
    presence_filter: bool
    exclusivity_model: bool
    max_subgraphs: int


class BatchOptions(TypedDict, total=False):
    """Options of ``find_related_images_batch``, the same for every image (all optional):
    ``split`` (related images of that split only), ``seed``, ``max_distance`` (1 or 2; 0 = 2),
    ``per_signature_cap`` (distractors per edit signature; 0 = the server's default),
    ``max_positives`` (positives per subgraph, the image first; 0 = the server's default),
    ``max_subgraphs`` (per image without named subgraphs; 0 = the server's cap),
    ``presence_filter=False`` and ``exclusivity_model=False`` as for ``find_related_images``.
    """

    split: str | None
    seed: int
    max_distance: int
    per_signature_cap: int
    max_positives: int
    max_subgraphs: int
    presence_filter: bool
    exclusivity_model: bool


class QuestionOptions(TypedDict, total=False):
    """Options of ``generate_questions``: exactly one of ``image_id`` (questions about its
    subgraphs) or ``subgraph`` (a key or parts: questions about it; the source image is a
    seeded choice among the stored images of ``split`` that contain it, of any split when
    ``split`` is ``None``); ``templates`` (default all), ``count`` (0 = the server's default
    page), ``seed``, ``split``.

    ``per_template``: keep at most about this many examples of each form and stop filling a
    form once it has them (a text's two answers stay together: a form may get one more), as
    ``covr generate --per-template N``; 0 (default) = no quota. ``max_image_share``: no image in
    more than this share of the examples, as ``covr generate --max-image-share``; ``None``, 0
    or 1 (default ``None``) = no cap. With either, the stream's ``summary`` says per form what
    was wanted, made and dropped (:class:`covr_client.GenerationSummary`)."""

    image_id: str | None
    subgraph: Subgraph | str | None
    templates: Sequence[str]
    count: int
    seed: int
    split: str | None
    per_template: int
    max_image_share: float | None


class EvaluateOptions(TypedDict, total=False):
    """Options of ``evaluate``: ``train``/``iid`` examples (for MAJTEMPL and the generalization
    score), per-example ``easiness`` (for the easiness AUC), the ``text_accuracy`` and
    ``iid_size_accuracy`` of reference models, ``lexical`` (a lexical split) and ``seed``."""

    train: Sequence[Mapping[str, Any] | str]
    iid: Sequence[Mapping[str, Any] | str]
    easiness: Mapping[str, float] | None
    text_accuracy: float | None
    iid_size_accuracy: float | None
    lexical: bool
    seed: int


def health() -> wire_pb2.HealthRequest:
    return wire_pb2.HealthRequest(service=SERVICE_NAME)


def get_scene_graph(image_id: str) -> store_pb2.GetSceneGraphRequest:
    return store_pb2.GetSceneGraphRequest(image_id=image_id)


def list_subgraphs(image_id: str, max_subgraphs: int) -> store_pb2.ListSubgraphsRequest:
    return store_pb2.ListSubgraphsRequest(image_id=image_id, max_subgraphs=max_subgraphs)


def statistics() -> store_pb2.GetStatisticsRequest:
    return store_pb2.GetStatisticsRequest()


def model_info() -> related_pb2.GetModelInfoRequest:
    return related_pb2.GetModelInfoRequest()


def import_stream(
    scene_graphs: Iterable[SceneGraph], *, strict: bool, dry_run: bool
) -> Iterator[store_pb2.ImportSceneGraphsRequest]:
    if strict or dry_run:
        yield store_pb2.ImportSceneGraphsRequest(
            options=store_pb2.ImportOptions(strict=strict, dry_run=dry_run)
        )
    for graph in scene_graphs:
        yield store_pb2.ImportSceneGraphsRequest(scene_graph=graph.to_proto())


def list_images(**options: Unpack[ListImagesOptions]) -> store_pb2.ListImagesRequest:
    return store_pb2.ListImagesRequest(
        source=options.get("source") or "",
        split=options.get("split") or "",
        page_size=options.get("page_size", 0),
    )


def related(
    subgraph: Subgraph | str | None, **options: Unpack[RelatedOptions]
) -> related_pb2.FindRelatedImagesRequest:
    image_id = options.get("image_id")
    if (subgraph is None) == (image_id is None):
        raise ValueError("give exactly one of subgraph or image_id")
    request = related_pb2.FindRelatedImagesRequest(
        split=options.get("split") or "",
        seed=options.get("seed", 0),
        page_size=options.get("page_size", 0),
        page_token=options.get("page_token", ""),
        max_results=options.get("max_results", 0),
        max_distance=options.get("max_distance", 0),
        per_signature_cap=options.get("per_signature_cap", 0),
        exclude_positives=not options.get("positives", True),
        exclude_distractors=not options.get("distractors", True),
        skip_presence_filter=not options.get("presence_filter", True),
        skip_exclusivity_model=not options.get("exclusivity_model", True),
        max_subgraphs=options.get("max_subgraphs", 0),
    )
    if subgraph is not None:
        request.subgraph.CopyFrom(subgraph_ref(subgraph))
    else:
        request.image_id = image_id or ""
    return request


def batch_item(
    item: BatchItem | str, **options: Unpack[BatchOptions]
) -> related_pb2.FindRelatedImagesBatchRequest:
    """The message of one image of a batch (the options repeat on every message)."""
    entry = BatchItem.of(item)
    return related_pb2.FindRelatedImagesBatchRequest(
        image_id=entry.image_id,
        subgraphs=list(entry.subgraphs),
        tag=entry.tag,
        split=options.get("split") or "",
        seed=options.get("seed", 0),
        max_distance=options.get("max_distance", 0),
        per_signature_cap=options.get("per_signature_cap", 0),
        max_positives=options.get("max_positives", 0),
        max_subgraphs=options.get("max_subgraphs", 0),
        skip_presence_filter=not options.get("presence_filter", True),
        skip_exclusivity_model=not options.get("exclusivity_model", True),
    )


def batch(
    items: Iterable[BatchItem | str], **options: Unpack[BatchOptions]
) -> Iterator[related_pb2.FindRelatedImagesBatchRequest]:
    """The request messages of a batch, built one by one as gRPC asks for the next: a
    generator of many ids is never held in memory."""
    for item in items:
        yield batch_item(item, **options)


async def batch_async(
    items: AsyncIterable[BatchItem | str], **options: Unpack[BatchOptions]
) -> AsyncIterator[related_pb2.FindRelatedImagesBatchRequest]:
    """:func:`batch` for an async iterable of items (the async client)."""
    async for item in items:
        yield batch_item(item, **options)


def exclusivity(
    pairs: Sequence[tuple[NodeType, str, str]],
) -> related_pb2.ScoreExclusivityRequest:
    return related_pb2.ScoreExclusivityRequest(pairs=[term_pair(t, x, y) for t, x, y in pairs])


def presence(queries: Sequence[PresenceQuery]) -> related_pb2.ScorePresenceRequest:
    return related_pb2.ScorePresenceRequest(
        queries=[
            related_pb2.PresenceQuery(
                subgraph=subgraph_ref(q.subgraph),
                image_id=q.image_id,
                image_features=list(q.image_features),
            )
            for q in queries
        ]
    )


def questions(**options: Unpack[QuestionOptions]) -> questions_pb2.GenerateQuestionsRequest:
    subgraph, image_id = options.get("subgraph"), options.get("image_id")
    if (subgraph is None) == (image_id is None):
        raise ValueError("give exactly one of image_id or subgraph")
    request = questions_pb2.GenerateQuestionsRequest(
        templates=list(options.get("templates", ())),
        count=options.get("count", 0),
        seed=options.get("seed", 0),
        split=options.get("split") or "",
        max_image_share=options.get("max_image_share") or 0.0,
    )
    per_template = options.get("per_template", 0)
    if per_template < 0:  # the field is unsigned: say which option, not "value out of range"
        raise ValueError(f"per_template must be >= 0 (0 = no quota), got {per_template}")
    request.per_template = per_template
    if subgraph is not None:
        request.subgraph.CopyFrom(subgraph_ref(subgraph))
    else:
        request.image_id = image_id or ""
    return request


def _example_text(example: Mapping[str, Any] | str) -> str:
    return example if isinstance(example, str) else json.dumps(example, sort_keys=True)


def evaluation(
    gold: Sequence[Mapping[str, Any] | str],
    predictions: Mapping[str, Any],
    **options: Unpack[EvaluateOptions],
) -> evaluation_pb2.EvaluateRequest:
    request = evaluation_pb2.EvaluateRequest(
        gold_examples=[_example_text(e) for e in gold],
        predictions={str(q): json.dumps(a) for q, a in predictions.items()},
        train_examples=[_example_text(e) for e in options.get("train", ())],
        iid_examples=[_example_text(e) for e in options.get("iid", ())],
        easiness=dict(options.get("easiness") or {}),
        lexical=options.get("lexical", False),
        seed=options.get("seed", 0),
    )
    text_accuracy = options.get("text_accuracy")
    if text_accuracy is not None:
        request.text_accuracy = text_accuracy
    iid_size_accuracy = options.get("iid_size_accuracy")
    if iid_size_accuracy is not None:
        request.iid_size_accuracy = iid_size_accuracy
    return request
