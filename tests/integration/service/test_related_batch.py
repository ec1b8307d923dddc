"""FindRelatedImagesBatch on a real server over each real store (the samples): the answers
equal ``covr distractors`` and the unary RPC, order and tags are kept, a bad item gets problems
while later items still answer, a stream over the cap ends with INVALID_ARGUMENT naming the
field, and flow control holds: the server's own counters (``Service.batch_stats``, incremented
by the handler, not mocked) never show more than the window read and unanswered, and a client
that stops reading makes the server stop reading too. Sync and async SDK."""

from __future__ import annotations

import asyncio
import itertools
import json
import queue
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from covr.scale.distractors import Batch, Request, run
from covr.scale.tasks import RelatedOptions
from covr_client import (
    AsyncClient,
    BatchItem,
    BatchResult,
    Client,
    InvalidArgumentError,
)
from covr_client._proto import related_pb2, service_pb2_grpc
from tests.support.service_server import TestServer, running_server

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

IMAGE = "gqa:2370799"
TIMEOUT = 300.0


@pytest.fixture(scope="module")
def image_ids(server: TestServer) -> list[str]:
    with server.client() as c:
        ids = list(c.list_images(timeout=60))
    assert len(ids) >= 20
    return ids[:8]


def test_batch_equals_the_distractors_command(
    server: TestServer, client: Client, image_ids: list[str], tmp_path: Path
) -> None:
    """The same rows, byte for byte, as ``covr distractors`` writes for the same images and
    seed (its run function over the server's own store)."""
    settings = server.settings
    options = RelatedOptions(
        max_distance=2,
        per_signature=settings.related_per_signature,
        positives=settings.related_positives,
        max_subgraphs=3,
        seed=11,
    )
    out = tmp_path / "d.jsonl"
    batch = Batch(settings.tasks, tuple(Request(i) for i in image_ids), options, out, None, 3)
    run(batch, lambda text: None, server.store)
    expected = out.read_text().splitlines()
    results = list(
        client.find_related_images_batch(image_ids, seed=11, max_subgraphs=3, timeout=TIMEOUT)
    )
    got = [json.dumps(row, separators=(",", ":")) for r in results for row in r.rows()]
    assert got == expected
    assert any(row["distractors"] for r in results for row in r.rows())


def test_batch_equals_the_unary_rpc(client: Client, image_ids: list[str]) -> None:
    """Per subgraph the positives and distractors of FindRelatedImages' first page for the
    image (a page as large as the per-signature cap allows; later pages continue the same
    sequence with a token, which a batch record does not)."""
    results = list(
        client.find_related_images_batch(
            image_ids[:3], seed=5, max_subgraphs=4, split="val", timeout=TIMEOUT
        )
    )
    compared = 0
    for result in results:
        assert result.ok, result.problems
        pages = list(
            client.find_related_images(
                image_id=result.image_id,
                seed=5,
                max_subgraphs=4,
                split="val",
                page_size=1000,
                timeout=TIMEOUT,
            )
        )
        assert [p.query.key for p in pages] == [r.subgraph for r in result.records]
        for page, record in zip(pages, result.records, strict=True):
            assert [i.image_id for i in page.positives()] == list(record.positives)
            unary = [
                (i.image_id, i.edit_signature, i.distance, i.matched.key)
                for i in page.distractors()
            ]
            batch = [(d.image_id, d.signature, d.distance, d.subgraph) for d in record.distractors]
            assert unary == batch
            compared += len(batch)
    assert compared > 0


