"""Property tests of every loader format on generated files (issue 21, item 6).

For any file drawn by :mod:`tests.fuzz.strategies` (sample records, mutated or random, the file
sometimes cut short or with a byte changed), a load job

- raises nothing but the documented :class:`InputFileError` (a file that is not the format's
  container at all, found before anything is read); every bad record is a :class:`Problem`;
- hands the writer only scene graphs inside ``covr.scene.limits`` (checked here by walking the
  graph, not by asking :class:`SceneLimits`, so a limit the check forgets is still caught), and
  each of them turns into a write batch without an error.

The limits are set small so that mutations cross them often. Examples per format are few
(a second or two each): the point is a permanent check in every run; the atheris target
(tests/fuzz/README.md) is the long search.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from covr.scene.model import SceneGraph
from covr.settings import Settings
from covr_loaders.errors import InputFileError, Problem
from covr_loaders.jobs import gqa_job, imsitu_job, vg_job
from covr_loaders.samples import SAMPLES
from covr_loaders.writer import Batch, LoadJob, LoadSummary, _Reader
from tests.fuzz.strategies import FORMATS, dataset_files

pytestmark = pytest.mark.unit

LIMITS = {
    "limit_id_chars": 24,
    "limit_name_chars": 32,
    "limit_objects": 12,
    "limit_attributes": 3,
    "limit_relations": 20,
    "limit_relmods": 2,
}
EXAMPLES = 60
FILE_NAMES = {"gqa": "val_sceneGraphs.json", "vg": "scene_graphs.json", "imsitu": "dev.json"}


def _settings(data_dir: Path) -> Settings:
    values: dict[str, Any] = {"data_dir": data_dir, "graph_uri": "", **LIMITS}
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


JOBS: dict[str, Callable[[Path, Settings], LoadJob]] = {
    "gqa": lambda p, s: gqa_job([p], "val", s.load),
    "vg": lambda p, s: vg_job([p], "val", s.load),
    "imsitu": lambda p, s: imsitu_job(
        [p], "val", s.load, space=SAMPLES / "imsitu" / "imsitu_space.json"
    ),
}


def _strings(value: Any) -> Iterator[tuple[str, str]]:
    """Every string held by a scene graph's dataclasses, with the field it sits in."""
    if isinstance(value, str):
        yield "", value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            for inner, text in _strings(getattr(value, f.name)):
                yield f"{f.name}.{inner}".rstrip("."), text
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def assert_within_limits(graph: SceneGraph) -> None:
    """What the store must never receive: lone surrogates, long texts, too many entries."""
    for where, text in _strings(graph):
        text.encode("utf-8")  # raises on a lone surrogate
        ids = where.endswith(("id", "subject", "object")) and "name" not in where
        limit = LIMITS["limit_id_chars"] if ids else LIMITS["limit_name_chars"]
        if where != "image_id":  # source + ":" + original_id
            assert len(text) <= limit, (where, len(text))
    assert len(graph.original_id) <= LIMITS["limit_id_chars"]
    assert len(graph.objects) <= LIMITS["limit_objects"]
    assert len(graph.relations) <= LIMITS["limit_relations"]
    for obj in graph.objects:
        assert len(obj.attributes) <= LIMITS["limit_attributes"]
    for rel in graph.relations:
        assert len(rel.mods) <= LIMITS["limit_relmods"]


def load_bytes(fmt: str, raw: bytes, directory: Path) -> tuple[list[SceneGraph], LoadSummary]:
    """Read ``raw`` as a file of ``fmt`` the way ``covr load`` does, writing nothing."""
    path = directory / FILE_NAMES[fmt]
    path.write_bytes(raw)
    job = JOBS[fmt](path, _settings(directory))
    summary = LoadSummary(job.source, job.split)
    graphs = list(_Reader(job, summary, None).records())
    return graphs, summary


@pytest.mark.parametrize("fmt", FORMATS)
def test_generated_files_give_records_or_problems_only(fmt: str) -> None:
    seen = {"graphs": 0, "problems": 0, "refused files": 0}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,  # the same inputs in every CI run; the atheris target explores
        suppress_health_check=list(HealthCheck),
    )
    @given(dataset_files(fmt))
    def one(raw: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                graphs, summary = load_bytes(fmt, raw, Path(tmp))
            except InputFileError:
                seen["refused files"] += 1
                return
        for graph in graphs:
            assert_within_limits(graph)
        Batch.of(0, graphs)  # the writer's conversion of what it was handed
        assert all(isinstance(p, Problem) for p in summary.problems)
        seen["graphs"] += len(graphs)
        seen["problems"] += summary.skipped

    one()
    print(fmt, seen)
    assert seen["graphs"] > 0  # both paths were exercised
    assert seen["problems"] > 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_unmutated_samples_load_whole(fmt: str, tmp_path: Path) -> None:
    """The strategies' valid base: every sample record is read without a problem (at the
    default limits), so a problem in the property test comes from a mutation."""
    raw = (SAMPLES / fmt / FILE_NAMES[fmt]).read_bytes()
    path = tmp_path / FILE_NAMES[fmt]
    path.write_bytes(raw)
    settings_ = Settings(_env_file=None, data_dir=tmp_path, graph_uri="")  # type: ignore[call-arg]
    job = JOBS[fmt](path, settings_)
    summary = LoadSummary(job.source, job.split)
    graphs = list(_Reader(job, summary, None).records())
    assert graphs
    assert not summary.problems, summary.problems[:3]


def test_a_regression_file_of_each_kind_is_kept() -> None:
    """Crashing inputs found by fuzzing are kept in tests/fuzz/corpus/ and replayed here."""
    corpus = Path(__file__).parents[2] / "fuzz" / "corpus"
    files = sorted(p for p in corpus.glob("*.json") if p.is_file())
    assert files
    for case in files:
        fmt = case.name.split("-", 1)[0]
        with tempfile.TemporaryDirectory() as tmp:
            try:
                graphs, _ = load_bytes(fmt, case.read_bytes(), Path(tmp))
            except InputFileError:
                continue
        for graph in graphs:
            assert_within_limits(graph)
        if fmt == "gqa":  # each GQA case has a good record "ok" beside the bad one
            assert "ok" in {g.original_id for g in graphs}, case.name
