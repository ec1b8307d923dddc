"""Fuzzing every RPC with generated requests (hypothesis): malformed, random and edge-case values
through real stubs, plus raw random bytes. Only OK, INVALID_ARGUMENT, NOT_FOUND and
FAILED_PRECONDITION may come back (never UNKNOWN/INTERNAL), and the server stays healthy."""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from covr_client._proto import (
    evaluation_pb2,
    questions_pb2,
    related_pb2,
    scene_pb2,
    service_pb2,
    service_pb2_grpc,
    store_pb2,
)
from tests.integration.service.test_injection import INJECTIONS
from tests.support.service_server import TestServer, running_server
from tests.unit.splits.test_evaluate import GOLD as EVAL_GOLD

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ALLOWED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
}
EXAMPLES = 3_000
STREAMING = {
    m.name
    for m in service_pb2.DESCRIPTOR.services_by_name["CovrService"].methods
    if m.client_streaming or m.server_streaming
}
CHEAP_EXAMPLES = 7_500
BATCH = 10
TOTAL: Counter[str] = Counter()
GOLD_LINES = [json.dumps(e) for e in EVAL_GOLD]
METHODS = [m.name for m in service_pb2.DESCRIPTOR.services_by_name["CovrService"].methods]

text = st.one_of(
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
    st.sampled_from(INJECTIONS),
    st.sampled_from(
        ["", " ", "\x00", "gqa:2370799", "vg:1", "man", "hat", "red", "wearing", "val"]
    ),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", "é", "'", "\\"]), st.integers(4000, 5000)),
)
names = st.one_of(
    st.sampled_from(["man", "hat", "shirt", "table", "red", "on", "wearing", "dog"]), text
)
u32 = st.one_of(st.integers(0, 10), st.integers(0, 2**32 - 1))
u64 = st.integers(0, 2**64 - 1)


