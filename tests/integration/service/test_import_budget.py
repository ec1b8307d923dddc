"""Issue 40 items 2 and 3 over a real gRPC server: byte budgets of ImportSceneGraphs (per message,
``COVR_SERVICE_IMPORT_MAX_RECORD_BYTES``; per call, ``COVR_SERVICE_IMPORT_MAX_BYTES``), each a
clear error naming the limit that writes nothing half, and problems that never quote a whole
oversized field back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from covr.graph import GraphStore
from covr_client import Client, InvalidArgumentError, NotFoundError, Object, SceneGraph
from tests.support.service_server import TestServer, running_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def budget_server(backend: str, request: pytest.FixtureRequest) -> Iterator[TestServer]:
    """Small budgets: 4 KiB per message, 64 KiB (the smallest allowed) per call; over each
    backend (a non-strict import over the call budget writes early into the store), Neo4j being
    the session's shared one, emptied first."""
    store: GraphStore | None = None
    if backend == "neo4j":
        store = request.getfixturevalue("session_store")
        assert store is not None
        store.clear()
        store.apply_schema()
    with running_server(
        samples=False,
        store=store,
        service_import_max_record_bytes=4096,
        service_import_max_bytes=1 << 16,
    ) as running:
        yield running


@pytest.fixture
def client(budget_server: TestServer) -> Iterator[Client]:
    with budget_server.client() as c:
        yield c


def _graph(original_id: str, objects: int = 1) -> SceneGraph:
    return SceneGraph(
        "bud", original_id, "val", objects=tuple(Object(str(i), "man") for i in range(objects))
    )


def test_a_message_over_the_record_budget_is_skipped_naming_the_limit(client: Client) -> None:
    big = _graph("big", objects=400)  # ~6 KB on the wire
    result = client.import_scene_graphs([_graph("r1"), big, _graph("r2")])
    assert (result.written, result.skipped) == (2, 1)
    problem = result.problems[0]
    assert problem.field == "scene_graphs[1]"
    assert "the limit is 4,096 (COVR_SERVICE_IMPORT_MAX_RECORD_BYTES)" in problem.message
    with pytest.raises(NotFoundError):
        client.get_scene_graph("bud:big")
    with pytest.raises(InvalidArgumentError) as err:
        client.import_scene_graphs([_graph("r3"), big], strict=True)
    assert err.value.field_violations[0].field == "scene_graphs[1]"
    with pytest.raises(NotFoundError):
        client.get_scene_graph("bud:r3")


def test_a_strict_import_over_the_call_budget_writes_nothing(client: Client) -> None:
    """Strict holds the whole stream before writing: beyond the budget it is refused with
    INVALID_ARGUMENT naming the limit, and the stored copy of a re-sent image is untouched."""
    assert client.import_scene_graphs([_graph("kept", objects=2)]).written == 1
    graphs = [_graph("kept", objects=3)] + [_graph(f"s{n}", objects=100) for n in range(60)]
    with pytest.raises(InvalidArgumentError) as err:
        client.import_scene_graphs(graphs, strict=True)
    violation = err.value.field_violations[0]
    assert violation.field.startswith("scene_graphs[")
    assert "COVR_SERVICE_IMPORT_MAX_BYTES" in violation.description
    assert "65,536 bytes" in violation.description
    for n in (0, 59):
        with pytest.raises(NotFoundError):
            client.get_scene_graph(f"bud:s{n}")
    assert len(client.get_scene_graph("bud:kept").objects) == 2


def test_a_non_strict_import_writes_early_instead_of_holding_more(client: Client) -> None:
    graphs = [_graph(f"n{n}", objects=100) for n in range(60)]  # ~90 KB: over the budget
    result = client.import_scene_graphs(graphs)
    assert (result.written, result.skipped) == (60, 0)
    assert len(client.get_scene_graph("bud:n59").objects) == 100


def test_oversized_keys_are_never_quoted_whole_in_the_answer(budget_server: TestServer) -> None:
    """Twenty 1 MiB extras keys: every problem's field path quoted its key whole (20 MiB of
    answer, larger than any message: the client got RESOURCE_EXHAUSTED instead of the report)."""
    key = "k" * (1 << 20)
    graphs = [
        SceneGraph("bud", f"x{n}", "val", objects=(Object("1", "man"),), extras={key: 1})
        for n in range(20)
    ]
    with running_server(samples=False) as server, server.client() as c:
        result = c.import_scene_graphs(graphs)
    assert (result.written, result.skipped) == (0, 20)
    for problem in result.problems:
        assert problem.field == f"scene_graphs[{problem.index}].extras['{'k' * 40}']"
        assert "the limit is 256" in problem.message
