"""The ``covr.v1.CovrService`` servicer: validate, convert, call a room, convert back.

No business logic lives here (DESIGN.md §1): scene graphs are validated by the scene room and
written by the loaders' own batch writer (so an import behaves exactly like ``covr load``),
statistics come from the graph room's report, related images, scores and questions from their
rooms (:mod:`covr.service.rooms`). Every handler runs inside the RPC's deadline scope, so each
store query it causes is bounded by the time the caller has left (:mod:`covr.service.deadline`).
Streaming handlers check between pages whether the client is still there and stop when not.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import grpc

from covr.graph import catalog, name_stats
from covr.graph.errors import GraphError
from covr.graph.report import COUNT_FIELDS, store_stats
from covr.graph.store import GraphStore
from covr.models import ModelInputError
from covr.questions.generate import (
    MAX_SEED,
    GenerationOptions,
    check_images,
    choose_source_image,
    iter_for_image,
    iter_for_subgraph,
)
from covr.related.exclusivity import EXCLUSIVE_THRESHOLD
from covr.related.lookup import RelatedResult
from covr.related.store_provider import StoreRelated
from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph
from covr.service import convert, tokens
from covr.service.admission import Admission
from covr.service.deadline import RequestDeadlines
from covr.service.errors import (
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotAvailableYet,
    NotFound,
)
from covr.service.evaluation import run_evaluation
from covr.service.example_stream import stream_examples
from covr.service.interceptors import cancelled_event
from covr.service.rooms import Rooms
from covr.settings import Settings
from covr.v1 import (
    evaluation_pb2,
    questions_pb2,
    related_pb2,
    scene_pb2,
    service_pb2_grpc,
    store_pb2,
)
from covr_loaders.readback import get_scene_graph
from covr_loaders.writer import Batch, write_batch

log = logging.getLogger("covr.service")

MAX_IMPORT_PROBLEMS = 1000
"""Problems listed in an import response (all are counted)."""

MAX_IMAGE_FEATURES = 65536
"""Longest optional image feature vector of a presence query."""


class CovrServicer(service_pb2_grpc.CovrServiceServicer):
    """Implements every RPC of ``service.proto``."""

    def __init__(
        self,
        store: GraphStore,
        settings: Settings,
        rooms: Rooms,
        deadlines: RequestDeadlines,
        admission: Admission | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.rooms = rooms
        self.deadlines = deadlines
        self.admission = admission or Admission({})

    # ------------------------------------------------------------------ helpers

    def _page_size(self, requested: int, field: str = "page_size") -> int:
        if requested == 0:
            return self.settings.service_page_size
        if requested > self.settings.service_max_page_size:
            raise InvalidArgument.field(
                field, f"{requested} is larger than {self.settings.service_max_page_size}"
            )
        return requested

    def _batch_size(self, count: int, field: str) -> None:
        if count == 0:
            raise InvalidArgument.field(field, "must not be empty")
        if count > self.settings.service_max_page_size:
            raise InvalidArgument.field(
                field, f"has {count} entries (at most {self.settings.service_max_page_size})"
            )

    def _scene_graph(self, image_id: str, field: str = "image_id") -> SceneGraph:
        convert.require_text(image_id, field)
        graph = get_scene_graph(self.store, image_id)
        if graph is None:
            raise NotFound(f"no image {image_id!r} in the store")
        return graph

    def _max_subgraphs(self, requested: int) -> int:
        cap = self.settings.service_max_subgraphs
        if requested > cap:
            raise InvalidArgument.field("max_subgraphs", f"{requested} is larger than {cap}")
        return requested or cap

    # ------------------------------------------------------------------ scene graphs

    def ImportSceneGraphs(
        self,
        request_iterator: Iterable[store_pb2.ImportSceneGraphsRequest],
        context: grpc.ServicerContext,
    ) -> store_pb2.ImportSceneGraphsResponse:
        with self.deadlines.scope(context, stop_reads=False):
            response = _Import(self, context).run(request_iterator)
        if response.written:
            self._refresh_lookups()
        return response

    def _refresh_lookups(self) -> None:
        """After an import through this server, drop the lookups' caches now (one generation
        query each): a question call that starts by reading its source scene graph must not
        get the graph from before the import. Lookups check the generation themselves at every
        lookup, which also covers imports by other processes; a failed check here is only
        logged, the import itself has succeeded."""
        lookups = [x for x in (self.rooms.related, self.rooms.related_plain) if x is not None]
        for lookup in {id(x): x for x in lookups}.values():
            try:
                lookup.refresh()
            except GraphError as exc:
                log.warning("lookup caches not refreshed after an import: %s", exc)

    def GetSceneGraph(
        self, request: store_pb2.GetSceneGraphRequest, context: grpc.ServicerContext
    ) -> store_pb2.GetSceneGraphResponse:
        with self.deadlines.scope(context):
            graph = self._scene_graph(request.image_id)
            return store_pb2.GetSceneGraphResponse(scene_graph=convert.scene_graph_to_proto(graph))

    def ListImages(
        self, request: store_pb2.ListImagesRequest, context: grpc.ServicerContext
    ) -> Iterator[store_pb2.ListImagesResponse]:
        violations = [
            *convert.check_text(request.source, "source", required=False),
            *convert.check_text(request.split, "split", required=False),
        ]
        if violations:
            raise InvalidArgument(violations)
        size = self._page_size(request.page_size)
        source = request.source or None
        split = request.split or None
        bound = {"source": request.source, "split": request.split}
        state = tokens.decode(request.page_token, bound)
        after = state.get("after", "")
        if not isinstance(after, str):
            raise InvalidArgument.field("page_token", "is not a page token issued by this service")
        gone = cancelled_event(context)
        pages = 0
        statement = catalog.get("service/image_ids_page")
        while not gone.is_set():
            with self.deadlines.scope(context):
                rows = self.store.read(
                    statement, {"source": source, "split": split, "after": after, "limit": size}
                )
            ids = [str(r["id"]) for r in rows]
            pages += 1
            last = len(ids) < size or (request.max_pages and pages >= request.max_pages)
            more = len(ids) == size
            after = ids[-1] if ids else after
            token = tokens.encode({**bound, "after": after}) if more else ""
            yield store_pb2.ListImagesResponse(image_ids=ids, next_page_token=token)
            if last:
                return

    def ListSubgraphs(
        self, request: store_pb2.ListSubgraphsRequest, context: grpc.ServicerContext
    ) -> store_pb2.ListSubgraphsResponse:
        limit = self._max_subgraphs(request.max_subgraphs)
        with self.deadlines.scope(context):
            graph = self._scene_graph(request.image_id)
        subgraphs = enumerate_subgraphs(graph, EnumerationOptions(max_subgraphs=limit))
        return store_pb2.ListSubgraphsResponse(
            image_id=graph.image_id, subgraphs=convert.subgraphs_to_proto(subgraphs)
        )

    def GetStatistics(
        self, request: store_pb2.GetStatisticsRequest, context: grpc.ServicerContext
    ) -> store_pb2.GetStatisticsResponse:
        with self.deadlines.scope(context):
            stats = store_stats(self.store)
        out = store_pb2.GetStatisticsResponse(
            backend=stats["backend"],
            nodes=stats["nodes"],
            relationships=stats["relationships"],
        )
        for entry in stats["datasets"]:
            out.datasets.add(**{k: entry[k] for k in ("source", "split", *COUNT_FIELDS)})
        out.totals.CopyFrom(store_pb2.DatasetStatistics(**stats["totals"]))
        return out

    # ------------------------------------------------------------------ related images, models

    def FindRelatedImages(
        self, request: related_pb2.FindRelatedImagesRequest, context: grpc.ServicerContext
    ) -> Iterator[related_pb2.FindRelatedImagesResponse]:
        target = request.WhichOneof("target")
        subgraph: Subgraph | None = None
        if target == "subgraph":
            subgraph = convert.subgraph_from_proto(request.subgraph)
        elif target == "image_id":
            convert.require_text(request.image_id, "image_id")
            if request.page_token:
                raise InvalidArgument.field(
                    "page_token", "continue a page with its subgraph as the target, not the image"
                )
        else:
            raise InvalidArgument.field("target", "set subgraph or image_id")
        violations = convert.check_text(request.split, "split", required=False)
        if request.max_distance > 2:
            violations.append(FieldViolation("max_distance", "must be 0 (= 2), 1 or 2"))
        if request.per_signature_cap > self.settings.service_max_page_size:
            violations.append(
                FieldViolation(
                    "per_signature_cap", f"is larger than {self.settings.service_max_page_size}"
                )
            )
        if violations:
            raise InvalidArgument(violations)
        page_size = self._page_size(request.page_size)
        max_subgraphs = self._max_subgraphs(request.max_subgraphs)
        lookup = self.rooms.related_plain if request.skip_exclusivity_model else self.rooms.related
        if lookup is None:
            raise NotAvailableYet("related-image lookup")
        query = _RelatedQuery.of(request, page_size)
        offset = 0
        if subgraph is not None:
            state = tokens.decode(request.page_token, query.bound(subgraph.key))
            offset = state.get("offset", 0)
            if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
                raise InvalidArgument.field("page_token", "is not a page token of this service")
        with self.admission.slot("FindRelatedImages"):
            gone = cancelled_event(context)
            with self.deadlines.scope(context):
                if subgraph is not None:
                    first_pages: Iterator[RelatedResult] = iter(
                        [lookup.related(subgraph, offset=offset, **query.arguments)]
                    )
                else:
                    keys = [g.key for g in lookup.subgraphs_of_image(request.image_id)]
                    first_pages = (
                        lookup.for_image(request.image_id, key, **query.arguments)[0]
                        for key in keys[:max_subgraphs]
                    )
            while not gone.is_set():
                with self.deadlines.scope(context):
                    result = next(first_pages, None)
                if result is None:
                    return
                sent = 0
                while True:
                    yield query.page(result)
                    sent += len(result.distractors)
                    if result.next_offset is None or sent >= request.max_results or gone.is_set():
                        break
                    with self.deadlines.scope(context):
                        result = lookup.related(
                            result.query, offset=result.next_offset, **query.arguments
                        )

    def ScoreExclusivity(
        self, request: related_pb2.ScoreExclusivityRequest, context: grpc.ServicerContext
    ) -> related_pb2.ScoreExclusivityResponse:
        self._batch_size(len(request.pairs), "pairs")
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
            raise InvalidArgument(violations[:100])
        if self.rooms.models is None:
            raise NotAvailableYet("the exclusivity model")
        model = self.rooms.models.exclusivity()
        scores = model.m_batch(pairs)
        out = related_pb2.ScoreExclusivityResponse(
            threshold=EXCLUSIVE_THRESHOLD,
            model=related_pb2.ModelRef(name=_model_name(model), version=model.version),
        )
        for pair, score in zip(request.pairs, scores, strict=True):
            out.scores.add(pair=pair, score=float(score), exclusive=score > EXCLUSIVE_THRESHOLD)
        return out

    def ScorePresence(
        self, request: related_pb2.ScorePresenceRequest, context: grpc.ServicerContext
    ) -> related_pb2.ScorePresenceResponse:
        self._batch_size(len(request.queries), "queries")
        violations: list[FieldViolation] = []
        subgraphs: list[Subgraph | None] = []
        for i, query in enumerate(request.queries):
            try:
                subgraphs.append(
                    convert.subgraph_from_proto(query.subgraph, f"queries[{i}].subgraph")
                )
            except InvalidArgument as exc:
                subgraphs.append(None)
                violations += exc.violations
            violations += convert.check_text(query.image_id, f"queries[{i}].image_id")
            if len(query.image_features) > MAX_IMAGE_FEATURES:
                violations.append(FieldViolation(f"queries[{i}].image_features", "is too long"))
            elif not all(math.isfinite(v) for v in query.image_features):
                violations.append(
                    FieldViolation(f"queries[{i}].image_features", "must be finite numbers")
                )
        if violations:
            raise InvalidArgument(violations[:100])
        if self.rooms.models is None:
            raise NotAvailableYet("the presence model")
        model = self.rooms.models.presence()
        scenes: dict[str, SceneGraph] = {}
        items = []
        with self.deadlines.scope(context):
            for i, (query, g) in enumerate(zip(request.queries, subgraphs, strict=True)):
                if query.image_id not in scenes:
                    scenes[query.image_id] = self._scene_graph(
                        query.image_id, f"queries[{i}].image_id"
                    )
                features = list(query.image_features) or None
                items.append((g, scenes[query.image_id], features))
        try:
            scores = model.score_batch(items)
        except ModelInputError as exc:
            raise InvalidArgument.field(
                exc.field.replace("items[", "queries[", 1).replace(".features", ".image_features"),
                exc.message,
            ) from exc
        out = related_pb2.ScorePresenceResponse(
            model=related_pb2.ModelRef(name=_model_name(model), version=model.version)
        )
        for query, g, score in zip(request.queries, subgraphs, scores, strict=True):
            assert g is not None
            out.scores.add(image_id=query.image_id, subgraph_key=g.key, score=float(score))
        return out

    def GetModelInfo(
        self, request: related_pb2.GetModelInfoRequest, context: grpc.ServicerContext
    ) -> related_pb2.GetModelInfoResponse:
        if self.rooms.models is None:
            raise NotAvailableYet("model information")
        out = related_pb2.GetModelInfoResponse()
        for entry in self.rooms.models.info():
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

    # ------------------------------------------------------------------ questions

    def GenerateQuestions(
        self, request: questions_pb2.GenerateQuestionsRequest, context: grpc.ServicerContext
    ) -> Iterator[questions_pb2.GenerateQuestionsResponse]:
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
        if violations:
            raise InvalidArgument(violations[:100])
        count = self._page_size(request.count, "count")
        provider = self.rooms.questions
        if provider is None:
            raise NotAvailableYet("question generation")
        with self.admission.slot("GenerateQuestions"):
            on_empty: Callable[[], None] | None = None
            with self.deadlines.scope(context):
                if subgraph is not None:
                    image_id, split = self._subgraph_source(provider, subgraph, request)
                    options = _generation_options(self.settings, request, split)
                    examples = iter_for_subgraph(provider, options, subgraph, image_id)
                else:
                    # The engine reads the source's scene graph through the provider's cache
                    # anyway: reading it here too (once more from the store) was pure overhead.
                    try:
                        scene = provider.scene(request.image_id)
                    except KeyError:
                        raise NotFound(f"no image {request.image_id!r} in the store") from None
                    split = request.split or scene.split
                    if scene.split != split:
                        raise InvalidArgument.field(
                            "image_id",
                            f"image {scene.image_id!r} belongs to split {scene.split!r}, "
                            f"not {split!r}",
                        )
                    options = _generation_options(self.settings, request, split)
                    examples = iter_for_image(provider, options, scene.image_id)
                    # Only an empty result needs telling "no subgraph to ask about" apart: the
                    # check enumerates the image's subgraphs, which the engine has just done.
                    on_empty = partial(check_images, provider, options, [scene.image_id])
            yield from stream_examples(
                examples,
                count=count,
                page_size=self.settings.service_page_size,
                gone=cancelled_event(context),
                scope=lambda hook: self.deadlines.scope(context, before_read=hook),
                on_empty=on_empty,
            )

    def _subgraph_source(
        self,
        provider: StoreRelated,
        g: Subgraph,
        request: questions_pb2.GenerateQuestionsRequest,
    ) -> tuple[str, str]:
        """The source image (a seeded choice among the images that contain ``g``, in the
        requested split or, when none is given, in any split) and the split to draw from.

        The positives are asked for exactly as the engine asks for them (same limit and seed),
        so with a split the engine's own lookup is answered from the lookup's cache.
        """
        split = request.split or None
        limit = self.settings.questions_positives + 1
        positives = provider.lookup.positives(g, split=split, limit=limit, seed=request.seed)
        if not positives:
            where = f"of split {split!r} " if split else ""
            raise NotFound(f"no stored image {where}contains {g.key!r}")
        image_id = choose_source_image(positives, g, request.seed)
        return image_id, split or provider.scene(image_id).split

    # ------------------------------------------------------------------ evaluation

    def Evaluate(
        self, request: evaluation_pb2.EvaluateRequest, context: grpc.ServicerContext
    ) -> evaluation_pb2.EvaluateResponse:
        return run_evaluation(request)


@dataclass(frozen=True)
class _RelatedQuery:
    """The lookup arguments of one FindRelatedImages request, and its page messages."""

    arguments: dict[str, Any]
    positives: bool
    seed: int
    plain: bool = False

    @classmethod
    def of(cls, request: related_pb2.FindRelatedImagesRequest, page_size: int) -> _RelatedQuery:
        arguments: dict[str, Any] = {
            "split": request.split or None,
            "max_distance": 0 if request.exclude_distractors else (request.max_distance or 2),
            "limit": page_size,
            "seed": request.seed,
            "presence": not request.skip_presence_filter,
        }
        if request.per_signature_cap:
            arguments["per_signature"] = request.per_signature_cap
        return cls(
            arguments, not request.exclude_positives, request.seed, request.skip_exclusivity_model
        )

    def bound(self, key: str) -> dict[str, Any]:
        """The request fields a page token of subgraph ``key`` is only valid for."""
        bound = {k: v for k, v in self.arguments.items() if k != "limit"}
        return {"key": key, "plain": self.plain, **bound}

    def page(self, result: RelatedResult) -> related_pb2.FindRelatedImagesResponse:
        query = convert.subgraph_to_proto(result.query)
        out = related_pb2.FindRelatedImagesResponse(query=query, seed=self.seed)
        if self.positives:
            for image_id in result.positives:
                out.images.add(
                    image_id=image_id,
                    kind=related_pb2.RELATED_KIND_POSITIVE,
                    distance=0,
                    matched=query,
                    query_key=result.query.key,
                )
        for d in result.distractors:
            out.images.add(
                image_id=d.image_id,
                kind=related_pb2.RELATED_KIND_DISTRACTOR,
                edit_signature=d.signature,
                distance=d.distance,
                matched=convert.subgraph_to_proto(d.subgraph),
                query_key=result.query.key,
            )
        if result.next_offset is not None:
            out.next_page_token = tokens.encode(
                {**self.bound(result.query.key), "offset": result.next_offset}
            )
        return out


def _generation_options(
    settings: Settings, request: questions_pb2.GenerateQuestionsRequest, split: str
) -> GenerationOptions:
    """The engine's options: request fields plus the ``COVR_QUESTIONS_*`` settings."""
    return GenerationOptions.from_settings(
        settings, split=split, seed=request.seed, templates=request.templates
    )