@st.composite
def subgraph_refs(draw: st.DrawFn) -> scene_pb2.SubgraphRef:
    if draw(st.booleans()):
        return scene_pb2.SubgraphRef(
            key=draw(
                st.one_of(
                    text,
                    st.sampled_from(
                        ["man", "man[tall]-(wearing)->hat[red]", "man-(", "a-(b)->c-(d)->e-(f)->g"]
                    ),
                )
            )
        )
    n = draw(st.integers(0, 4))
    objects = [
        scene_pb2.SubgraphObject(
            name=draw(names), **({"attribute": draw(names)} if draw(st.booleans()) else {})
        )
        for _ in range(n)
    ]
    relations = [
        scene_pb2.SubgraphRelation(
            name=draw(names), subject=draw(st.integers(0, 5)), object=draw(st.integers(0, 5))
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    relmods = [
        scene_pb2.SubgraphRelMod(
            name=draw(names), relation=draw(st.integers(0, 3)), object=draw(st.integers(0, 5))
        )
        for _ in range(draw(st.integers(0, 1)))
    ]
    if draw(st.integers(0, 20)) == 0:
        return scene_pb2.SubgraphRef()
    return scene_pb2.SubgraphRef(
        subgraph=scene_pb2.Subgraph(objects=objects, relations=relations, relmods=relmods)
    )


@st.composite
def scene_graphs(draw: st.DrawFn) -> scene_pb2.SceneGraph:
    ids = draw(st.lists(st.one_of(st.sampled_from(["1", "2", "3"]), text), max_size=4))
    msg = scene_pb2.SceneGraph(
        source=draw(st.one_of(st.sampled_from(["fz", "gqa", "Bad", ""]), text)),
        original_id=draw(text),
        split=draw(st.one_of(st.just("val"), text)),
        image_id=draw(st.one_of(st.just(""), text)),
    )
    if draw(st.booleans()):
        msg.width = draw(st.floats(allow_nan=True, allow_infinity=True))
    for object_id in ids:
        obj = msg.objects.add(
            id=object_id, name=draw(names), attributes=draw(st.lists(names, max_size=2))
        )
        if draw(st.booleans()):
            obj.box.CopyFrom(
                scene_pb2.Box(x=draw(st.floats()), y=1, w=draw(st.floats(0, 1e6)), h=30)
            )
    for _ in range(draw(st.integers(0, 2))):
        rel = msg.relations.add(
            id=draw(text),
            name=draw(names),
            subject=draw(st.one_of(st.sampled_from(ids or ["1"]), text)),
            object=draw(st.one_of(st.sampled_from(ids or ["1"]), text)),
        )
        if draw(st.booleans()):
            rel.mods.add(
                id=draw(text), name=draw(names), object=draw(st.sampled_from(ids or ["1"]))
            )
    if draw(st.booleans()):
        key = draw(st.one_of(st.sampled_from(["note", "id", "Bad Key", "location"]), text))
        scalar = msg.extras[key]
        choice = draw(st.integers(0, 4))
        if choice == 0:
            scalar.string_value = draw(text)
        elif choice == 1:
            scalar.int_value = draw(st.integers(-(2**63), 2**63 - 1))
        elif choice == 2:
            scalar.double_value = draw(st.floats())
        elif choice == 3:
            scalar.bool_value = draw(st.booleans())
    return msg


def _imports(draw: st.DrawFn) -> tuple[str, Any]:
    items: list[store_pb2.ImportSceneGraphsRequest] = []
    if draw(st.booleans()):
        items.append(
            store_pb2.ImportSceneGraphsRequest(
                options=store_pb2.ImportOptions(
                    strict=draw(st.booleans()), dry_run=draw(st.booleans())
                )
            )
        )
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.integers(0, 6))
        if kind == 0:
            items.append(store_pb2.ImportSceneGraphsRequest())
        elif kind == 1:
            items.append(store_pb2.ImportSceneGraphsRequest(options=store_pb2.ImportOptions()))
        else:
            items.append(store_pb2.ImportSceneGraphsRequest(scene_graph=draw(scene_graphs())))
    return "ImportSceneGraphs", items


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, Any]:
    which = draw(st.sampled_from(range(14)))
    if which == 0:
        return "GetSceneGraph", store_pb2.GetSceneGraphRequest(image_id=draw(text))
    if which == 1:
        return "ListImages", store_pb2.ListImagesRequest(
            source=draw(st.one_of(st.just(""), text)),
            split=draw(st.one_of(st.just(""), text)),
            page_size=draw(u32),
            page_token=draw(
                st.one_of(
                    st.just(""),
                    text,
                    st.sampled_from(
                        [
                            "eyJhZnRlciI6MX0",
                            "eyJhZnRlciI6ImEiLCJzb3VyY2UiOiIiLCJzcGxpdCI6IiJ9",
                            "W10",
                        ]
                    ),
                )
            ),
            max_pages=draw(st.integers(0, 2)),
        )
    if which == 2:
        return "ListSubgraphs", store_pb2.ListSubgraphsRequest(
            image_id=draw(text), max_subgraphs=draw(u32)
        )
    if which == 3:
        return "GetStatistics", store_pb2.GetStatisticsRequest()
    if which in (4, 5):
        request = related_pb2.FindRelatedImagesRequest(
            split=draw(st.one_of(st.just(""), text)),
            seed=draw(u64),
            page_size=draw(u32),
            page_token=draw(st.one_of(st.just(""), text)),
            max_results=draw(st.integers(0, 20)),
            max_distance=draw(st.one_of(st.integers(0, 3), u32)),
            per_signature_cap=draw(u32),
            exclude_positives=draw(st.booleans()),
            exclude_distractors=draw(st.booleans()),
            skip_presence_filter=draw(st.booleans()),
            max_subgraphs=draw(st.one_of(st.integers(0, 3), u32)),
        )
        target = draw(st.integers(0, 2))
        if target == 0:
            request.subgraph.CopyFrom(draw(subgraph_refs()))
        elif target == 1:
            request.image_id = draw(st.one_of(st.sampled_from(["gqa:2370799", "vg:1"]), text))
        return "FindRelatedImages", request
    if which == 6:
        pairs = [
            related_pb2.TermPair(
                node_type=draw(st.integers(0, 6)),  # type: ignore[arg-type]
                x=draw(names),
                x_prime=draw(names),
            )
            for _ in range(draw(st.integers(0, 4)))
        ]
        return "ScoreExclusivity", related_pb2.ScoreExclusivityRequest(pairs=pairs)
    if which == 7:
        queries = [
            related_pb2.PresenceQuery(
                subgraph=draw(subgraph_refs()),
                image_id=draw(st.one_of(st.just("gqa:2370799"), text)),
                image_features=draw(st.lists(st.floats(width=32), max_size=3)),
            )
            for _ in range(draw(st.integers(0, 3)))
        ]
        return "ScorePresence", related_pb2.ScorePresenceRequest(queries=queries)
    if which == 8:
        return "GetModelInfo", related_pb2.GetModelInfoRequest()
    if which == 9:
        request_q = questions_pb2.GenerateQuestionsRequest(
            templates=draw(st.lists(names, max_size=3)),
            count=draw(st.one_of(st.integers(0, 5), u32)),
            seed=draw(u64),
            split=draw(st.one_of(st.just(""), text)),
        )
        if draw(st.booleans()):
            real = draw(st.integers(0, 9)) == 0
            request_q.image_id = "gqa:2370799" if real else draw(text)
            if real:  # a real generation takes seconds: few seeds, so the lookup caches serve
                request_q.seed = draw(st.sampled_from([1, 2]))
        elif draw(st.booleans()):
            if draw(st.integers(0, 9)) == 0:  # a subgraph of the samples: real generation
                request_q.subgraph.key = draw(st.sampled_from(["tree", "man[young]", "man"]))
                request_q.seed = draw(st.sampled_from([1, 2]))
            else:
                request_q.subgraph.CopyFrom(draw(subgraph_refs()))
        return "GenerateQuestions", request_q
    if which == 10:
        return _imports(draw)
    if which == 11:
        gold = draw(st.lists(st.one_of(st.sampled_from(GOLD_LINES), text), max_size=4))
        request_e = evaluation_pb2.EvaluateRequest(
            gold_examples=gold,
            predictions=draw(st.dictionaries(st.one_of(st.just("e1"), text), text, max_size=3)),
            easiness=draw(st.dictionaries(text, st.floats(allow_nan=True), max_size=2)),
            seed=draw(u64),
        )
        if draw(st.booleans()):
            request_e.text_accuracy = draw(st.floats(allow_nan=True))
        if draw(st.booleans()):
            request_e.iid_size_accuracy = draw(st.floats(allow_nan=True))
        return "Evaluate", request_e
    if which == 12:
        return "FindRelatedImagesBatch", [
            draw(batch_items()) for _ in range(draw(st.integers(0, 3)))
        ]
    return "raw:" + draw(st.sampled_from(METHODS)), draw(st.binary(max_size=64))


