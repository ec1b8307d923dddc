"""FindRelatedImagesBatch without a server: request and result conversion (server record ->
message -> SDK ``to_dict`` is the ``covr distractors`` row), per-item checks, and the stream
engine's flow control with a stand-in answer function (threads only, no sockets)."""

from __future__ import annotations

import contextlib
import itertools
import random
import threading
import time
from collections.abc import Generator, Iterator
from typing import cast

import pytest

from covr.related.api import Distractor as DomainDistractor
from covr.related.api import RelatedResult
from covr.scale.distractors import record
from covr.scene.subgraph import Subgraph
from covr.service import related_batch
from covr.service.errors import InvalidArgument
from covr.service.related_batch import BatchStats, StreamLimits, parse_item, serve, to_record
from covr.settings import Settings
from covr.v1 import related_pb2 as server_pb2
from covr_client import BatchItem, BatchResult, DistractorRecord, _requests
from covr_client._proto import related_pb2 as sdk_pb2

SETTINGS = Settings(_env_file=None)  # type: ignore[call-arg]


def _result(split: str | None) -> RelatedResult:
    return RelatedResult(
        query=Subgraph.from_key("man[tall]-(wearing)->hat"),
        split=split,
        seed=7,
        positives=("gqa:1", "gqa:9"),
        distractors=(
            DomainDistractor(
                "gqa:3", "attribute@0", Subgraph.from_key("man[short]-(wearing)->hat"), ()
            ),
            DomainDistractor(
                "gqa:4", "object@0+relation@0", Subgraph.from_key("woman[tall]-(holding)->hat"), ()
            ),
        ),
    )


@pytest.mark.parametrize("split", [None, "val"])
def test_a_record_travels_to_the_same_jsonl_row(split: str | None) -> None:
    row = record("gqa:1", _result(split))
    wire = to_record(row).SerializeToString()
    back = DistractorRecord.from_proto("gqa:1", sdk_pb2.BatchRecord.FromString(wire))
    assert back.to_dict() == row
    assert list(back.to_dict()) == list(row)  # same key order: the same JSON line
    assert back.distractors[1].distance == 2


def test_a_batch_result_from_its_message() -> None:
    msg = sdk_pb2.FindRelatedImagesBatchResponse(index=4, tag="t", image_id="gqa:1")
    msg.records.add().CopyFrom(
        sdk_pb2.BatchRecord.FromString(
            to_record(record("gqa:1", _result(None))).SerializeToString()
        )
    )
    result = BatchResult.from_proto(msg)
    assert (result.index, result.tag, result.image_id, result.ok) == (4, "t", "gqa:1", True)
    assert result.rows() == [record("gqa:1", _result(None))]
    assert result.to_dict()["records"] == result.rows()
    bad = sdk_pb2.FindRelatedImagesBatchResponse(index=5, image_id="x")
    bad.problems.add(field="image_id", message="no image 'x' in the store", code="NOT_FOUND")
    failed = BatchResult.from_proto(bad)
    assert not failed.ok
    assert failed.rows() == []
    assert failed.to_dict()["problems"] == [
        {"field": "image_id", "message": "no image 'x' in the store", "code": "NOT_FOUND"}
    ]


def test_requests_are_built_lazily_with_the_options() -> None:
    pulled: list[int] = []

    def ids() -> Iterator[str]:
        for n in itertools.count():
            pulled.append(n)
            yield f"gqa:{n}"

    messages = _requests.batch(
        ids(), seed=3, split="val", presence_filter=False, max_positives=2, max_subgraphs=4
    )
    assert pulled == []
    first = next(messages)
    assert pulled == [0]
    assert (first.image_id, first.seed, first.split, first.max_positives) == ("gqa:0", 3, "val", 2)
    assert first.skip_presence_filter
    assert not first.skip_exclusivity_model
    assert first.max_subgraphs == 4
    assert first.max_distance == 0
    item = _requests.batch_item(BatchItem("gqa:5", ("man", "tree"), tag="mine"))
    assert (list(item.subgraphs), item.tag, item.seed) == (["man", "tree"], "mine", 0)
    with pytest.raises(TypeError, match="image id or a BatchItem"):
        BatchItem.of(5)  # type: ignore[arg-type]


def test_an_item_takes_the_server_defaults() -> None:
    item = parse_item(
        server_pb2.FindRelatedImagesBatchRequest(image_id="gqa:1"),
        SETTINGS.service,
        SETTINGS.related,
    )
    assert item.keys is None
    assert item.presence
    assert not item.plain
    assert item.options.per_signature == SETTINGS.related_per_signature
    assert item.options.positives == SETTINGS.related_positives
    assert item.options.max_subgraphs == SETTINGS.service_max_subgraphs
    assert item.options.max_distance == 2
    assert item.options.split is None


