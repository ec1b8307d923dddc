"""ScoreExclusivity, ScorePresence and GetModelInfo: messages ↔ the models room's calls.

Only translation and field checks: the scores come from the ONNX models of
:mod:`covr.models` (through :class:`covr.service.rooms.Models`), whose own input errors name a
field of the models' call that is renamed here to the request field a client sent.
"""

from __future__ import annotations

import math
from typing import Any

from covr.models.errors import ModelInputError
from covr.related.exclusivity import EXCLUSIVE_THRESHOLD
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph
from covr.service import convert
from covr.service.errors import FieldViolation, InvalidArgument
from covr.v1 import related_pb2, scene_pb2

MAX_IMAGE_FEATURES = 65536
"""Longest optional image feature vector of a presence query."""

_NODE_TYPES: dict[int, str] = {
    scene_pb2.NODE_TYPE_OBJECT: "object",
    scene_pb2.NODE_TYPE_ATTRIBUTE: "attribute",
    scene_pb2.NODE_TYPE_RELATION: "relation",
    scene_pb2.NODE_TYPE_RELMOD: "relmod",
}


def model_ref(model: Any) -> related_pb2.ModelRef:
    """Which model answered: its name (from its metadata) and version."""
    return related_pb2.ModelRef(
        name=str(model.metadata.get("model_name", "")), version=model.version
    )


def exclusivity_pairs(request: related_pb2.ScoreExclusivityRequest) -> list[tuple[str, str, str]]:
    """The ``(node type, x, x')`` pairs of a request; every bad pair field is reported."""
    violations: list[FieldViolation] = []
    pairs: list[tuple[str, str, str]] = []
    for i, pair in enumerate(request.pairs):
        kind = _NODE_TYPES.get(pair.node_type)
        if kind is None:
            violations.append(
                FieldViolation(
                    f"pairs[{i}].node_type", "must be OBJECT, ATTRIBUTE, RELATION or RELMOD"
                )
            )
        violations += convert.check_text(pair.x, f"pairs[{i}].x")
        violations += convert.check_text(pair.x_prime, f"pairs[{i}].x_prime")
        pairs.append((kind or "object", pair.x, pair.x_prime))
    if violations:
        raise InvalidArgument(violations[: convert.MAX_VIOLATIONS])
    return pairs


def exclusivity_response(
    request: related_pb2.ScoreExclusivityRequest, model: Any, scores: Any
) -> related_pb2.ScoreExclusivityResponse:
    """The scores in request order, each with its pair and the exclusivity decision."""
    out = related_pb2.ScoreExclusivityResponse(
        threshold=EXCLUSIVE_THRESHOLD, model=model_ref(model)
    )
    for pair, score in zip(request.pairs, scores, strict=True):
        out.scores.add(pair=pair, score=float(score), exclusive=score > EXCLUSIVE_THRESHOLD)
    return out


def presence_subgraphs(request: related_pb2.ScorePresenceRequest) -> list[Subgraph]:
    """The subgraph of each presence query; every bad query field is reported."""
    violations: list[FieldViolation] = []
    subgraphs: list[Subgraph] = []
    for i, query in enumerate(request.queries):
        try:
            subgraphs.append(convert.subgraph_from_proto(query.subgraph, f"queries[{i}].subgraph"))
        except InvalidArgument as exc:
            violations += exc.violations
        violations += convert.check_text(query.image_id, f"queries[{i}].image_id")
        if len(query.image_features) > MAX_IMAGE_FEATURES:
            violations.append(FieldViolation(f"queries[{i}].image_features", "is too long"))
        elif not all(math.isfinite(v) for v in query.image_features):
            violations.append(
                FieldViolation(f"queries[{i}].image_features", "must be finite numbers")
            )
    if violations:
        raise InvalidArgument(violations[: convert.MAX_VIOLATIONS])
    return subgraphs


def presence_scores(
    model: Any,
    request: related_pb2.ScorePresenceRequest,
    subgraphs: list[Subgraph],
    scenes: dict[str, SceneGraph],
) -> list[float]:
    """The model's scores; its input errors name the request's field (``queries[i]...``)."""
    items = [
        (g, scenes[query.image_id], list(query.image_features) or None)
        for query, g in zip(request.queries, subgraphs, strict=True)
    ]
    try:
        return [float(s) for s in model.score_batch(items)]
    except ModelInputError as exc:
        field = exc.field.replace("items[", "queries[", 1).replace(".features", ".image_features")
        raise InvalidArgument.field(field, exc.message) from exc


def presence_response(
    model: Any,
    request: related_pb2.ScorePresenceRequest,
    subgraphs: list[Subgraph],
    scores: list[float],
) -> related_pb2.ScorePresenceResponse:
    """The scores in request order, each with its image and subgraph key."""
    out = related_pb2.ScorePresenceResponse(model=model_ref(model))
    for query, g, score in zip(request.queries, subgraphs, scores, strict=True):
        out.scores.add(image_id=query.image_id, subgraph_key=g.key, score=score)
    return out


def model_info_response(entries: list[dict[str, Any]]) -> related_pb2.GetModelInfoResponse:
    """The served models' names, versions, files, metadata and tensor shapes."""
    out = related_pb2.GetModelInfoResponse()
    for entry in entries:
        info = out.models.add(
            name=entry["name"],
            version=entry["version"],
            kind=entry["kind"],
            path=entry["path"],
            sha256=entry["sha256"],
        )
        info.metadata.update(entry["metadata"])
        for name, shape in entry["inputs"]:
            info.inputs.add(name=name, type="float32", shape=shape)
        for name, shape in entry["outputs"]:
            info.outputs.add(name=name, type="float32", shape=shape)
    return out
