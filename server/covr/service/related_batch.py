"""FindRelatedImagesBatch: many images in one bidirectional stream, answered in request order.

Each request message names one image (and optionally some of its subgraphs); its answer is what
``covr distractors`` writes for that image, one record per subgraph, computed by the same
function (:func:`covr.scale.distractors.image_results` over the related room's lookup), so the
two cannot drift apart.

Flow control. The handler does not read the whole request stream first: a reader thread takes a
permit of the stream's window (``COVR_SERVICE_BATCH_WINDOW``) before it reads each message, and
the handler gives the permit back only after that message's answer was handed to gRPC. So at
most ``window`` messages are read and not yet answered, whatever the client does; a client that
stops reading blocks the handler's send (HTTP/2 flow control), the permits run out, the reader
stops reading, and gRPC's flow control in turn stops the client's sends. Up to
``COVR_SERVICE_BATCH_WORKERS`` lookups of the window run at once on a small pool; the answers
still leave in request order. Reading in its own thread matters: a client that waits for an
answer before it sends the next image (lock-step) must not deadlock the handler.

Errors. A bad item (unknown image, a key that does not parse or is not in the image, a bad
option) is answered with ``problems`` (field, message, the code the unary RPC would give) and
the stream goes on. What concerns the whole stream (more than ``COVR_SERVICE_BATCH_MAX_ITEMS``
messages, an undecodable message, the store down, the deadline) ends it with the standard status
(:mod:`covr.service.errors`), after the answers to the items before it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass

import grpc

from covr.related.config import RelatedSettings
from covr.related.errors import UnknownSubgraph
from covr.related.lookup import RelatedLookup
from covr.scale.distractors import foreign_key, image_results, record
from covr.scale.tasks import RelatedOptions
from covr.scene.subgraph import Subgraph, SubgraphError
from covr.service import convert
from covr.service.config import ServiceSettings
from covr.service.errors import (
    FieldViolation,
    InvalidArgument,
    NotFound,
    status_of,
    violations_of,
)
from covr.service.rooms import Rooms
from covr.v1 import related_pb2

Scope = Callable[[], AbstractContextManager[None]]
Request = related_pb2.FindRelatedImagesBatchRequest
Response = related_pb2.FindRelatedImagesBatchResponse

POLL_S = 0.1
"""How often blocked waits look whether the call has ended (client gone, deadline)."""

ITEM_CODES = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
"""Codes that concern one item: it gets problems, the stream goes on."""


# ---------------------------------------------------------------------- one item


@dataclass(frozen=True)
class Item:
    """One validated request message: the image, the named keys, the lookup options."""

    image_id: str
    keys: tuple[str, ...] | None
    options: RelatedOptions
    presence: bool
    plain: bool


def parse_item(request: Request, settings: ServiceSettings, related: RelatedSettings) -> Item:
    """The item of one message; every bad field is reported (:class:`InvalidArgument`). The
    service's section caps the fields, the lookup's (``related``) fills the defaults."""
    violations = convert.check_text(request.image_id, "image_id")
    violations += convert.check_text(request.split, "split", required=False)
    violations += convert.check_text(request.tag, "tag", required=False)
    cap, page = settings.service_max_subgraphs, settings.service_max_page_size
    if len(request.subgraphs) > cap:
        violations.append(FieldViolation("subgraphs", f"has more than {cap} keys"))
    for i, key in enumerate(request.subgraphs[:cap]):
        problems = convert.check_text(key, f"subgraphs[{i}]")
        if not problems:
            try:
                Subgraph.from_key(key)
            except SubgraphError as exc:
                problems = [FieldViolation(f"subgraphs[{i}]", str(exc))]
        violations += problems
    if request.max_distance > 2:
        violations.append(FieldViolation("max_distance", "must be 0 (= 2), 1 or 2"))
    for name, value, limit in (
        ("per_signature_cap", request.per_signature_cap, page),
        ("max_positives", request.max_positives, page),
        ("max_subgraphs", request.max_subgraphs, cap),
    ):
        if value > limit:
            violations.append(FieldViolation(name, f"{value} is larger than {limit}"))
    if violations:
        raise InvalidArgument(violations[: convert.MAX_VIOLATIONS])
    options = RelatedOptions(
        split=request.split or None,
        max_distance=request.max_distance or 2,
        per_signature=request.per_signature_cap or related.related_per_signature,
        positives=request.max_positives or related.related_positives,
        max_subgraphs=request.max_subgraphs or cap,
        seed=request.seed,
    )
    keys = tuple(request.subgraphs) or None
    return Item(
        request.image_id,
        keys,
        options,
        not request.skip_presence_filter,
        request.skip_exclusivity_model,
    )


def lookup_item(lookup: RelatedLookup, item: Item) -> list[related_pb2.BatchRecord]:
    """The records of one item: named keys are checked against the image first (a foreign
    one is a bad ``subgraphs[i]``), then the shared per-image lookup runs."""
    if item.keys is not None:
        scene = lookup.scenes.find(item.image_id)
        if scene is None:
            raise NotFound(f"no image {item.image_id!r} in the store")
        foreign = foreign_key(scene, item.keys)
        if foreign is not None:
            raise UnknownSubgraph(
                f"subgraphs[{foreign}]",
                f"{item.keys[foreign]!r} is not a subgraph of image {item.image_id!r}",
            )
    results = image_results(lookup, item.image_id, item.keys, item.options, presence=item.presence)
    return [to_record(record(item.image_id, r)) for r in results]


def to_record(row: dict[str, object]) -> related_pb2.BatchRecord:
    """A ``covr distractors`` row (:func:`covr.scale.distractors.record`) as a message."""
    out = related_pb2.BatchRecord(
        subgraph=str(row["subgraph"]),
        split=str(row["split"] or ""),
        seed=int(row["seed"]),  # type: ignore[call-overload]
        positives=list(row["positives"]),  # type: ignore[call-overload]
    )
    for d in row["distractors"]:  # type: ignore[attr-defined]
        out.distractors.add(
            image_id=d["image_id"],
            edit_signature=d["signature"],
            distance=d["distance"],
            subgraph=d["subgraph"],
        )
    return out


def problems_of(exc: Exception) -> list[related_pb2.BatchProblem] | None:
    """The problems of an item that failed with ``exc``, or ``None`` when the failure is not
    the item's (the store, the deadline, a bug): then the whole stream fails."""
    status = status_of(exc)
    if status is None or status.code not in ITEM_CODES:
        return None
    found = violations_of(exc, status) or [FieldViolation("image_id", str(exc))]
    code = status.code.name
    return [
        related_pb2.BatchProblem(field=v.field, message=v.description, code=code) for v in found
    ]


