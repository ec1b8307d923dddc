"""Every RPC on a real server over the embedded store with the bundled samples: happy paths and
error codes, through the SDK (typed results, SDK exceptions) and raw stubs where the wire matters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from covr.graph.report import store_stats
from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.scene.model import SceneGraph as DomainSceneGraph
from covr.service.convert import scene_graph_to_proto
from covr.settings import get_settings
from covr_client import (
    Box,
    Client,
    InvalidArgumentError,
    NotFoundError,
    Object,
    PresenceQuery,
    Relation,
    RelMod,
    SceneGraph,
    Subgraph,
    SubgraphObject,
    SubgraphRelation,
)
from covr_client._proto import questions_pb2, related_pb2, scene_pb2, service_pb2_grpc, store_pb2
from covr_loaders.jsonio import ByteCounter
from covr_loaders.readback import get_scene_graph
from covr_loaders.samples import sample_jobs
from tests.integration.service.conftest import rpc_code
from tests.support.service_server import TestServer, running_server


def sdk_scene_graph(stored: DomainSceneGraph) -> SceneGraph:
    """A server-side scene graph as the SDK decodes it from the wire (server stubs -> bytes ->
    SDK stubs), to compare what the service sends with what it stored."""
    wire = scene_graph_to_proto(stored).SerializeToString()
    return SceneGraph.from_proto(scene_pb2.SceneGraph.FromString(wire))


def graph(original_id: str, *, source: str = "svc", name: str = "man") -> SceneGraph:
    return SceneGraph(
        source=source,
        original_id=original_id,
        split="val",
        width=640,
        height=480.5,
        objects=(
            Object("1", name, ("tall",), Box(1, 2, 30, 40)),
            Object("2", "hat", ("red", "wool"), Box(5, 5, 20, 20), synsets=("hat.n.01",)),
            Object("3", "wall", names=("wall", "brick wall")),
        ),
        relations=(
            Relation("r1", "wearing", "1", "2", mods=(RelMod("tool", "using", "3"),)),
            Relation("r2", "near", "1", "3"),
        ),
        extras={"location": "street", "frame": 2, "score": 0.25, "indoor": False},
    )


# ---------------------------------------------------------------------- statistics, lookup


def test_statistics_equal_the_store_report(server: TestServer, client: Client) -> None:
    stats = client.statistics()
    expected = store_stats(server.store)
    assert stats.backend == str(server.store.backend)
    assert dict(stats.nodes) == expected["nodes"]
    assert stats.totals.images == expected["totals"]["images"] >= 24
    assert {(d.source, d.split) for d in stats.datasets} >= {("gqa", "val"), ("vg", "train")}


def test_get_scene_graph_returns_what_the_loaders_stored(
    server: TestServer, client: Client
) -> None:
    for image_id in ("gqa:2370799", "imsitu:stapling_1.jpg", "vg:1"):
        stored = get_scene_graph(server.store, image_id)
        assert stored is not None
        got = client.get_scene_graph(image_id)
        assert got.image_id == image_id
        assert got == sdk_scene_graph(stored)


def test_get_scene_graph_errors(client: Client) -> None:
    with pytest.raises(NotFoundError) as missing:
        client.get_scene_graph("gqa:does-not-exist")
    assert missing.value.code == "NOT_FOUND"
    with pytest.raises(InvalidArgumentError) as empty:
        client.get_scene_graph("")
    assert [v.field for v in empty.value.field_violations] == ["image_id"]
    with pytest.raises(InvalidArgumentError):
        client.get_scene_graph("a\x00b")


def test_list_images_pages_and_filters(
    client: Client, stub: service_pb2_grpc.CovrServiceStub
) -> None:
    everything = list(client.list_images(page_size=5))
    assert everything == sorted(everything)
    assert len(everything) == len(set(everything)) >= 24
    assert list(client.list_images(source="vg")) == sorted(
        i for i in everything if i.startswith("vg:")
    )
    assert list(client.list_images(source="gqa", split="train")) == []
    pages = list(stub.ListImages(store_pb2.ListImagesRequest(page_size=7, max_pages=2)))
    assert [len(p.image_ids) for p in pages] == [7, 7]
    assert pages[-1].next_page_token
    rest = list(
        stub.ListImages(
            store_pb2.ListImagesRequest(page_size=7, page_token=pages[-1].next_page_token)
        )
    )
    resumed = [i for p in pages for i in p.image_ids] + [i for p in rest for i in p.image_ids]
    assert resumed == everything
    assert rest[-1].next_page_token == ""


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (store_pb2.ListImagesRequest(page_token="%%%"), "page_token"),
        (store_pb2.ListImagesRequest(page_token="eyJ4IjoxfQ", source="vg"), "page_token"),
        (store_pb2.ListImagesRequest(page_size=10**6), "page_size"),
        (store_pb2.ListImagesRequest(split="a\x00"), "split"),
    ],
)
def test_list_images_bad_requests(
    stub: service_pb2_grpc.CovrServiceStub, request_: store_pb2.ListImagesRequest, field: str
) -> None:
    with pytest.raises(grpc.RpcError) as err:
        list(stub.ListImages(request_, timeout=10))
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert field in (err.value.details() or "")


def test_list_subgraphs_equal_the_scene_room_enumeration(
    server: TestServer, client: Client
) -> None:
    stored = get_scene_graph(server.store, "gqa:2370799")
    assert stored is not None
    expected = enumerate_subgraphs(stored, EnumerationOptions(max_subgraphs=50))
    got = client.list_subgraphs("gqa:2370799", max_subgraphs=50)
    assert [g.key for g in got] == [g.key for g in expected]
    assert all(g.text and g.shape for g in got)
    with pytest.raises(NotFoundError):
        client.list_subgraphs("gqa:nope")
    with pytest.raises(InvalidArgumentError) as err:
        client.list_subgraphs("gqa:2370799", max_subgraphs=10**6)
    assert err.value.field_violations[0].field == "max_subgraphs"


# ---------------------------------------------------------------------- import


def test_import_round_trip_and_idempotence(server: TestServer, client: Client) -> None:
    graphs = [graph("a1"), graph("a2", name="woman")]
    first = client.import_scene_graphs(graphs)
    assert (first.received, first.valid, first.written, first.skipped) == (2, 2, 2, 0)
    assert first.nodes_created > 0
    for g in graphs:
        assert client.get_scene_graph(g.image_id) == g
    before = store_stats(server.store)
    again = client.import_scene_graphs(graphs)
    assert again.written == 2
    assert store_stats(server.store) == before
    assert [client.get_scene_graph(g.image_id) for g in graphs] == graphs


def test_import_skips_bad_scene_graphs_and_names_the_field(client: Client) -> None:
    bad_ref = SceneGraph(
        "svc",
        "b2",
        "val",
        objects=(Object("1", "man"),),
        relations=(Relation("r", "on", "1", "9"),),
    )
    bad_name = SceneGraph("svc", "b3", "val", objects=(Object("1", " "),))
    bad_source = SceneGraph("Bad Source", "b4", "val")
    good = graph("b1")
    result = client.import_scene_graphs([good, bad_ref, bad_name, bad_source, good])
    assert (result.received, result.valid, result.written, result.skipped) == (5, 1, 1, 4)
    fields = [p.field for p in result.problems]
    assert fields[0] == "scene_graphs[1].relations['r'].object"
    assert fields[1] == "scene_graphs[2].objects['1'].name"
    assert fields[2] == "scene_graphs[3].source"
    assert "duplicate image id" in result.problems[3].message
    with pytest.raises(NotFoundError):
        client.get_scene_graph("svc:b2")


def test_strict_and_dry_run_write_nothing(client: Client) -> None:
    bad = SceneGraph("svc", "s2", "val", objects=(Object("1", ""),))
    with pytest.raises(InvalidArgumentError) as err:
        client.import_scene_graphs([graph("s1"), bad], strict=True)
    assert err.value.field_violations[0].field == "scene_graphs[1].objects['1'].name"
    with pytest.raises(NotFoundError):
        client.get_scene_graph("svc:s1")
    dry = client.import_scene_graphs([graph("d1")], dry_run=True)
    assert (dry.valid, dry.written, dry.dry_run) == (1, 0, True)
    with pytest.raises(NotFoundError):
        client.get_scene_graph("svc:d1")


def test_options_only_first(stub: service_pb2_grpc.CovrServiceStub) -> None:
    messages = [
        store_pb2.ImportSceneGraphsRequest(scene_graph=graph("o1").to_proto()),
        store_pb2.ImportSceneGraphsRequest(options=store_pb2.ImportOptions(strict=True)),
    ]
    assert rpc_code(stub.ImportSceneGraphs, iter(messages)) is grpc.StatusCode.INVALID_ARGUMENT


def test_import_equals_the_batch_loaders(server: TestServer) -> None:
    """The same scene graphs through the RPC into an empty store and through `covr load` into
    the shared one read back identically (same validation, same writer)."""
    jobs = sample_jobs(server.service.settings.load)
    domain = [
        record
        for job in jobs
        for item in job.inputs
        for record in item.records(ByteCounter())
        if not hasattr(record, "reason")
    ]
    assert len(domain) >= 20
    with running_server(samples=False) as empty, empty.client() as c:
        sent = [sdk_scene_graph(g) for g in domain]
        result = c.import_scene_graphs(sent)
        assert result.written == len(domain)
        assert result.skipped == 0
        for g in domain:
            assert get_scene_graph(empty.store, g.image_id) == get_scene_graph(
                server.store, g.image_id
            )


# ---------------------------------------------------------------------- bad input


def test_bad_input_gets_field_violations(client: Client) -> None:
    with pytest.raises(InvalidArgumentError) as err:
        next(client.find_related_images("man-(wearing", seed=1))
    assert err.value.field_violations[0].field == "subgraph.key"
    repeated = Subgraph(
        (SubgraphObject("man"), SubgraphObject("man")), (SubgraphRelation("near", 0, 1),)
    )
    with pytest.raises(InvalidArgumentError) as err:
        next(client.find_related_images(repeated))
    assert "repeated-noun" in err.value.field_violations[0].description
    with pytest.raises(InvalidArgumentError) as err:
        next(client.find_related_images("man", max_distance=3))
    assert err.value.field_violations[0].field == "max_distance"
    with pytest.raises(InvalidArgumentError) as err:
        client.score_exclusivity([("object", "", "woman")])
    assert err.value.field_violations[0].field == "pairs[0].x"
    with pytest.raises(InvalidArgumentError):
        client.score_exclusivity([])
    with pytest.raises(InvalidArgumentError) as err:
        client.score_presence([PresenceQuery("man", "", (float("nan"),))])
    assert {v.field for v in err.value.field_violations} == {
        "queries[0].image_id",
        "queries[0].image_features",
    }
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(image_id="gqa:1", templates=["", "x"]))
    assert err.value.field_violations[0].field == "templates[0]"


def test_raw_requests_without_a_target(stub: service_pb2_grpc.CovrServiceStub) -> None:
    assert (
        rpc_code(stub.FindRelatedImages, related_pb2.FindRelatedImagesRequest())
        is grpc.StatusCode.INVALID_ARGUMENT
    )
    assert (
        rpc_code(stub.GenerateQuestions, questions_pb2.GenerateQuestionsRequest())
        is grpc.StatusCode.INVALID_ARGUMENT
    )
    bad_type = related_pb2.ScoreExclusivityRequest(
        pairs=[related_pb2.TermPair(node_type=scene_pb2.NODE_TYPE_UNSPECIFIED, x="a", x_prime="b")]
    )
    assert rpc_code(stub.ScoreExclusivity, bad_type) is grpc.StatusCode.INVALID_ARGUMENT


# ---------------------------------------------------------------------- related images


def test_related_images_equal_the_library_on_the_same_store(
    server: TestServer, client: Client
) -> None:
    from covr.related.filters import RelatedLookups

    lookups = RelatedLookups(
        server.store, server.service.settings.related, server.service.settings.models
    )
    subgraphs = client.list_subgraphs("gqa:2370799", max_subgraphs=30)
    # (library lookup, presence on?, SDK flags): the configured default (ONNX exclusivity and
    # presence filter), the same without the presence filter, and the word lists.
    variants = [
        (lookups.get(), True, True),
        (lookups.get(), False, True),
        (lookups.get(model=False), True, False),
    ]
    for lookup, presence, model in variants:
        checked = 0
        for g in subgraphs:
            direct = lookup.related(g.key, seed=7, limit=100, presence=presence)
            pages = list(
                client.find_related_images(
                    g.key, seed=7, page_size=100, presence_filter=presence, exclusivity_model=model
                )
            )
            assert len(pages) == 1
            page = pages[0]
            assert page.query.key == g.key
            assert [i.image_id for i in page.images if i.kind == "positive"] == list(
                direct.positives
            )
            assert [
                (i.image_id, i.edit_signature, i.matched.key)
                for i in page.images
                if i.kind == "distractor"
            ] == [(d.image_id, d.signature, d.subgraph.key) for d in direct.distractors]
            checked += bool(direct.distractors)
        assert checked > 0, f"the samples should give distractors ({presence=}, {model=})"


def test_related_pages_continue_with_tokens_and_stream(client: Client) -> None:
    key = next(
        g.key
        for g in client.list_subgraphs("gqa:2370799")
        if len(next(client.find_related_images(g.key, page_size=100)).images) >= 4
    )
    everything = next(
        client.find_related_images(key, page_size=1000, per_signature_cap=1000, seed=3)
    )
    assert everything.next_page_token == ""
    wanted = [(i.image_id, i.edit_signature) for i in everything.images if i.kind == "distractor"]
    streamed = list(
        client.find_related_images(key, seed=3, page_size=1, per_signature_cap=1, max_results=1000)
    )
    assert len(streamed) >= 1
    got = [
        (i.image_id, i.edit_signature) for p in streamed for i in p.images if i.kind == "distractor"
    ]
    assert sorted(got) == sorted(wanted)
    assert streamed[-1].next_page_token == ""
    first = next(client.find_related_images(key, seed=3, page_size=1, per_signature_cap=1))
    if first.next_page_token:
        second = next(
            client.find_related_images(
                key, seed=3, page_size=1, per_signature_cap=1, page_token=first.next_page_token
            )
        )
        assert second.images != first.images
        with pytest.raises(InvalidArgumentError) as err:
            next(
                client.find_related_images(
                    key, seed=4, page_size=1, per_signature_cap=1, page_token=first.next_page_token
                )
            )
        assert err.value.field_violations[0].field == "page_token"


def test_related_images_of_an_image(client: Client) -> None:
    pages = list(client.find_related_images(image_id="gqa:2370799", max_subgraphs=5, seed=1))
    assert [p.query.key for p in pages] == [g.key for g in client.list_subgraphs("gqa:2370799")[:5]]
    for page in pages:
        positives = [i.image_id for i in page.images if i.kind == "positive"]
        assert positives[0] == "gqa:2370799"
    with pytest.raises(NotFoundError):
        next(client.find_related_images(image_id="gqa:missing"))
    with pytest.raises(InvalidArgumentError):
        next(client.find_related_images(image_id="gqa:2370799", page_token="abc"))


def test_import_refuses_ids_that_would_crash_the_store(server: TestServer, client: Client) -> None:
    """FalkorDB 4.16.3 segfaults on unique keys of ~5,000 bytes; ids are capped well below."""
    restarts = server.store.health().details.get("restarts")
    long_id = "é" * 3000
    result = client.import_scene_graphs(
        [
            SceneGraph("svc", long_id, "val"),
            SceneGraph("svc", "long-object", "val", objects=(Object(long_id, "cat"),)),
            SceneGraph("svc", "x" * 256, "val"),
        ]
    )
    # the scene limits every door shares name the field (an id quoted to 40 characters)
    assert [p.field for p in result.problems] == [
        "scene_graphs[0].original_id",
        f"scene_graphs[1].objects[{long_id[:40]!r}].id",
    ]
    assert result.problems[1].message == "is 3,000 characters long; the limit is 256"
    assert result.written == 1
    assert client.get_scene_graph("svc:" + "x" * 256).original_id == "x" * 256
    assert server.store.health().details.get("restarts") == restarts


# ---------------------------------------------------------------------- questions


def test_generated_questions_equal_the_engine_on_the_same_store(
    server: TestServer, client: Client
) -> None:
    from covr.questions.generate import GenerationOptions, check_images, generate_for_image
    from covr.related.filters import build_lookup
    from covr.related.store_provider import StoreRelated

    settings = server.service.settings
    provider = StoreRelated(build_lookup(server.store, settings.related, settings.models))
    produced = 0
    for image_id in ("gqa:2370799", "gqa:2354786"):
        options = GenerationOptions.from_settings(
            settings.questions, settings.related, split="val", seed=5, templates=()
        )
        check_images(provider, options, [image_id])
        expected = generate_for_image(provider, options, image_id)
        got = list(client.generate_questions(image_id=image_id, seed=5, count=1000))
        assert [e.qid for e in got] == [e["qid"] for e in expected]
        for example, source in zip(got, expected, strict=True):
            assert example.utterance == source["utterance"]
            assert list(example.scenes) == source["scenes"]
            assert example.answer == source["answer"]
            assert type(example.answer) is type(source["answer"])
            assert example.source_image == image_id
            assert dict(example.subgraphs) == source["subgraphs"]
            assert {k: list(v) for k, v in example.signatures.items()} == source["signatures"]
            assert len(example.program) == len(source["program"])
            assert example.seed == 5
        produced += len(got)
    assert produced > 0


def test_generate_questions_count_templates_and_errors(client: Client) -> None:
    some = list(client.generate_questions(image_id="gqa:2370799", seed=1, count=2))
    assert len(some) <= 2
    if some:
        only = some[0].template
        # every example of the image: on a cold Neo4j each new lookup statement is planned
        # first (~0.5 s each at load average 8, issue 15), far over the client's default 10 s
        same = list(
            client.generate_questions(image_id="gqa:2370799", seed=1, templates=[only], timeout=180)
        )
        assert {e.template for e in same} == {only}
    with pytest.raises(NotFoundError):
        next(client.generate_questions(image_id="gqa:missing"))
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(image_id="gqa:2370799", templates=["no_such_template"]))
    assert err.value.field_violations[0].field == "templates"
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(image_id="gqa:2370799", seed=2**63))
    assert err.value.field_violations[0].field == "seed"
    with pytest.raises(InvalidArgumentError) as err:
        next(client.generate_questions(image_id="gqa:2370799", split="train"))
    assert err.value.field_violations[0].field == "image_id"


# ---------------------------------------------------------------------- models


def test_exclusivity_scores_equal_the_model(client: Client) -> None:
    from covr.models import load_exclusivity_model

    pairs: list[tuple[Any, str, str]] = [
        ("relation", "riding", "near"),
        ("relation", "near", "riding"),
        ("object", "man", "woman"),
        ("object", "man", "person"),
        ("attribute", "red", "blue"),
        ("attribute", "red", "wooden"),
        ("relmod", "using", "with"),
    ]
    got = client.score_exclusivity(pairs, timeout=180)
    model = load_exclusivity_model(settings=get_settings().models)
    expected = model.m_batch(pairs)
    assert [s.score for s in got] == pytest.approx(expected, abs=1e-6)
    assert [(s.node_type, s.x, s.x_prime) for s in got] == pairs
    assert [s.exclusive for s in got] == [e > 0.5 for e in expected]
    assert got[0].exclusive
    assert not got[1].exclusive  # directional (paper App. A)


def test_exclusivity_bad_terms_name_the_pair(client: Client) -> None:
    with pytest.raises(InvalidArgumentError) as err:
        client.score_exclusivity([("object", "man", "x" * 200)], timeout=180)
    assert err.value.field_violations[0].field == "pairs[0].x_prime"


def test_presence_scores_equal_the_model(server: TestServer, client: Client) -> None:
    from covr.models import load_presence_model

    keys = [s.key for s in client.list_subgraphs("gqa:2370799") if len(s.relations) <= 1][:6]
    queries = [PresenceQuery(k, "gqa:2370799") for k in keys] + [
        PresenceQuery("man-(wearing)->hat", "vg:1", tuple(float(i) / 32 for i in range(32)))
    ]
    got = client.score_presence(queries, timeout=180)
    model = load_presence_model(settings=get_settings().models)
    items: list[tuple[Any, Any, Any]] = []
    for q in queries:
        scene = get_scene_graph(server.store, q.image_id)
        items.append((_domain_subgraph(str(q.subgraph)), scene, list(q.image_features) or None))
    expected = model.score_batch(items)
    assert [s.score for s in got] == pytest.approx([float(e) for e in expected], abs=1e-6)
    assert [s.subgraph_key for s in got] == [_domain_subgraph(str(q.subgraph)).key for q in queries]


def _domain_subgraph(key: str) -> Any:
    from covr.scene.subgraph import Subgraph as DomainSubgraph

    return DomainSubgraph.from_key(key)


def test_presence_errors(client: Client) -> None:
    with pytest.raises(InvalidArgumentError) as err:
        client.score_presence(
            [PresenceQuery("man-(wearing)->hat-(on)->head", "gqa:2370799")], timeout=180
        )
    assert err.value.field_violations[0].field == "queries[0].subgraph"
    with pytest.raises(InvalidArgumentError) as err:
        client.score_presence([PresenceQuery("man", "gqa:2370799", (1.0,))], timeout=180)
    assert err.value.field_violations[0].field == "queries[0].image_features"
    with pytest.raises(NotFoundError):
        client.score_presence([PresenceQuery("man", "gqa:none")], timeout=180)


def test_model_info(client: Client) -> None:
    import hashlib

    from covr.models import load_exclusivity_model, load_presence_model

    infos = {m.kind: m for m in client.model_info(timeout=60)}
    assert set(infos) == {"exclusivity", "presence"}
    assert (
        infos["exclusivity"].version
        == load_exclusivity_model(settings=get_settings().models).version
    )
    assert infos["presence"].version == load_presence_model(settings=get_settings().models).version
    for info in infos.values():
        assert info.sha256 == hashlib.sha256(Path(info.path).read_bytes()).hexdigest()
        assert info.metadata["model_name"] == info.name
        assert info.inputs
        assert info.outputs
