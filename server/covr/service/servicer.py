"""The ``covr.v1.CovrService`` servicer: validate, convert, call a room, convert back.

Every RPC has the same four steps (as a registry server should): check the request fields
(``INVALID_ARGUMENT`` naming each bad one), turn messages into domain values
(:mod:`covr.service.convert` and one translation module per RPC family), make one call into the
room that owns the work (loaders for imports, graph for listings and statistics, related for
related images, models for scores, questions for questions), and turn its answer into the
response. No business logic lives here (DESIGN.md §1). Every room call runs inside the RPC's
deadline scope, so each store query it causes is bounded by the time the caller has left
(:mod:`covr.service.deadline`); streaming handlers check between pages whether the client is
still there and stop when not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import Any

import grpc

from covr.graph.image_pages import image_ids_page
from covr.graph.report import COUNT_FIELDS, store_stats
from covr.graph.store import GraphStore
from covr.questions import sources
from covr.questions.generate import MAX_SEED
from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph
from covr.service import convert, imports, related_batch, related_pages, scoring
from covr.service.admission import Admission
from covr.service.config import ServerSettings
from covr.service.convert import RequestLimits
from covr.service.deadline import RequestDeadlines
from covr.service.errors import FieldViolation, InvalidArgument, NotFound
from covr.service.evaluation import run_evaluation
from covr.service.example_stream import stream_examples
from covr.service.interceptors import cancelled_event
from covr.service.question_quota import quota_fields, summary_proto
from covr.service.rooms import Rooms
from covr.v1 import evaluation_pb2, questions_pb2, related_pb2, service_pb2_grpc, store_pb2
from covr_loaders.import_stream import StrictImportRejected, import_scene_graphs


class CovrServicer(service_pb2_grpc.CovrServiceServicer):
    """Implements every RPC of ``service.proto`` over one store and its rooms."""

    def __init__(
        self,
        store: GraphStore,
        settings: ServerSettings,
        rooms: Rooms,
        deadlines: RequestDeadlines,
        admission: Admission | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.rooms = rooms
        self.deadlines = deadlines
        self.admission = admission or Admission({})
        self.limits = RequestLimits(settings.service)
        self.batch_stats = related_batch.BatchStats()

    def _scene_graph(self, image_id: str, field: str = "image_id") -> SceneGraph:
        """A stored scene graph by request field: a bad id is a bad field, a missing one
        ``NOT_FOUND`` (the scene room's validation is not repeated for stored graphs)."""
        convert.require_text(image_id, field)
        graph = self.rooms.related.scenes.find(image_id)
        if graph is None:
            raise NotFound(f"no image {image_id!r} in the store")
        return graph

    # ------------------------------------------------------------------ scene graphs

    def ImportSceneGraphs(
        self,
        request_iterator: Iterable[store_pb2.ImportSceneGraphsRequest],
        context: grpc.ServicerContext,
    ) -> store_pb2.ImportSceneGraphsResponse:
        """Scene graphs validated and written like ``covr load`` (the loaders' stream import);
        reads are not stopped when the client leaves, so a batch is never half-checked."""
        received = imports.StreamBytes()
        try:
            service, load = self.settings.service, self.settings.load
            options, items = imports.split_options(request_iterator, service, load.limits, received)
            with self.deadlines.scope(context, stop_reads=False):
                try:
                    report = import_scene_graphs(
                        self.store,
                        items,
                        strict=options.strict,
                        dry_run=options.dry_run,
                        limits=imports.limits(service, load),
                        still_wanted=context.is_active,
                    )
                except StrictImportRejected as exc:
                    problems = [FieldViolation(p.field, p.message) for p in exc.problems]
                    raise imports.strict_refusal(problems, exc.message) from exc
        finally:
            imports.release_memory(received)  # a large stream's memory back to the system
        if report.written:
            self.rooms.refresh_after_import()
        return imports.response(report)

    def GetSceneGraph(
        self, request: store_pb2.GetSceneGraphRequest, context: grpc.ServicerContext
    ) -> store_pb2.GetSceneGraphResponse:
        """One stored scene graph, as the loaders stored it."""
        with self.deadlines.scope(context):
            graph = self._scene_graph(request.image_id)
        return store_pb2.GetSceneGraphResponse(scene_graph=convert.scene_graph_to_proto(graph))

    def ListImages(
        self, request: store_pb2.ListImagesRequest, context: grpc.ServicerContext
    ) -> Iterator[store_pb2.ListImagesResponse]:
        """Stored image ids in id order, one page per message; the page token is the last id
        sent, bound to the source and split asked for."""
        violations = [
            *convert.check_text(request.source, "source", required=False),
            *convert.check_text(request.split, "split", required=False),
        ]
        if violations:
            raise InvalidArgument(violations)
        size = self.limits.page_size(request.page_size)
        bound = {"source": request.source, "split": request.split}
        after = convert.decode_page_token(request.page_token, bound).get("after", "")
        if not isinstance(after, str):
            raise InvalidArgument.field("page_token", "is not a page token issued by this service")
        gone = cancelled_event(context)
        pages = 0
        while not gone.is_set():
            with self.deadlines.scope(context):
                ids = image_ids_page(
                    self.store,
                    source=request.source or None,
                    split=request.split or None,
                    after=after,
                    limit=size,
                )
            pages += 1
            after = ids[-1] if ids else after
            token = convert.encode_page_token({**bound, "after": after}) if len(ids) == size else ""
            yield store_pb2.ListImagesResponse(image_ids=ids, next_page_token=token)
            if len(ids) < size or (request.max_pages and pages >= request.max_pages):
                return

    def ListSubgraphs(
        self, request: store_pb2.ListSubgraphsRequest, context: grpc.ServicerContext
    ) -> store_pb2.ListSubgraphsResponse:
        """The subgraphs of a stored image (the scene room's enumeration), smallest first."""
        limit = self.limits.max_subgraphs(request.max_subgraphs)
        with self.deadlines.scope(context):
            graph = self._scene_graph(request.image_id)
        subgraphs = enumerate_subgraphs(graph, EnumerationOptions(max_subgraphs=limit))
        return store_pb2.ListSubgraphsResponse(
            image_id=graph.image_id, subgraphs=convert.subgraphs_to_proto(subgraphs)
        )

    def GetStatistics(
        self, request: store_pb2.GetStatisticsRequest, context: grpc.ServicerContext
    ) -> store_pb2.GetStatisticsResponse:
        """Node, relationship and per-dataset counts (the graph room's report)."""
        with self.deadlines.scope(context):
            stats = store_stats(self.store)
        out = store_pb2.GetStatisticsResponse(
            backend=stats["backend"], nodes=stats["nodes"], relationships=stats["relationships"]
        )
        for entry in stats["datasets"]:
            out.datasets.add(**{k: entry[k] for k in ("source", "split", *COUNT_FIELDS)})
        out.totals.CopyFrom(store_pb2.DatasetStatistics(**stats["totals"]))
        return out

    # ------------------------------------------------------------------ related images, models

    def FindRelatedImages(
        self, request: related_pb2.FindRelatedImagesRequest, context: grpc.ServicerContext
    ) -> Iterator[related_pb2.FindRelatedImagesResponse]:
        """Pages of positives and distractors from the related room's lookup; admission-
        limited, because one call can run many store queries."""
        query = related_pages.parse(request, self.limits, self.settings.related)
        lookup = self.rooms.lookup(exclusivity_model=not query.plain)
        with self.admission.slot("FindRelatedImages"):
            yield from related_pages.pages(
                lookup,
                query,
                scope=lambda: self.deadlines.scope(context),
                gone=cancelled_event(context),
            )

    def FindRelatedImagesBatch(
        self, requests: Iterable[related_batch.Request], context: grpc.ServicerContext
    ) -> Iterator[related_batch.Response]:
        """Per image what ``covr distractors`` writes, in request order, answered as the
        images arrive within a bounded window (:mod:`covr.service.related_batch`)."""
        scope = partial(self.deadlines.scope, context)
        with self.admission.slot("FindRelatedImagesBatch"):
            yield from related_batch.answers(
                requests,
                self.rooms,
                self.batch_stats,
                self.settings.service,
                scope=scope,
                gone=cancelled_event(context),
            )

    def ScoreExclusivity(
        self, request: related_pb2.ScoreExclusivityRequest, context: grpc.ServicerContext
    ) -> related_pb2.ScoreExclusivityResponse:
        """``m(x, x')`` of each pair from the exclusivity model, in request order."""
        self.limits.batch(len(request.pairs), "pairs")
        pairs = scoring.exclusivity_pairs(request)
        model = self.rooms.models.exclusivity()
        return scoring.exclusivity_response(request, model, model.m_batch(pairs))

    def ScorePresence(
        self, request: related_pb2.ScorePresenceRequest, context: grpc.ServicerContext
    ) -> related_pb2.ScorePresenceResponse:
        """Presence probabilities from the presence model over the stored scene graphs."""
        self.limits.batch(len(request.queries), "queries")
        subgraphs = scoring.presence_subgraphs(request)
        model = self.rooms.models.presence()
        scenes: dict[str, SceneGraph] = {}
        with self.deadlines.scope(context):
            for i, query in enumerate(request.queries):
                if query.image_id not in scenes:
                    field = f"queries[{i}].image_id"
                    scenes[query.image_id] = self._scene_graph(query.image_id, field)
        scores = scoring.presence_scores(model, request, subgraphs, scenes)
        return scoring.presence_response(model, request, subgraphs, scores)

    def GetModelInfo(
        self, request: related_pb2.GetModelInfoRequest, context: grpc.ServicerContext
    ) -> related_pb2.GetModelInfoResponse:
        """Names, versions, files and tensors of the served ONNX models."""
        return scoring.model_info_response(self.rooms.models.info())

    # ------------------------------------------------------------------ questions

    def GenerateQuestions(
        self, request: questions_pb2.GenerateQuestionsRequest, context: grpc.ServicerContext
    ) -> Iterator[questions_pb2.GenerateQuestionsResponse]:
        """Examples from the question room, streamed while they are generated
        (:mod:`covr.service.example_stream`); admission-limited like related images."""
        source = request.WhichOneof("source")
        subgraph: Subgraph | None = None
        if source == "subgraph":
            subgraph = convert.subgraph_from_proto(request.subgraph)
        elif source == "image_id":
            convert.require_text(request.image_id, "image_id")
        else:
            raise InvalidArgument.field("source", "set image_id or subgraph")
        violations = convert.check_text(request.split, "split", required=False)
        for i, name in enumerate(request.templates):
            violations += convert.check_text(name, f"templates[{i}]")
        if request.seed > MAX_SEED:
            violations.append(FieldViolation("seed", f"must be at most {MAX_SEED}"))
        quota = quota_fields(request, self.settings.service.service_max_page_size)
        violations += quota.violations
        if violations:
            raise InvalidArgument(violations[: convert.MAX_VIOLATIONS])
        count = self.limits.page_size(request.count, "count")
        split, seed, templates = request.split or None, request.seed, request.templates
        provider = self.rooms.questions
        with self.admission.slot("GenerateQuestions"):
            with self.deadlines.scope(context):
                plan = (
                    sources.for_subgraph(
                        provider,
                        self.settings.questions,
                        self.settings.related,
                        subgraph,
                        split=split,
                        seed=seed,
                        templates=templates,
                        per_template=quota.per_template,
                        max_image_share=quota.max_image_share,
                    )
                    if subgraph is not None
                    else sources.for_image(
                        provider,
                        self.settings.questions,
                        self.settings.related,
                        request.image_id,
                        split=split,
                        seed=seed,
                        templates=templates,
                        per_template=quota.per_template,
                        max_image_share=quota.max_image_share,
                    )
                )
            yield from stream_examples(
                plan.examples,
                count=count,
                page_size=self.settings.service.service_page_size,
                gone=cancelled_event(context),
                scope=lambda hook: self.deadlines.scope(context, before_read=hook),
                on_empty=plan.on_empty,
                summary=None if plan.summary is None else partial(_summary, plan.summary),
            )

    # ------------------------------------------------------------------ evaluation

    def Evaluate(
        self, request: evaluation_pb2.EvaluateRequest, context: grpc.ServicerContext
    ) -> evaluation_pb2.EvaluateResponse:
        """Accuracy, baselines and generalization scores of predictions (the splits room)."""
        return run_evaluation(request, self.settings.service.service_max_evaluate_examples)


def _summary(summary: Callable[[], Mapping[str, Any]]) -> questions_pb2.GenerationSummary:
    """The question room's summary of a generation with a quota, as the stream's last message."""
    return summary_proto(summary())