def answer_item(
    lookups: Callable[[bool], RelatedLookup],
    settings: ServiceSettings,
    related: RelatedSettings,
    index: int,
    request: Request,
) -> Response:
    """The answer to message ``index``: its records, or its problems."""
    out = Response(index=index, tag=request.tag, image_id=request.image_id)
    try:
        item = parse_item(request, settings, related)
        out.records.extend(lookup_item(lookups(item.plain), item))
    except Exception as exc:  # an item's bad input is its answer; anything else ends the stream
        problems = problems_of(exc)
        if problems is None:
            raise
        out.ClearField("records")
        out.problems.extend(problems)
    return out


# ---------------------------------------------------------------------- the stream


class BatchStats:
    """Counters of every batch stream of one server (``Service.batch_stats``; the tests read
    them): messages read, answers sent, messages read and not answered now (a stream that ends
    early drops its own), and the most any one stream ever held."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.received = 0
        self.sent = 0
        self.in_flight = 0
        self.peak_in_flight = 0

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {
                "received": self.received,
                "sent": self.sent,
                "in_flight": self.in_flight,
                "peak_in_flight": self.peak_in_flight,
            }

    def _add(self, received: int, sent: int, stream_in_flight: int, dropped: int = 0) -> None:
        with self._lock:
            self.received += received
            self.sent += sent
            self.in_flight += received - sent - dropped
            self.peak_in_flight = max(self.peak_in_flight, stream_in_flight)


class Window:
    """The permits of one stream: taken before a message is read, given back when its answer
    was sent. ``in_flight`` can therefore never exceed ``size``."""

    def __init__(self, size: int, stats: BatchStats) -> None:
        self.size = size
        self.stats = stats
        self._free = threading.Semaphore(size)
        self._lock = threading.Lock()
        self.in_flight = 0

    def take(self, ended: threading.Event) -> bool:
        """Wait for a permit; ``False`` when the call ended first."""
        while not self._free.acquire(timeout=POLL_S):
            if ended.is_set():
                return False
        return True

    def read(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.stats._add(1, 0, self.in_flight)

    def unused(self) -> None:
        """A permit taken for a read that found the end of the stream."""
        self._free.release()

    def sent(self) -> None:
        with self._lock:
            self.in_flight -= 1
            self.stats._add(0, 1, self.in_flight)
        self._free.release()

    def close(self) -> None:
        """Forget what was read and not sent (the stream ended early)."""
        with self._lock:
            self.stats._add(0, 0, 0, dropped=self.in_flight)
            self.in_flight = 0


@dataclass(frozen=True)
class _End:
    error: BaseException | None = None


@dataclass(frozen=True)
class StreamLimits:
    window: int
    workers: int
    max_items: int

    @classmethod
    def of(cls, settings: ServiceSettings) -> StreamLimits:
        return cls(
            settings.service_batch_window,
            settings.service_batch_workers,
            settings.service_batch_max_items,
        )


def answers(
    requests: Iterable[Request],
    rooms: Rooms,
    stats: BatchStats,
    settings: ServiceSettings,
    *,
    scope: Scope,
    gone: threading.Event,
) -> Iterator[Response]:
    """The answers of one FindRelatedImagesBatch call over the related room's lookups (the
    exclusivity model's, or the word lists' for ``skip_exclusivity_model``), under the
    service's limits; the defaults of an item are its lookup's settings."""
    related = rooms.related.settings

    def lookups(plain: bool) -> RelatedLookup:
        return rooms.lookup(exclusivity_model=not plain)

    return serve(
        requests,
        lambda index, request: answer_item(lookups, settings, related, index, request),
        limits=StreamLimits.of(settings),
        stats=stats,
        scope=scope,
        gone=gone,
    )


def serve(
    requests: Iterable[Request],
    answer: Callable[[int, Request], Response],
    *,
    limits: StreamLimits,
    stats: BatchStats,
    scope: Scope,
    gone: threading.Event,
) -> Iterator[Response]:
    """The answers to ``requests`` in request order, read and looked up as they arrive (see
    the module docstring); ``answer`` runs on the pool inside the RPC's deadline scope."""
    window = Window(limits.window, stats)
    ended = threading.Event()
    answers: queue.Queue[Future[Response] | _End] = queue.Queue()
    pool = ThreadPoolExecutor(limits.workers, thread_name_prefix="covr-batch")

    def scoped(index: int, request: Request) -> Response:
        with scope():
            return answer(index, request)

    def read() -> None:
        try:
            stream = iter(requests)
            index = 0
            while window.take(ended):
                request = next(stream, None)
                if request is None:
                    window.unused()
                    break
                if index >= limits.max_items:
                    window.unused()
                    raise InvalidArgument.field(
                        "requests", f"more than {limits.max_items} items in one stream"
                    )
                window.read()
                answers.put(pool.submit(scoped, index, request))
                index += 1
            answers.put(_End())
        except Exception as exc:  # the stream's end: undecodable message, over the cap, cancel
            answers.put(_End(exc))

    reader = threading.Thread(target=read, name="covr-batch-reader", daemon=True)
    reader.start()
    try:
        while not gone.is_set():
            try:
                entry = answers.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if isinstance(entry, _End):
                if entry.error is not None:
                    raise entry.error
                return
            yield entry.result()
            window.sent()
    finally:
        ended.set()
        window.close()
        pool.shutdown(wait=False, cancel_futures=True)
