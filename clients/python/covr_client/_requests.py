"""Request messages built from keyword arguments; shared by :class:`Client` and
:class:`AsyncClient` so the two cannot drift apart."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from covr_client._proto import evaluation_pb2, questions_pb2, related_pb2, store_pb2
from covr_client.types import (
    NodeType,
    PresenceQuery,
    SceneGraph,
    Subgraph,
    subgraph_ref,
    term_pair,
)


def import_stream(
    scene_graphs: Iterable[SceneGraph], *, strict: bool, dry_run: bool
) -> Iterator[store_pb2.ImportSceneGraphsRequest]:
    if strict or dry_run:
        yield store_pb2.ImportSceneGraphsRequest(
            options=store_pb2.ImportOptions(strict=strict, dry_run=dry_run)
        )
    for graph in scene_graphs:
        yield store_pb2.ImportSceneGraphsRequest(scene_graph=graph.to_proto())


def list_images(
    *, source: str | None, split: str | None, page_size: int, page_token: str, max_pages: int
) -> store_pb2.ListImagesRequest:
    return store_pb2.ListImagesRequest(
        source=source or "",
        split=split or "",
        page_size=page_size,
        page_token=page_token,
        max_pages=max_pages,
    )


def related(
    subgraph: Subgraph | str | None,
    *,
    image_id: str | None,
    split: str | None,
    seed: int,
    page_size: int,
    page_token: str,
    max_results: int,
    max_distance: int,
    per_signature_cap: int,
    positives: bool,
    distractors: bool,
    presence_filter: bool,
    max_subgraphs: int,
    exclusivity_model: bool = True,
) -> related_pb2.FindRelatedImagesRequest:
    if (subgraph is None) == (image_id is None):
        raise ValueError("give exactly one of subgraph or image_id")
    request = related_pb2.FindRelatedImagesRequest(
        split=split or "",
        seed=seed,
        page_size=page_size,
        page_token=page_token,
        max_results=max_results,
        max_distance=max_distance,
        per_signature_cap=per_signature_cap,
        exclude_positives=not positives,
        exclude_distractors=not distractors,
        skip_presence_filter=not presence_filter,
        skip_exclusivity_model=not exclusivity_model,
        max_subgraphs=max_subgraphs,
    )
    if subgraph is not None:
        request.subgraph.CopyFrom(subgraph_ref(subgraph))
    else:
        request.image_id = image_id or ""
    return request


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


def questions(
    *,
    image_id: str | None,
    subgraph: Subgraph | str | None,
    templates: Sequence[str],
    count: int,
    seed: int,
    split: str | None,
) -> questions_pb2.GenerateQuestionsRequest:
    if (subgraph is None) == (image_id is None):
        raise ValueError("give exactly one of image_id or subgraph")
    request = questions_pb2.GenerateQuestionsRequest(
        templates=list(templates), count=count, seed=seed, split=split or ""
    )
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
    *,
    train: Sequence[Mapping[str, Any] | str],
    iid: Sequence[Mapping[str, Any] | str],
    easiness: Mapping[str, float] | None,
    text_accuracy: float | None,
    iid_size_accuracy: float | None,
    lexical: bool,
    seed: int,
) -> evaluation_pb2.EvaluateRequest:
    request = evaluation_pb2.EvaluateRequest(
        gold_examples=[_example_text(e) for e in gold],
        predictions={str(q): json.dumps(a) for q, a in predictions.items()},
        train_examples=[_example_text(e) for e in train],
        iid_examples=[_example_text(e) for e in iid],
        easiness=dict(easiness or {}),
        lexical=lexical,
        seed=seed,
    )
    if text_accuracy is not None:
        request.text_accuracy = text_accuracy
    if iid_size_accuracy is not None:
        request.iid_size_accuracy = iid_size_accuracy
    return request
