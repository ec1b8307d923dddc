"""Every RPC of ``covr.v1.CovrService`` described once, for both clients.

A description says which stub method to call, whether the call may be retried (idempotent),
whether the answer is a stream, and how a response becomes the SDK's typed result. The request
builders are in :mod:`covr_client._requests`. :class:`covr_client.Client` and
:class:`covr_client.AsyncClient` each have one generic call (``_unary``) and one generic stream
(``_stream``) that run any description with the deadline, metadata, retry policy and error
translation; their public methods only name the description and build the request. A new RPC
is one description here, one builder there, and a one-line method in each client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from covr_client._proto import related_pb2, store_pb2, wire_pb2
from covr_client.types import (
    BatchResult,
    Evaluation,
    Example,
    ExclusivityScore,
    ImportResult,
    ModelInfo,
    PresenceScore,
    RelatedPage,
    SceneGraph,
    Statistics,
    Subgraph,
    exclusivity_from_proto,
)
from covr_client.types_questions import SummaryBox

T = TypeVar("T")

HEALTH_CHECK = "/grpc.health.v1.Health/Check"
SERVICE_NAME = "covr.v1.CovrService"


@dataclass(frozen=True)
class Unary(Generic[T]):
    """A call with one response; ``result`` turns it into what the client method returns."""

    method: str
    result: Callable[[Any], T]
    idempotent: bool = True


@dataclass(frozen=True)
class Stream(Generic[T]):
    """A server-streaming call; ``items`` turns each response into the values the client
    method yields (a page of ids becomes the ids). Only a stream that has not yielded yet is
    retried, so the caller never sees a value twice."""

    method: str
    items: Callable[[Any], Iterable[T]]
    idempotent: bool = True
    """False for a client stream (its request iterator cannot be replayed): never retried."""


def _health(response: wire_pb2.HealthResponse) -> bool:
    return bool(response.status == 1)  # SERVING


def _presence(response: related_pb2.ScorePresenceResponse) -> list[PresenceScore]:
    return [PresenceScore(s.image_id, s.subgraph_key, s.score) for s in response.scores]


def _subgraphs(response: store_pb2.ListSubgraphsResponse) -> list[Subgraph]:
    return [Subgraph.from_proto(s) for s in response.subgraphs]


def _models(response: related_pb2.GetModelInfoResponse) -> list[ModelInfo]:
    return [ModelInfo.from_proto(m) for m in response.models]


HEALTH = Unary[bool]("Health", _health)
"""The gRPC health check of the service (not a CovrService method: see ``ClientCore``)."""
IMPORT_SCENE_GRAPHS = Unary[ImportResult](
    "ImportSceneGraphs", ImportResult.from_proto, idempotent=False
)
"""Not retried: the request iterator cannot be replayed (re-importing is safe, though)."""
GET_SCENE_GRAPH = Unary[SceneGraph]("GetSceneGraph", lambda r: SceneGraph.from_proto(r.scene_graph))
LIST_IMAGES = Stream[str]("ListImages", lambda page: page.image_ids)
LIST_SUBGRAPHS = Unary[list[Subgraph]]("ListSubgraphs", _subgraphs)
STATISTICS = Unary[Statistics]("GetStatistics", Statistics.from_proto)
FIND_RELATED_IMAGES = Stream[RelatedPage](
    "FindRelatedImages", lambda page: [RelatedPage.from_proto(page)]
)
FIND_RELATED_IMAGES_BATCH = Stream[BatchResult](
    "FindRelatedImagesBatch", lambda answer: [BatchResult.from_proto(answer)], idempotent=False
)
"""Bidirectional: the request is an iterator of messages, consumed as gRPC sends them."""
SCORE_EXCLUSIVITY = Unary[list[ExclusivityScore]]("ScoreExclusivity", exclusivity_from_proto)
SCORE_PRESENCE = Unary[list[PresenceScore]]("ScorePresence", _presence)
MODEL_INFO = Unary[list[ModelInfo]]("GetModelInfo", _models)
EVALUATE = Unary[Evaluation]("Evaluate", Evaluation.from_proto)
GENERATE_QUESTIONS = Stream[Example](
    "GenerateQuestions", lambda page: [Example.from_proto(e) for e in page.examples]
)


def generate_questions(box: SummaryBox) -> Stream[Example]:
    """``GenerateQuestions`` for one call: the pages' examples, the last page's summary kept in
    ``box`` (:class:`covr_client.types_questions.QuestionStream`)."""
    return Stream[Example]("GenerateQuestions", box.examples)
