"""ImportSceneGraphs' messages ↔ the loaders' stream import (:mod:`covr_loaders.import_stream`).

Only translation: the first message may carry the options, every other one a scene graph that
becomes a domain scene graph (or a :class:`~covr_loaders.import_stream.Rejected` naming the first
bad field); the report becomes the response. Validating and writing is the loaders' job, so an
import behaves exactly like ``covr load``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from covr.scene.limits import SceneLimits
from covr.service import convert
from covr.service.config import ServiceSettings
from covr.service.errors import FieldViolation, InvalidArgument
from covr.v1 import store_pb2
from covr_loaders.config import LoadSettings
from covr_loaders.import_stream import ImportLimits, ImportReport, Item, Rejected

MAX_IMPORT_PROBLEMS = 1000
"""Problems listed in an import response (all are counted)."""

RELEASE_AFTER_BYTES = 8 << 20
"""Streams of at least this many bytes hand their freed memory back to the system when they end
(:func:`release_memory`); smaller ones are not worth a collection."""


def limits(settings: ServiceSettings, load: LoadSettings) -> ImportLimits:
    """The writer's batch size; a strict import holds up to 20 batches, and up to
    ``COVR_SERVICE_IMPORT_MAX_BYTES`` of scene graphs, before it may write. Two sections: the
    service's byte budget, and the loaders' batch size and scene limits (an import writes as
    ``covr load`` does)."""
    return ImportLimits(
        batch_size=load.load_batch_images,
        strict_cap=20 * load.load_batch_images,
        max_problems=MAX_IMPORT_PROBLEMS,
        scene=load.limits,
        max_bytes=settings.service_import_max_bytes,
    )


@dataclass
class StreamBytes:
    """Bytes of the messages one import stream sent so far (read when it ends)."""

    total: int = 0


def split_options(
    requests: Iterable[store_pb2.ImportSceneGraphsRequest],
    settings: ServiceSettings,
    scene: SceneLimits,
    received: StreamBytes,
) -> tuple[store_pb2.ImportOptions, Iterator[Item]]:
    """The stream's options (from its first message, if that carries them) and its items, each
    with its message's size, checked against ``scene``; ``received`` counts the bytes of every
    message read."""
    stream = iter(requests)
    first = next(stream, None)
    reader = _Reader(settings, scene, received)
    if first is not None and first.WhichOneof("item") == "options":
        received.total += first.ByteSize()
        return first.options, reader.items(stream, start=1)
    head = [] if first is None else [first]
    return store_pb2.ImportOptions(), reader.items(_chain(head, stream), start=0)


def _chain(
    head: list[store_pb2.ImportSceneGraphsRequest],
    rest: Iterator[store_pb2.ImportSceneGraphsRequest],
) -> Iterator[store_pb2.ImportSceneGraphsRequest]:
    yield from head
    yield from rest


class _Reader:
    """Turns the messages of one stream into items under the server's limits."""

    def __init__(
        self, settings: ServiceSettings, scene: SceneLimits, received: StreamBytes
    ) -> None:
        self.max_record_bytes = settings.service_import_max_record_bytes
        self.scene = scene
        self.received = received

    def items(
        self, messages: Iterator[store_pb2.ImportSceneGraphsRequest], *, start: int
    ) -> Iterator[Item]:
        """One item per scene-graph message, in order; a later options message is refused. A
        message over ``COVR_SERVICE_IMPORT_MAX_RECORD_BYTES`` is not converted (converting
        costs several times its size): it becomes a problem naming the limit."""
        index = 0
        for position, message in enumerate(messages, start):
            size = message.ByteSize()
            self.received.total += size
            kind = message.WhichOneof("item")
            if kind == "options":
                raise InvalidArgument.field(
                    f"requests[{position}].options", "only the first message may carry options"
                )
            field = f"scene_graphs[{index}]"
            index += 1
            if kind is None:
                yield Rejected(field, "empty message: set options or scene_graph"), size
                continue
            if size > self.max_record_bytes:
                yield (
                    Rejected(
                        field,
                        f"is {size:,} bytes; the limit is {self.max_record_bytes:,} "
                        "(COVR_SERVICE_IMPORT_MAX_RECORD_BYTES)",
                    ),
                    size,
                )
                continue
            try:
                yield convert.scene_graph_from_proto(message.scene_graph, field, self.scene), size
            except InvalidArgument as exc:
                first = exc.violations[0]
                yield Rejected(first.field, first.description), size


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` on another C library."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_memory(received: StreamBytes) -> None:
    """After a large import, give its freed memory back to the system.

    Why: the scene graphs of a strict import are hundreds of thousands of small objects; once
    freed, CPython keeps their pages in the allocator and glibc keeps its arenas, so the server
    stayed at 607 of a 676 MB peak after a 62 MB import (issue 40). A collection (cycles) and
    ``malloc_trim(0)`` (every arena's free pages) bring it back near the baseline."""
    if received.total < RELEASE_AFTER_BYTES:
        return
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


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