@st.composite
def batch_items(draw: st.DrawFn) -> related_pb2.FindRelatedImagesBatchRequest:
    """One image of a batch stream; a real image only with few subgraphs (a full image is
    hundreds of lookups)."""
    real = draw(st.integers(0, 4)) == 0
    keys = st.one_of(text, st.sampled_from(["man", "man[young]", "tree", "man-(", "zebra"]))
    return related_pb2.FindRelatedImagesBatchRequest(
        image_id="gqa:2370799" if real else draw(text),
        subgraphs=draw(st.lists(keys, max_size=3)),
        tag=draw(st.one_of(st.just(""), text)),
        split=draw(st.one_of(st.just(""), text)),
        seed=draw(st.sampled_from([1, 2])) if real else draw(u64),
        max_distance=draw(st.one_of(st.integers(0, 3), u32)),
        per_signature_cap=draw(st.one_of(st.integers(0, 5), u32)),
        max_positives=draw(st.one_of(st.integers(0, 5), u32)),
        max_subgraphs=draw(st.integers(1, 2)) if real else draw(u32),
        skip_presence_filter=draw(st.booleans()),
        skip_exclusivity_model=draw(st.booleans()),
    )


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[TestServer]:
    with running_server() as running:
        yield running


def test_fuzz_every_rpc(fuzz_server: TestServer) -> None:
    codes: Counter[tuple[str, str]] = Counter()
    spent: dict[str, float] = defaultdict(float)
    channel = grpc.insecure_channel(fuzz_server.target)
    stub = service_pb2_grpc.CovrServiceStub(channel)

    def raw_call(method: str, payload: bytes) -> Any:
        desc = service_pb2.DESCRIPTOR.services_by_name["CovrService"].methods_by_name[method]
        path = f"/covr.v1.CovrService/{method}"
        if desc.client_streaming and desc.server_streaming:
            return list(channel.stream_stream(path, None, None)(iter([payload]), timeout=30))
        if desc.client_streaming:
            return channel.stream_unary(path, None, None)(iter([payload]), timeout=30)
        if desc.server_streaming:
            return list(channel.unary_stream(path, None, None)(payload, timeout=30))
        return channel.unary_unary(path, None, None)(payload, timeout=30)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(requests())
    def one(item: tuple[str, Any]) -> None:
        method, request = item
        started = time.perf_counter()
        try:
            if method.startswith("raw:"):
                raw_call(method[4:], request)
            else:
                fn: Callable[..., Any] = getattr(stub, method)
                client_stream = method in ("ImportSceneGraphs", "FindRelatedImagesBatch")
                result = fn(iter(request) if client_stream else request, timeout=30)
                if method in STREAMING - {"ImportSceneGraphs"}:
                    for _ in itertools.islice(result, 3):
                        pass
                    result.cancel()
            code = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            code = exc.code()
            details = exc.details()
            assert code in ALLOWED, f"{method} {request!r:.300} -> {code} {details}"
        name = method.split(":")[0] if method.startswith("raw") else method
        codes[(name, code.name)] += 1
        spent[name] += time.perf_counter() - started

    try:
        one()
        assert sum(codes.values()) >= EXAMPLES
        TOTAL["requests"] += sum(codes.values())
        per_method = Counter(m for m, _ in codes.elements())
        assert len(per_method) == len(METHODS) + 1  # every RPC plus raw bytes
        with grpc.insecure_channel(fuzz_server.target) as probe:
            reply = health_pb2_grpc.HealthStub(probe).Check(
                health_pb2.HealthCheckRequest(), timeout=5
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            assert (
                service_pb2_grpc.CovrServiceStub(probe)
                .GetStatistics(store_pb2.GetStatisticsRequest(), timeout=10)
                .totals.images
                >= 24
            )
    finally:
        channel.close()
        print(sorted(codes.items()))
        print({k: round(v, 2) for k, v in spent.items()})


@st.composite
def cheap_requests(draw: st.DrawFn) -> tuple[str, Any]:
    """Single-field requests: many of them per second, so the total passes 10,000 quickly."""
    which = draw(st.sampled_from(range(5)))
    value = draw(text)
    if which == 0:
        return "GetSceneGraph", store_pb2.GetSceneGraphRequest(image_id=value)
    if which == 1:
        return "ListSubgraphs", store_pb2.ListSubgraphsRequest(image_id=value, max_subgraphs=3)
    if which == 2:
        request = related_pb2.FindRelatedImagesRequest(seed=1, max_results=0)
        request.subgraph.key = value
        return "FindRelatedImages", request
    if which == 3:
        return "ListImages", store_pb2.ListImagesRequest(page_token=value, page_size=5, max_pages=1)
    unary = [m for m in METHODS if m not in STREAMING]
    return "raw:" + draw(st.sampled_from(unary)), value.encode()[:64]


def test_fuzz_many_cheap_requests(fuzz_server: TestServer) -> None:
    codes: Counter[str] = Counter()
    with grpc.insecure_channel(fuzz_server.target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)

        @settings(
            max_examples=CHEAP_EXAMPLES // BATCH,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.lists(cheap_requests(), min_size=BATCH, max_size=BATCH))
        def many(items: list[tuple[str, Any]]) -> None:
            for item in items:
                one(item)

        def one(item: tuple[str, Any]) -> None:
            method, request = item
            details = ""
            try:
                if method.startswith("raw:"):
                    path = f"/covr.v1.CovrService/{method[4:]}"
                    channel.unary_unary(path, None, None)(request, timeout=30)
                else:
                    result = getattr(stub, method)(request, timeout=30)
                    if method in ("ListImages", "FindRelatedImages"):
                        list(result)
                code = grpc.StatusCode.OK
            except grpc.RpcError as exc:
                code, details = exc.code(), exc.details() or ""
            assert code in ALLOWED, f"{method} {request!r:.300} -> {code} {details}"
            codes[code.name] += 1

        many()
    TOTAL["requests"] += sum(codes.values())
    print(dict(codes))
    assert sum(codes.values()) >= CHEAP_EXAMPLES


def test_fuzzing_sent_at_least_ten_thousand_requests() -> None:
    """Runs after the two fuzz tests of this module (file order)."""
    assert TOTAL["requests"] >= 10_000
