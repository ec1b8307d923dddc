"""ImportSceneGraphs' messages ↔ the loaders' stream import (:mod:`covr_loaders.import_stream`).

Only translation: the first message may carry the options, every other one a scene graph that
becomes a domain scene graph (or a :class:`~covr_loaders.import_stream.Rejected` naming the first
bad field); the report becomes the response. Validating and writing is the loaders' job, so an
import behaves exactly like ``covr load``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from covr.scene.limits import SceneLimits
from covr.scene.model import SceneGraph
from covr.service import convert
from covr.service.errors import FieldViolation, InvalidArgument
from covr.settings import Settings
from covr.v1 import store_pb2
from covr_loaders.import_stream import ImportLimits, ImportReport, Rejected

MAX_IMPORT_PROBLEMS = 1000
"""Problems listed in an import response (all are counted)."""


def limits(settings: Settings) -> ImportLimits:
    """The writer's batch size; a strict import holds up to 20 batches before it may write."""
    return ImportLimits(
        batch_size=settings.load_batch_images,
        strict_cap=20 * settings.load_batch_images,
        max_problems=MAX_IMPORT_PROBLEMS,
        scene=SceneLimits.from_settings(settings),
    )


def split_options(
    requests: Iterable[store_pb2.ImportSceneGraphsRequest],
) -> tuple[store_pb2.ImportOptions, Iterator[SceneGraph | Rejected]]:
    """The stream's options (from its first message, if that carries them) and its items."""
    stream = iter(requests)
    first = next(stream, None)
    if first is not None and first.WhichOneof("item") == "options":
        return first.options, _items(stream, start=1)
    head = [] if first is None else [first]
    return store_pb2.ImportOptions(), _items(_chain(head, stream), start=0)


def _chain(
    head: list[store_pb2.ImportSceneGraphsRequest],
    rest: Iterator[store_pb2.ImportSceneGraphsRequest],
) -> Iterator[store_pb2.ImportSceneGraphsRequest]:
    yield from head
    yield from rest


def _items(
    messages: Iterator[store_pb2.ImportSceneGraphsRequest], *, start: int
) -> Iterator[SceneGraph | Rejected]:
    """One item per scene-graph message, in order; a later options message is refused."""
    index = 0
    for position, message in enumerate(messages, start):
        kind = message.WhichOneof("item")
        if kind == "options":
            raise InvalidArgument.field(
                f"requests[{position}].options", "only the first message may carry options"
            )
        field = f"scene_graphs[{index}]"
        index += 1
        if kind is None:
            yield Rejected(field, "empty message: set options or scene_graph")
            continue
        try:
            yield convert.scene_graph_from_proto(message.scene_graph, field)
        except InvalidArgument as exc:
            first = exc.violations[0]
            yield Rejected(first.field, first.description)


def response(report: ImportReport) -> store_pb2.ImportSceneGraphsResponse:
    """The response message of an import report."""
    out = store_pb2.ImportSceneGraphsResponse(
        received=report.received,
        valid=report.valid,
        written=report.written,
        skipped=report.skipped,
        nodes_created=report.nodes_created,
        relationships_created=report.relationships_created,
        dry_run=report.dry_run,
    )
    for p in report.problems:
        out.problems.add(index=p.index, image_id=p.image_id, field=p.field, message=p.message)
    return out


def strict_refusal(problems: Iterable[FieldViolation], message: str) -> InvalidArgument:
    """The answer to a strict import with bad scene graphs: every problem as a bad field."""
    return InvalidArgument(list(problems), message)
