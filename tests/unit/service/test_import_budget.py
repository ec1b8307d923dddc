"""Issue 40 item 2: byte budgets of the ImportSceneGraphs stream (per message and per call) and
of the loaders (per record), each a clear problem or error naming its setting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from covr.scene.model import Object, SceneGraph
from covr.service import imports
from covr.settings import Settings
from covr.v1 import store_pb2
from covr_loaders import gqa
from covr_loaders.errors import Problem
from covr_loaders.import_stream import (
    MAX_PROBLEM_FIELD,
    ImportLimits,
    ImportTooLarge,
    Rejected,
    import_scene_graphs,
)
from covr_loaders.jsonio import DEFAULT_MAX_RECORD_BYTES, ByteCounter

pytestmark = pytest.mark.unit


class _NoStore:
    """A store nothing may be written to: a refused import must not reach it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store was used ({name}) by an import that must write nothing")


def _graph(n: int) -> SceneGraph:
    return SceneGraph.build(
        source="svc", original_id=str(n), split="val", objects=[Object(id="1", name="man")]
    )


def test_a_strict_import_over_its_byte_budget_is_refused_before_writing() -> None:
    """Before, only the number of scene graphs was capped (20 batches): 200 graphs of 5,000
    objects (62 MB on the wire) took the server from 135 to 676 MB."""
    limits = ImportLimits(batch_size=5000, strict_cap=100_000, max_problems=10, max_bytes=1000)
    items = [(_graph(n), 400) for n in range(5)]
    with pytest.raises(ImportTooLarge) as err:
        import_scene_graphs(
            _NoStore(),  # type: ignore[arg-type]
            items,
            strict=True,
            dry_run=False,
            limits=limits,
        )
    assert err.value.field == "scene_graphs[2]"
    assert "1,000 bytes" in err.value.message
    assert "COVR_SERVICE_IMPORT_MAX_BYTES" in err.value.message
    assert "nothing was written" in err.value.message


def test_a_dry_run_holds_nothing_and_needs_no_budget() -> None:
    limits = ImportLimits(batch_size=5000, strict_cap=100_000, max_problems=10, max_bytes=1000)
    report = import_scene_graphs(
        _NoStore(),  # type: ignore[arg-type]
        [(_graph(n), 400) for n in range(5)],
        strict=True,
        dry_run=True,
        limits=limits,
    )
    assert (report.valid, report.written) == (5, 0)


def test_problems_quote_fields_and_messages_clipped() -> None:
    """A problem's field can quote input (an extras key); the answer lists up to 1,000 of them."""
    limits = ImportLimits(batch_size=5000, strict_cap=100_000, max_problems=10)
    report = import_scene_graphs(
        _NoStore(),  # type: ignore[arg-type]
        [(Rejected("scene_graphs[0].extras." + "k" * 100_000, "m" * 100_000), 1)],
        strict=False,
        dry_run=True,
        limits=limits,
    )
    assert len(report.problems[0].field) == MAX_PROBLEM_FIELD
    assert len(report.problems[0].message) <= 500


def _request(n: int, objects: int) -> store_pb2.ImportSceneGraphsRequest:
    message = store_pb2.ImportSceneGraphsRequest()
    graph = message.scene_graph
    graph.source, graph.original_id, graph.split = "svc", str(n), "val"
    for i in range(objects):
        graph.objects.add(id=str(i), name="man")
    return message


def test_a_message_over_the_record_budget_is_a_problem_naming_the_setting() -> None:
    settings = Settings(_env_file=None, service_import_max_record_bytes=1024)  # type: ignore[call-arg]
    received = imports.StreamBytes()
    small, big = _request(1, 2), _request(2, 200)
    assert small.ByteSize() < 1024 < big.ByteSize()
    _, items = imports.split_options([small, big], settings.service, settings.limits, received)
    (first, first_size), (second, second_size) = list(items)
    assert isinstance(first, SceneGraph)
    assert first_size == small.ByteSize()
    assert second == Rejected(
        "scene_graphs[1]",
        f"is {big.ByteSize():,} bytes; the limit is 1,024 (COVR_SERVICE_IMPORT_MAX_RECORD_BYTES)",
    )
    assert second_size == big.ByteSize()
    assert received.total == small.ByteSize() + big.ByteSize()


def test_budgets_are_settings_with_documented_defaults() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.service_import_max_record_bytes == 8 << 20
    assert settings.service_import_max_bytes == 64 << 20
    assert imports.limits(settings.service, settings.load).max_bytes == 64 << 20
    # a 64 MiB record took the loader to 1.83 GB (issue 40): records are read up to 16 MiB
    assert settings.load_max_record_bytes == DEFAULT_MAX_RECORD_BYTES == 16 << 20


def test_release_memory_trims_after_a_large_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(imports, "_malloc_trim", lambda: calls.append)
    imports.release_memory(imports.StreamBytes(total=1000))
    assert calls == []
    imports.release_memory(imports.StreamBytes(total=imports.RELEASE_AFTER_BYTES))
    assert calls == [0]


def test_a_loader_record_over_its_budget_names_the_setting(tmp_path: Path) -> None:
    """The loaders' per-record budget (already there): the record is skipped, the problem names
    ``COVR_LOAD_MAX_RECORD_BYTES`` and its value, the next record loads."""
    big = {"objects": {str(i): {"name": "man", "x": 0, "y": 0, "w": 1, "h": 1} for i in range(50)}}
    small = {"objects": {"1": {"name": "man", "x": 0, "y": 0, "w": 1, "h": 1}}}
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(json.dumps({"1": big, "2": small}))
    items = list(gqa.read(path, split="val", counter=ByteCounter(max_record_bytes=1024)))
    assert [type(i).__name__ for i in items] == ["Problem", "SceneGraph"]
    problem = items[0]
    assert isinstance(problem, Problem)
    assert problem.message == "record is larger than 1,024 bytes (COVR_LOAD_MAX_RECORD_BYTES)"