def test_order_tags_and_per_item_problems(client: Client, image_ids: list[str]) -> None:
    a, b, c = image_ids[:3]
    key = client.list_subgraphs(IMAGE, max_subgraphs=2)[1].key
    items: list[str | BatchItem] = [
        BatchItem(c, tag="first"),
        "gqa:no-such-image",
        a,
        BatchItem(IMAGE, subgraphs=(key,), tag="named"),
        BatchItem(IMAGE, subgraphs=("zebra[purple]",), tag="foreign"),
        BatchItem(IMAGE, subgraphs=(key, "man-("), tag="unparsable"),
        BatchItem(b, tag="last"),
    ]
    results = list(
        client.find_related_images_batch(items, seed=2, max_subgraphs=1, timeout=TIMEOUT)
    )
    assert [r.index for r in results] == list(range(len(items)))
    assert [r.tag for r in results] == ["first", "", "", "named", "foreign", "unparsable", "last"]
    assert [r.image_id for r in results] == [
        c,
        "gqa:no-such-image",
        a,
        IMAGE,
        IMAGE,
        IMAGE,
        b,
    ]
    ok = [r.ok for r in results]
    assert ok == [True, False, True, True, False, False, True]
    missing, foreign, unparsable = results[1], results[4], results[5]
    assert [(p.field, p.code) for p in missing.problems] == [("image_id", "NOT_FOUND")]
    assert "gqa:no-such-image" in missing.problems[0].message
    assert [(p.field, p.code) for p in foreign.problems] == [("subgraphs[0]", "NOT_FOUND")]
    assert [(p.field, p.code) for p in unparsable.problems] == [
        ("subgraphs[1]", "INVALID_ARGUMENT")
    ]
    assert [r.subgraph for r in results[3].records] == [key]
    assert all(len(r.records) == 1 for r in results if r.ok and r.tag != "named")
    assert results[0].records[0].positives[0] == c  # the image itself first


def test_bad_options_are_item_problems(client: Client) -> None:
    results = list(
        client.find_related_images_batch(
            [IMAGE, IMAGE], max_distance=3, max_subgraphs=10**6, timeout=TIMEOUT
        )
    )
    for result in results:
        fields = {p.field for p in result.problems}
        assert fields == {"max_distance", "max_subgraphs"}, result.problems
        assert {p.code for p in result.problems} == {"INVALID_ARGUMENT"}


def test_async_client_gives_the_same_answers(server: TestServer, image_ids: list[str]) -> None:
    with server.client() as c:
        expected = list(c.find_related_images_batch(image_ids[:4], seed=4, max_subgraphs=2))

    async def items() -> AsyncIterator[str]:
        for image_id in image_ids[:4]:
            yield image_id

    async def main() -> tuple[list[BatchResult], list[BatchResult]]:
        async with AsyncClient(server.target, timeout=TIMEOUT) as ac:
            from_list = [
                r
                async for r in ac.find_related_images_batch(image_ids[:4], seed=4, max_subgraphs=2)
            ]
            from_async = [
                r async for r in ac.find_related_images_batch(items(), seed=4, max_subgraphs=2)
            ]
        return from_list, from_async

    from_list, from_async = asyncio.run(main())
    assert from_list == expected
    assert from_async == expected


# ---------------------------------------------------------------------- flow control, limits


WINDOW = 8


@pytest.fixture(scope="module")
def small_window() -> Iterator[TestServer]:
    """The embedded store with a small window and item cap: the mechanics do not depend on
    the store."""
    with running_server(service_batch_window=WINDOW, service_batch_max_items=3000) as running:
        yield running


def _requests(
    ids: list[str], count: int, consumed: list[int]
) -> Iterator[related_pb2.FindRelatedImagesBatchRequest]:
    for n, image_id in enumerate(itertools.islice(itertools.cycle(ids), count)):
        consumed[0] = n + 1
        yield related_pb2.FindRelatedImagesBatchRequest(
            image_id=image_id, tag=str(n), max_subgraphs=1, seed=1
        )


