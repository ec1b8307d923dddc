"""Mutated valid requests for every RPC, on both backends (issue 21, item 6).

tests/integration/service/test_fuzz.py draws requests from scratch on the embedded store; most
are refused at their first check. Here each request starts as one the service answers (an
image, a subgraph, a template that exist in the samples) and one to three of its fields are
changed through protobuf reflection (a string made hostile, a number at its type's edge, a
list emptied or repeated, a sub-message cleared), or its encoded bytes are changed; so the
checks deep in each RPC, and the store queries behind them, get the odd value with everything
else right. Only OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION and OUT_OF_RANGE may come
back, never UNKNOWN or INTERNAL, on the embedded FalkorDB and on the managed Neo4j.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from collections.abc import Iterator
from typing import Any, cast

import grpc
import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
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
from tests.fuzz.strategies import HOSTILE_TEXT
from tests.support.service_server import TestServer
from tests.unit.splits.test_evaluate import GOLD, PREDICTIONS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ALLOWED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.OUT_OF_RANGE,
}
EXAMPLES = 200
IMAGE = "gqa:2370799"
METHODS = service_pb2.DESCRIPTOR.services_by_name["CovrService"].methods_by_name


def _scene_graph() -> scene_pb2.SceneGraph:
    graph = scene_pb2.SceneGraph(source="fzm", original_id="1", split="val")
    graph.objects.add(id="1", name="man", attributes=["tall"])
    graph.objects.add(id="2", name="hat")
    graph.relations.add(id="r", name="wearing", subject="1", object="2")
    return graph


def valid_requests() -> dict[str, list[Message]]:
    """One request per RPC that the service answers with OK on the bundled samples."""
    related = related_pb2.FindRelatedImagesRequest(seed=1, max_results=5, page_size=5)
    related.subgraph.key = "man"
    batch: list[Message] = [
        related_pb2.FindRelatedImagesBatchRequest(image_id=IMAGE, max_subgraphs=1, seed=1, tag="a"),
        related_pb2.FindRelatedImagesBatchRequest(image_id=IMAGE, subgraphs=["man"], seed=1),
    ]
    presence = related_pb2.PresenceQuery(image_id=IMAGE)
    presence.subgraph.key = "man"
    return {
        "GetSceneGraph": [store_pb2.GetSceneGraphRequest(image_id=IMAGE)],
        "ListImages": [store_pb2.ListImagesRequest(page_size=5, max_pages=1)],
        "ListSubgraphs": [store_pb2.ListSubgraphsRequest(image_id=IMAGE, max_subgraphs=5)],
        "GetStatistics": [store_pb2.GetStatisticsRequest()],
        "FindRelatedImages": [related],
        "FindRelatedImagesBatch": batch,
        "ScoreExclusivity": [
            related_pb2.ScoreExclusivityRequest(
                pairs=[related_pb2.TermPair(node_type=1, x="man", x_prime="woman")]  # type: ignore[arg-type]
            )
        ],
        "ScorePresence": [related_pb2.ScorePresenceRequest(queries=[presence])],
        "GetModelInfo": [related_pb2.GetModelInfoRequest()],
        "GenerateQuestions": [
            questions_pb2.GenerateQuestionsRequest(image_id=IMAGE, count=3, seed=1)
        ],
        "ImportSceneGraphs": [
            store_pb2.ImportSceneGraphsRequest(options=store_pb2.ImportOptions(dry_run=True)),
            store_pb2.ImportSceneGraphsRequest(scene_graph=_scene_graph()),
        ],
        "Evaluate": [
            evaluation_pb2.EvaluateRequest(
                gold_examples=[json.dumps(e) for e in GOLD],
                predictions={q: json.dumps(a) for q, a in PREDICTIONS.items()},
            )
        ],
    }


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


WIRE_TEXT = [t for t in HOSTILE_TEXT if _encodable(t)]
"""The hostile strings a protobuf string can hold (lone surrogates reach the service only as
invalid UTF-8 bytes: the byte mutations)."""

INT_EDGES = {
    FieldDescriptor.TYPE_UINT32: [0, 1, 2**31, 2**32 - 1],
    FieldDescriptor.TYPE_UINT64: [0, 1, 2**63, 2**64 - 1],
    FieldDescriptor.TYPE_INT32: [-(2**31), -1, 0, 2**31 - 1],
    FieldDescriptor.TYPE_INT64: [-(2**63), -1, 0, 2**63 - 1],
    FieldDescriptor.TYPE_ENUM: [0, 1, 7, 2**31 - 1, -1],
}
FLOATS = [math.nan, math.inf, -math.inf, -1.0, 0.0, 1e308]


def _places(message: Message, depth: int = 0) -> list[tuple[Message, Any]]:
    """Every (message, field) a mutation may change, sub-messages that are set included."""
    out: list[tuple[Message, Any]] = []
    for field in cast(Any, message.DESCRIPTOR).fields:
        out.append((message, field))
        if depth >= 3 or field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if field.message_type.GetOptions().map_entry:
            continue
        value = getattr(message, field.name)
        if _is_repeated(field):
            for item in value:
                out.extend(_places(item, depth + 1))
        elif message.HasField(field.name):
            out.extend(_places(value, depth + 1))
    return out


def _is_repeated(field: Any) -> bool:
    if hasattr(field, "is_repeated"):  # protobuf 6+; ``label`` is gone from upb descriptors
        return bool(field.is_repeated)
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)


def _scalar(draw: st.DrawFn, field: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_STRING:
        return draw(st.one_of(st.sampled_from(WIRE_TEXT), st.text(max_size=20)))
    if field.type == FieldDescriptor.TYPE_BYTES:
        return draw(st.binary(max_size=40))
    if field.type == FieldDescriptor.TYPE_BOOL:
        return draw(st.booleans())
    if field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return draw(st.sampled_from(FLOATS))
    return draw(st.sampled_from(INT_EDGES.get(field.type, [0, 1])))


@st.composite
def mutate(draw: st.DrawFn, original: Message) -> Message:
    """A copy of ``original`` with one to three fields changed."""
    message = type(original)()
    message.CopyFrom(original)
    for _ in range(draw(st.integers(1, 3))):
        places = _places(message)
        if not places:  # a request without fields (GetStatistics): only its bytes can change
            break
        target, field = draw(st.sampled_from(places))
        field = cast(Any, field)
        value = getattr(target, field.name)
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                target.ClearField(field.name)
            else:
                value[draw(st.sampled_from(WIRE_TEXT))] = _scalar(draw, value_field)
        elif _is_repeated(field):
            action = draw(st.integers(0, 2))
            if action == 0 or (action == 1 and not len(value)):
                target.ClearField(field.name)
            elif action == 1:  # the same entry many times
                first = value[0]
                for _ in range(draw(st.sampled_from([2, 50, 300]))):
                    if field.type == FieldDescriptor.TYPE_MESSAGE:
                        value.add().CopyFrom(first)
                    else:
                        value.append(first)
            elif field.type != FieldDescriptor.TYPE_MESSAGE:
                value.append(_scalar(draw, field))
            else:
                value.add()  # an empty entry
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            target.ClearField(field.name)
            if draw(st.booleans()):
                getattr(target, field.name).SetInParent()  # present but empty
        else:
            setattr(target, field.name, _scalar(draw, field))
    return message


@st.composite
def mutated_calls(draw: st.DrawFn) -> tuple[str, Any]:
    """``(method, request)``: a request object, a list of them (client streams), or raw
    bytes."""
    bases = valid_requests()
    method = draw(st.sampled_from(sorted(bases)))
    items = bases[method]
    if draw(st.integers(0, 5)) == 0:  # the encoded bytes changed instead
        raw = bytearray(items[-1].SerializeToString())
        for _ in range(draw(st.integers(1, 3))):
            if raw:
                raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
        return "raw:" + method, bytes(raw)
    chosen = draw(st.integers(0, len(items) - 1))
    mutated = [draw(mutate(m)) if i == chosen else m for i, m in enumerate(items)]
    return method, mutated if METHODS[method].client_streaming else mutated[0]


def call(channel: grpc.Channel, method: str, request: Any) -> grpc.StatusCode:
    """The status of one call (streams: the first three messages, then cancelled)."""
    name = method.removeprefix("raw:")
    desc = METHODS[name]
    path = f"/covr.v1.CovrService/{name}"
    try:
        if method.startswith("raw:"):
            if desc.client_streaming and desc.server_streaming:
                both: Any = channel.stream_stream(path, None, None)(iter([request]), timeout=30)
                list(itertools.islice(both, 3))
                both.cancel()
            elif desc.client_streaming:
                channel.stream_unary(path, None, None)(iter([request]), timeout=30)
            elif desc.server_streaming:
                stream: Any = channel.unary_stream(path, None, None)(request, timeout=30)
                list(itertools.islice(stream, 3))
                stream.cancel()
            else:
                channel.unary_unary(path, None, None)(request, timeout=30)
            return grpc.StatusCode.OK
        stub = service_pb2_grpc.CovrServiceStub(channel)
        fn = getattr(stub, name)
        result = fn(iter(request) if desc.client_streaming else request, timeout=30)
        if desc.server_streaming:
            list(itertools.islice(result, 3))
            result.cancel()
    except grpc.RpcError as exc:
        code: grpc.StatusCode = exc.code()
        details = exc.details()
    else:
        return grpc.StatusCode.OK
    if code is grpc.StatusCode.CANCELLED and desc.server_streaming:
        return grpc.StatusCode.OK  # our own cancel after three messages
    assert code in ALLOWED, f"{method} {request!r:.400} -> {code} {details}"
    return code


@pytest.fixture(scope="module")
def channel(server: TestServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target) as opened:
        yield opened


def test_the_unmutated_requests_succeed(channel: grpc.Channel) -> None:
    """The base of the mutations: each one is answered with OK."""
    for method, items in valid_requests().items():
        request = items if METHODS[method].client_streaming else items[0]
        assert call(channel, method, request) is grpc.StatusCode.OK, method


def test_mutated_requests_get_only_client_error_codes(channel: grpc.Channel) -> None:
    codes: Counter[tuple[str, str]] = Counter()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,  # the same requests in every run
        suppress_health_check=list(HealthCheck),
    )
    @given(mutated_calls())
    def one(item: tuple[str, Any]) -> None:
        method, request = item
        codes[(method, call(channel, method, request).name)] += 1

    one()
    print(sorted(codes.items()))
    assert len({m.removeprefix("raw:") for m, _ in codes}) == len(METHODS)