_NODE_TYPES: dict[int, str] = {
    scene_pb2.NODE_TYPE_OBJECT: "object",
    scene_pb2.NODE_TYPE_ATTRIBUTE: "attribute",
    scene_pb2.NODE_TYPE_RELATION: "relation",
    scene_pb2.NODE_TYPE_RELMOD: "relmod",
}


def _model_name(model: Any) -> str:
    return str(model.metadata.get("model_name", ""))


class _Import:
    """One ImportSceneGraphs call: validate each scene graph, write valid ones in batches.

    Mirrors ``covr load``: a bad scene graph is skipped and reported (field path included) while
    the others are written; ``strict`` checks everything first and writes nothing when anything
    is wrong; the same image id twice keeps the first copy; writing uses the loaders' batch writer
    (delete-then-create per batch, all-or-nothing per batch), so importing the same scene graphs
    again leaves the store unchanged.
    """

    def __init__(self, servicer: CovrServicer, context: grpc.ServicerContext) -> None:
        self.store = servicer.store
        self.batch_size = servicer.settings.load_batch_images
        self.strict_cap = 20 * servicer.settings.load_batch_images
        self.context = context
        self.response = store_pb2.ImportSceneGraphsResponse()
        self.pending: list[SceneGraph] = []
        self.seen: dict[str, int] = {}
        self.batches = 0
        self.wrote = False

    def problem(self, index: int, image_id: str, field: str, message: str) -> None:
        self.response.skipped += 1
        if len(self.response.problems) < MAX_IMPORT_PROBLEMS:
            self.response.problems.add(index=index, image_id=image_id, field=field, message=message)

    def flush(self) -> None:
        if not self.pending:
            return
        nodes, rels = write_batch(self.store, Batch.of(self.batches, self.pending))
        self.wrote = True
        self.batches += 1
        self.response.written += len(self.pending)
        self.response.nodes_created += nodes
        self.response.relationships_created += rels
        self.pending = []

    def run(
        self, requests: Iterable[store_pb2.ImportSceneGraphsRequest]
    ) -> store_pb2.ImportSceneGraphsResponse:
        options = store_pb2.ImportOptions()
        for position, message in enumerate(requests):
            kind = message.WhichOneof("item")
            if kind == "options":
                if position != 0:
                    raise InvalidArgument.field(
                        f"requests[{position}].options", "only the first message may carry options"
                    )
                options = message.options
                self.response.dry_run = options.dry_run
                continue
            index = self.response.received
            self.response.received += 1
            field = f"scene_graphs[{index}]"
            if kind is None:
                self.problem(index, "", field, "empty message: set options or scene_graph")
                continue
            try:
                graph = convert.scene_graph_from_proto(message.scene_graph, field)
            except InvalidArgument as exc:
                first = exc.violations[0]
                self.problem(index, "", first.field, first.description)
                continue
            if graph.image_id in self.seen:
                self.problem(
                    index,
                    graph.image_id,
                    f"{field}.original_id",
                    f"duplicate image id: {graph.image_id} was already sent as "
                    f"scene_graphs[{self.seen[graph.image_id]}]; this copy is skipped",
                )
                continue
            self.seen[graph.image_id] = index
            self.response.valid += 1
            if options.dry_run:
                continue
            self.pending.append(graph)
            if options.strict:
                if len(self.pending) > self.strict_cap:
                    raise InvalidArgument.field(
                        field,
                        f"a strict import holds at most {self.strict_cap} scene graphs; "
                        "split the stream",
                    )
            elif len(self.pending) >= self.batch_size:
                self.flush()
        if not self.context.is_active():
            # gRPC ends the request stream quietly when the client cancels: do not take what
            # arrived for a complete import.
            raise FailedPrecondition(
                "the client cancelled the import; unwritten scene graphs dropped"
            )
        if options.strict and self.response.skipped:
            raise InvalidArgument(
                [FieldViolation(p.field, p.message) for p in self.response.problems],
                f"strict import: {self.response.skipped} bad scene graph(s); nothing was written",
            )
        while self.pending:
            batch, self.pending = self.pending, []
            for start in range(0, len(batch), self.batch_size):
                self.pending = batch[start : start + self.batch_size]
                self.flush()
        if self.wrote:
            # Related-image lookups anchor on these statistics; the loaders refresh them at the
            # end of every load too (docs/related.md §2).
            name_stats.refresh(self.store)
        return self.response