def test_two_thousand_ids_from_a_generator_stay_within_the_window(
    small_window: TestServer,
) -> None:
    with small_window.client() as c:
        ids = list(c.list_images(timeout=60))[:20]
    stats = small_window.service.batch_stats
    before = stats.snapshot()
    consumed = [0]
    with grpc.insecure_channel(small_window.target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        answers = stub.FindRelatedImagesBatch(_requests(ids, 2000, consumed), timeout=TIMEOUT)
        seen: list[tuple[int, str, str, int]] = []
        for answer in answers:
            now = stats.snapshot()
            assert now["in_flight"] <= WINDOW
            # read by the server, less answered to us, is bounded by the window plus what
            # gRPC holds on its way to us (~620 answers of this size when the client pauses:
            # the next test), so the server never reads the stream to its end first
            assert now["received"] - before["received"] <= len(seen) + 1 + WINDOW + 1000
            seen.append((answer.index, answer.tag, answer.image_id, len(answer.records)))
    assert [s[0] for s in seen] == list(range(2000))
    assert [s[1] for s in seen] == [str(n) for n in range(2000)]
    assert all(s[3] == 1 for s in seen)
    after = stats.snapshot()
    assert after["received"] - before["received"] == 2000
    assert after["sent"] - before["sent"] == 2000
    assert after["peak_in_flight"] <= WINDOW
    assert after["in_flight"] == 0


def test_a_client_that_stops_reading_stops_the_server_reading(small_window: TestServer) -> None:
    """The client reads one answer and pauses: the server's reads stall at the window (plus
    what the HTTP/2 windows hold), instead of reading and answering all 3,000 items."""
    with small_window.client() as c:
        ids = list(c.list_images(timeout=60))[:20]
    stats = small_window.service.batch_stats
    start = stats.snapshot()["received"]
    consumed = [0]
    options = [("grpc.http2.bdp_probe", 0)]  # keep the client's receive window at 64 KiB
    with grpc.insecure_channel(small_window.target, options=options) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        items = _requests(ids, 3000, consumed)
        answers: Any = stub.FindRelatedImagesBatch(items, timeout=TIMEOUT)
        next(answers)
        readings: list[int] = []
        while len(readings) < 4 or len(set(readings[-4:])) > 1:  # 2 s without a new read
            assert len(readings) < 120, f"the server kept reading a paused client: {readings}"
            time.sleep(0.5)
            readings.append(stats.snapshot()["received"] - start)
        now = stats.snapshot()
        print({"server_reads": readings, "client_generator": consumed[0]})
        assert readings[-1] < 3000
        assert now["in_flight"] <= WINDOW
        assert next(answers).index == 1  # reading again lets the next answers through
        answers.cancel()
    deadline = time.monotonic() + 30
    while stats.snapshot()["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stats.snapshot()["in_flight"] == 0  # the cancelled stream's window was released


def test_a_lock_step_client_does_not_deadlock(small_window: TestServer) -> None:
    """A client that sends the next image only after the previous answer arrived."""
    arrived: queue.Queue[int] = queue.Queue()

    def items() -> Iterator[str]:
        for n in range(5):
            yield IMAGE
            assert arrived.get(timeout=60) == n

    indexes = []
    with small_window.client(timeout=TIMEOUT) as c:
        for result in c.find_related_images_batch(items(), max_subgraphs=1):
            indexes.append(result.index)
            arrived.put(result.index)
    assert indexes == [0, 1, 2, 3, 4]


def test_an_endless_generator_is_read_lazily(small_window: TestServer) -> None:
    produced = [0]

    def endless() -> Iterator[str]:
        for n in itertools.count():
            produced[0] = n + 1
            yield IMAGE

    with small_window.client(timeout=TIMEOUT) as c:
        results: Any = c.find_related_images_batch(endless(), max_subgraphs=1)
        first = list(itertools.islice(results, 10))
        results.close()  # cancels the call
    assert [r.index for r in first] == list(range(10))
    assert produced[0] < 1_000_000
    deadline = time.monotonic() + 30
    while small_window.service.batch_stats.snapshot()["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert small_window.service.batch_stats.snapshot()["in_flight"] == 0


def test_a_stream_over_the_cap_ends_with_invalid_argument(small_window: TestServer) -> None:
    got: list[BatchResult] = []

    def drain(c: Client) -> None:  # items that fail their own checks: the count is what matters
        got.extend(c.find_related_images_batch([BatchItem(" ", tag="x")] * 3001))

    with small_window.client(timeout=TIMEOUT) as c, pytest.raises(InvalidArgumentError) as caught:
        drain(c)
    assert [v.field for v in caught.value.field_violations] == ["requests"]
    assert "3000" in caught.value.message
    assert len(got) <= 3000
    assert [r.index for r in got] == list(range(len(got)))
    assert all(r.problems[0].field == "image_id" for r in got)


def test_the_server_answers_other_calls_after_batches(small_window: TestServer) -> None:
    with small_window.client(timeout=TIMEOUT) as c:
        assert c.health()
        counts: list[int] = []

        def one() -> None:
            counts.append(len(list(c.find_related_images_batch([IMAGE] * 20, max_subgraphs=1))))

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert counts == [20, 20]
        assert c.get_scene_graph(IMAGE).image_id == IMAGE
