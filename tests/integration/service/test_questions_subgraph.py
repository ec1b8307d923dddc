"""GenerateQuestions with a subgraph as the source, on a real server over the embedded store with
the bundled samples: answers re-executed by the independent oracle, equal to the engine called
directly, the source image a seeded positive in the requested split, bad input, deadline,
cancellation, and the SDK's sync and async methods."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import grpc
import pytest

from covr.related import matcher as reference
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph as DomainSubgraph
from covr_client import (
    AsyncClient,
    Client,
    DeadlineExceededError,
    Example,
    InvalidArgumentError,
    NotFoundError,
    Subgraph,
    SubgraphObject,
    SubgraphRelation,
)
from covr_client._proto import questions_pb2, scene_pb2, service_pb2_grpc
from covr_client.config import NO_RETRY
from covr_loaders.readback import get_scene_graph
from tests.integration.service.conftest import rpc_code
from tests.support.question_oracle import Fail, Oracle
from tests.support.recording_store import RecordingStore
from tests.support.service_server import TestServer, running_server

pytestmark = pytest.mark.integration

KEYS = ("man[young]-(riding)->skateboard", "plate[round]-(on)->table", "tree")
"""Subgraphs of the samples' GQA val images: two one-hop subgraphs and a bare noun (it occurs in
two val images, so the source choice has something to choose from)."""


def _rows(steps: Sequence[Any]) -> list[dict[str, Any]]:
    """A program as received over the wire, back in the JSONL layout the oracle reads."""
    return [
        {
            "operation": s.operation,
            "arguments": [_rows(a) if isinstance(a, tuple) else a for a in s.arguments],
            "dependencies": list(s.dependencies),
        }
        for s in steps
    ]


def _scene(server: TestServer, image_id: str) -> SceneGraph:
    graph = get_scene_graph(server.store, image_id)
    assert graph is not None, image_id
    return graph


def _check_executed(server: TestServer, key: str, examples: Sequence[Example]) -> None:
    """Every example is about ``key``, its answer is what the oracle computes from its program
    over the stored scene graphs of its images, and its images are positives or distractors."""
    g = DomainSubgraph.from_key(key)
    for ex in examples:
        scenes = {i: _scene(server, i) for i in ex.scenes}
        assert ex.subgraphs["g"] == key
        assert reference.contains(scenes.get(ex.source_image) or _scene(server, ex.source_image), g)
        answer = Oracle(scenes.values()).run(_rows(ex.program))
        assert not isinstance(answer, Fail), (ex.utterance, answer)
        assert answer == ex.answer, ex.utterance
        assert type(answer) is type(ex.answer)
        for image_id, signatures in ex.signatures.items():
            assert reference.contains(scenes[image_id], g) == (not signatures), image_id


def test_questions_about_a_subgraph_are_executed_and_about_it(
    server: TestServer, client: Client
) -> None:
    templates: set[str] = set()
    for key in KEYS:
        examples = list(client.generate_questions(subgraph=key, seed=3, split="val", count=1000))
        assert examples, key
        assert {e.split for e in examples} == {"val"}
        assert len({e.source_image for e in examples}) == 1
        assert all(e.seed == 3 for e in examples)
        assert len({e.qid for e in examples}) == len(examples)
        _check_executed(server, key, examples)
        templates |= {e.template for e in examples}
    assert len(templates) >= 12  # the same template machinery as the image path, not a subset


def test_subgraph_questions_equal_the_engine_on_the_same_store(
    server: TestServer, client: Client
) -> None:
    from covr.questions.generate import (
        GenerationOptions,
        choose_source_image,
        generate_for_subgraph,
    )
    from covr.related.filters import build_lookup
    from covr.related.store_provider import StoreRelated

    settings = server.service.settings
    lookup = build_lookup(server.store, settings.related, settings.models)
    provider = StoreRelated(lookup)
    key = KEYS[0]
    g = DomainSubgraph.from_key(key)
    limit = settings.questions.questions_positives + 1
    positives = lookup.positives(g, split="val", limit=limit, seed=11)
    source = choose_source_image(positives, g, 11)
    expected = generate_for_subgraph(
        provider,
        GenerationOptions.from_settings(
            settings.questions, settings.related, split="val", seed=11, templates=()
        ),
        g,
        source,
    )
    got = list(client.generate_questions(subgraph=key, seed=11, split="val", count=1000))
    assert [e.qid for e in got] == [e["qid"] for e in expected]
    assert [e.answer for e in got] == [e["answer"] for e in expected]
    assert [list(e.scenes) for e in got] == [e["scenes"] for e in expected]
    assert {e.source_image for e in got} == {source}
    # Same request, same data: same examples; a subgraph given by its parts is the same request.
    parts = Subgraph(
        (SubgraphObject("man", "young"), SubgraphObject("skateboard")),
        (SubgraphRelation("riding", 0, 1),),
    )
    again = list(client.generate_questions(subgraph=parts, seed=11, split="val", count=1000))
    assert again == got


def test_the_source_image_is_a_seeded_positive_in_the_requested_split(
    server: TestServer, client: Client
) -> None:
    g = DomainSubgraph.from_key("tree")
    sources: set[str] = set()
    for seed in range(12):
        first = next(client.generate_questions(subgraph="tree", seed=seed, split="val", count=1))
        again = next(client.generate_questions(subgraph="tree", seed=seed, split="val", count=1))
        assert first == again
        sources.add(first.source_image)
    assert len(sources) >= 2  # a choice, not the first image in store order
    for image_id in sources:
        scene = _scene(server, image_id)
        assert scene.split == "val"
        assert reference.contains(scene, g)
    # "man" occurs in GQA val and imSitu dev images: the split decides where the source comes from.
    man = DomainSubgraph.from_key("man")
    for split in ("val", "dev"):
        examples = list(client.generate_questions(subgraph="man", seed=1, split=split, count=50))
        if not examples:
            # Issue 16 item 1: every example shows a distractor, and the store lookup finds no
            # image set with one for the bare "man" in the small samples (in memory it does);
            # what matters here is that none comes from another split.
            # TODO(issue 16): a fixture with distractors for "man" in both splits.
            continue
        source = _scene(server, examples[0].source_image)
        assert source.split == split
        assert reference.contains(source, man)
        assert all(_scene(server, i).split == split for e in examples for i in e.scenes)
    # Without a split: a positive of any split, whose split the examples then use.
    examples = list(client.generate_questions(subgraph="man", seed=1, count=50))
    # (may be empty when the seeded source is the GQA val one: see above)
    assert len({e.split for e in examples}) <= 1
    if examples:
        assert {e.split for e in examples} == {_scene(server, examples[0].source_image).split}


def test_count_and_templates_apply(client: Client) -> None:
    key = KEYS[0]
    assert len(list(client.generate_questions(subgraph=key, seed=3, split="val", count=2))) == 2
    only = list(
        client.generate_questions(subgraph=key, seed=3, split="val", templates=["query_attr"])
    )
    assert only
    assert {e.template for e in only} == {"query_attr"}


def test_bad_subgraphs_are_invalid_argument_with_field_violations(client: Client) -> None:
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(subgraph="man-(wearing", seed=1))
    assert err.value.field_violations[0].field == "subgraph.key"
    repeated = Subgraph(
        (SubgraphObject("man"), SubgraphObject("man")), (SubgraphRelation("near", 0, 1),)
    )
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(subgraph=repeated))
    assert err.value.field_violations[0].field == "subgraph.subgraph"
    assert "repeated-noun" in err.value.field_violations[0].description
    dangling = Subgraph((SubgraphObject("man"),), (SubgraphRelation("near", 0, 3),))
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(subgraph=dangling))
    assert err.value.field_violations[0].field == "subgraph.subgraph"
    too_deep = "a-(b)->c-(d)->e-(f)->g"  # three relations on one root-to-leaf path
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(subgraph=too_deep))
    assert err.value.field_violations[0].field == "subgraph.key"
    unnamed = Subgraph((SubgraphObject(""), SubgraphObject("hat", " ")))
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(subgraph=unnamed))
    assert [v.field for v in err.value.field_violations] == [
        "subgraph.subgraph.objects[0].name",
        "subgraph.subgraph.objects[1].attribute",
    ]
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(subgraph="tree", templates=["no_such_template"]))
    assert err.value.field_violations[0].field == "templates"
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(subgraph="tree", seed=2**63))
    assert err.value.field_violations[0].field == "seed"


def test_raw_subgraph_requests(stub: service_pb2_grpc.CovrServiceStub) -> None:
    empty_ref = questions_pb2.GenerateQuestionsRequest(subgraph=scene_pb2.SubgraphRef())
    assert rpc_code(stub.GenerateQuestions, empty_ref) is grpc.StatusCode.INVALID_ARGUMENT
    no_objects = questions_pb2.GenerateQuestionsRequest(
        subgraph=scene_pb2.SubgraphRef(subgraph=scene_pb2.Subgraph())
    )
    assert rpc_code(stub.GenerateQuestions, no_objects) is grpc.StatusCode.INVALID_ARGUMENT


def test_a_subgraph_no_stored_image_contains_is_not_found(client: Client) -> None:
    with pytest.raises(NotFoundError, match="no stored image contains"):
        next(client.generate_questions(subgraph="unicorn[purple]-(riding)->skateboard"))
    with pytest.raises(NotFoundError, match="of split 'dev'"):
        next(client.generate_questions(subgraph=KEYS[0], split="dev"))  # only in GQA val
    with pytest.raises(NotFoundError):
        next(client.generate_questions(subgraph="tree", split="no-such-split"))


def test_deadline_and_cancellation(server: TestServer) -> None:
    slow = RecordingStore(server.store, delay=0.3)
    with running_server(store=slow) as own, own.client(retry=NO_RETRY) as client:
        with pytest.raises(DeadlineExceededError):
            list(client.generate_questions(subgraph="tree", seed=99, split="val", timeout=0.5))
        # Cancelled while the server still generates (every store read takes 0.3 s here, so it
        # cannot have answered yet): the call ends CANCELLED, the server stops reading for it at
        # its next store read, and keeps serving.
        with grpc.insecure_channel(own.target) as channel:
            stub = service_pb2_grpc.CovrServiceStub(channel)
            request = questions_pb2.GenerateQuestionsRequest(
                subgraph=scene_pb2.SubgraphRef(key=KEYS[0]), seed=98, split="val", count=1000
            )
            call: Any = stub.GenerateQuestions(request, timeout=3)  # bounds the server work
            time.sleep(0.5)
            call.cancel()
            assert call.code() is grpc.StatusCode.CANCELLED
            assert client.health()
            time.sleep(0.5)  # the read in flight ends; the next one is refused
            reads = len(slow.timeouts)
            time.sleep(1.0)  # three more reads without the cancel check
            assert len(slow.timeouts) == reads
    with grpc.insecure_channel(server.target) as channel:
        # The first message of a normal call names the subgraph; leaving early is fine.
        stub = service_pb2_grpc.CovrServiceStub(channel)
        request.seed = 3
        first: Any = stub.GenerateQuestions(request, timeout=30)
        assert next(first).examples[0].provenance.subgraphs["g"] == KEYS[0]
        first.cancel()
        assert rpc_code(stub.GenerateQuestions, request) is grpc.StatusCode.OK


def test_async_client_generates_for_a_subgraph(server: TestServer, client: Client) -> None:
    expected = list(client.generate_questions(subgraph=KEYS[1], seed=4, split="val", count=1000))

    async def run() -> list[Example]:
        async with AsyncClient(server.target, timeout=30) as aclient:
            with pytest.raises(InvalidArgumentError):
                async for _ in aclient.generate_questions(subgraph="man-("):
                    pass
            with pytest.raises(NotFoundError):
                async for _ in aclient.generate_questions(subgraph="unicorn"):
                    pass
            return [
                e
                async for e in aclient.generate_questions(
                    subgraph=KEYS[1], seed=4, split="val", count=1000
                )
            ]

    got = asyncio.run(run())
    assert got == expected
    assert got
    _check_executed(server, KEYS[1], got)


def test_injection_strings_in_the_subgraph_are_data(client: Client) -> None:
    from tests.integration.service.test_injection import INJECTIONS, LABELS, injected

    text = INJECTIONS[0]
    graph = injected(0, text)
    assert client.import_scene_graphs([graph]).written == 1
    query = Subgraph(
        (SubgraphObject(f"subject {text}", f"attr {text}"), SubgraphObject(f"object {text}")),
        (SubgraphRelation(f"rel {text}", 0, 1),),
    )
    examples = list(client.generate_questions(subgraph=query, seed=1, split=graph.split))
    # Issue 16 item 1: an example must show a distractor, and this split holds only the injected
    # image, so none is emitted any more; the request must still run with the names as data.
    # TODO(issue 16): import a distractor image too, to check the names reach the programs.
    assert {e.source_image for e in examples} <= {graph.image_id}
    assert all(e.split == graph.split for e in examples)
    names = {a for e in examples for step in e.program for a in step.arguments}
    assert not examples or {f"subject {text}", f"rel {text}", f"object {text}"} <= names
    assert set(client.statistics().nodes) <= LABELS


def test_examples_travel_in_batches_of_the_page_size(
    server: TestServer, client: Client, stub: service_pb2_grpc.CovrServiceStub
) -> None:
    """One message per example cost about 0.16 ms each in gRPC Python (40 ms for one image's
    examples): the stream carries batches of at most ``COVR_SERVICE_PAGE_SIZE`` examples."""
    page = server.service.settings.service.service_page_size
    sources: list[dict[str, Any]] = [
        {"image_id": "gqa:2370799"},
        {"subgraph": scene_pb2.SubgraphRef(key=KEYS[0])},
    ]
    for source in sources:
        request = questions_pb2.GenerateQuestionsRequest(seed=3, split="val", count=1000, **source)
        messages = list(stub.GenerateQuestions(request, timeout=60))
        sizes = [len(m.examples) for m in messages]
        assert sizes
        assert all(0 < n <= page for n in sizes)
        assert all(n == page for n in sizes[:-1])
        # (the sample image gave more than one page before every example needed a distractor,
        # issue 16 item 1; on the 8 bundled GQA images it now gives fewer)
        received = [e.qid for m in messages for e in m.examples]
        via_sdk = client.generate_questions(
            image_id=source.get("image_id"),
            subgraph=KEYS[0] if "subgraph" in source else None,
            seed=3,
            split="val",
            count=1000,
        )
        assert [e.qid for e in via_sdk] == received
        request.count = 3
        capped = list(stub.GenerateQuestions(request, timeout=60))
        assert [len(m.examples) for m in capped] == [min(3, len(received))]


def test_questions_after_a_reimport_use_the_new_scene_graph() -> None:
    """An image replaced through ImportSceneGraphs: the next GenerateQuestions asks about the
    new graph, not the one the server had cached (the objects of one name renamed: one name
    for every object would leave nothing to ask that holds on the picture, e.g. attribute
    tests on "zebras" of which most have no value of the category)."""
    import dataclasses

    with running_server() as own, own.client() as c:
        image_id = "gqa:2370799"
        before = list(c.generate_questions(image_id=image_id, seed=1, count=50))
        assert before
        old = DomainSubgraph.from_key(before[0].subgraphs["g"]).objects[0].name
        graph = c.get_scene_graph(image_id)
        renamed = dataclasses.replace(
            graph,
            objects=tuple(
                dataclasses.replace(o, name="zebra") if o.name == old else o for o in graph.objects
            ),
        )
        assert c.import_scene_graphs([renamed]).written == 1
        after = list(c.generate_questions(image_id=image_id, seed=1, count=50))
        assert after
        names = [
            {o.name for o in DomainSubgraph.from_key(example.subgraphs["g"]).objects}
            for example in after
        ]
        # the first question before was about ``old``; none is now (the cached graph had it)
        assert all(old not in found for found in names), (old, names)