def test_every_bad_field_of_an_item_is_named() -> None:
    request = server_pb2.FindRelatedImagesBatchRequest(
        image_id=" ",
        subgraphs=["man", "man-(", "\x00"],
        split="a\x00",
        max_distance=3,
        per_signature_cap=10**6,
        max_positives=10**6,
        max_subgraphs=10**6,
    )
    with pytest.raises(InvalidArgument) as caught:
        parse_item(request, SETTINGS.service, SETTINGS.related)
    fields = [v.field for v in caught.value.violations]
    assert fields == [
        "image_id",
        "split",
        "subgraphs[1]",
        "subgraphs[2]",
        "max_distance",
        "per_signature_cap",
        "max_positives",
        "max_subgraphs",
    ]


# ---------------------------------------------------------------------- the stream engine


def _no_scope() -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


def _answer(
    index: int, request: server_pb2.FindRelatedImagesBatchRequest
) -> related_batch.Response:
    time.sleep(random.uniform(0, 0.004))  # answers finish out of order on the pool
    return related_batch.Response(index=index, tag=request.tag, image_id=request.image_id)


def _items(count: int, pulled: list[int]) -> Iterator[server_pb2.FindRelatedImagesBatchRequest]:
    for n in range(count):
        pulled[0] = n + 1
        yield server_pb2.FindRelatedImagesBatchRequest(image_id=f"i{n}", tag=str(n))


def _run(
    items: Iterator[server_pb2.FindRelatedImagesBatchRequest],
    window: int,
    workers: int,
    max_items: int,
    stats: BatchStats | None = None,
) -> Generator[related_batch.Response, None, None]:
    """The stream engine over ``items`` with the stand-in answers and no deadline scope."""
    answers = serve(
        items,
        _answer,
        limits=StreamLimits(window=window, workers=workers, max_items=max_items),
        stats=stats or BatchStats(),
        scope=_no_scope,
        gone=threading.Event(),
    )
    return cast(Generator[related_batch.Response, None, None], answers)


def test_answers_keep_request_order_within_the_window() -> None:
    stats, pulled = BatchStats(), [0]
    out = []
    for answer in _run(_items(300, pulled), 4, 3, 1000, stats):
        assert stats.snapshot()["in_flight"] <= 4
        out.append((answer.index, answer.tag))
    assert out == [(n, str(n)) for n in range(300)]
    assert stats.snapshot() == {"received": 300, "sent": 300, "in_flight": 0, "peak_in_flight": 4}


def test_a_consumer_that_stops_stops_the_reads_at_the_window() -> None:
    stats, pulled = BatchStats(), [0]
    answers = _run(_items(1000, pulled), 5, 2, 1000, stats)
    assert next(answers).index == 0
    time.sleep(0.5)
    # the answer handed out counts until the consumer asks for the next (gRPC does that once it
    # has sent it): a full window and no more was read
    assert pulled[0] == 5
    assert stats.snapshot()["in_flight"] == 5
    answers.close()
    assert stats.snapshot()["in_flight"] == 0


def test_the_item_over_the_cap_ends_the_stream_after_the_answers_before_it() -> None:
    got: list[int] = []

    def drain() -> None:
        got.extend(answer.index for answer in _run(_items(50, [0]), 8, 2, 10))

    with pytest.raises(InvalidArgument) as caught:
        drain()
    assert got == list(range(10))
    assert [v.field for v in caught.value.violations] == ["requests"]


def test_a_lock_step_producer_is_served() -> None:
    """The next item exists only after the previous answer was taken."""
    taken = threading.Semaphore(0)

    def items() -> Iterator[server_pb2.FindRelatedImagesBatchRequest]:
        for n in range(5):
            yield server_pb2.FindRelatedImagesBatchRequest(image_id=f"i{n}")
            assert taken.acquire(timeout=10)

    got = []
    for answer in _run(items(), 4, 1, 100):
        got.append(answer.index)
        taken.release()
    assert got == [0, 1, 2, 3, 4]


def test_an_error_of_the_request_stream_ends_the_answers() -> None:
    def items() -> Iterator[server_pb2.FindRelatedImagesBatchRequest]:
        yield server_pb2.FindRelatedImagesBatchRequest(image_id="i0")
        raise InvalidArgument.field("request message 1", "could not be decoded")

    answers = _run(items(), 4, 1, 100)
    assert next(answers).index == 0
    with pytest.raises(InvalidArgument, match="could not be decoded"):
        next(answers)
