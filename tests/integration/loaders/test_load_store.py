"""Loads into a real embedded FalkorDB: round trip, idempotence, resume, bad input, atomicity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from covr.graph import GraphStore, QueryError, catalog
from covr.scene.model import SceneGraph
from covr.settings import Settings
from covr_loaders import gqa, synthetic
from covr_loaders.errors import LoadFailed
from covr_loaders.jobs import gqa_job
from covr_loaders.jsonio import ByteCounter
from covr_loaders.readback import (
    expected_digest,
    get_scene_graph,
    get_scene_graphs,
    store_digest,
)
from covr_loaders.samples import load_bundled_samples, sample_jobs
from covr_loaders.writer import LoadJob, run_load, write_batch

pytestmark = pytest.mark.integration


def synthetic_train_job(tmp_path: Path, settings: Settings, *, images: int, seed: int) -> LoadJob:
    """A GQA-format train file of ``images`` synthetic images, as a load job."""
    path = tmp_path / "train_sceneGraphs.json"
    with path.open("w") as handle:
        json.dump(dict(gqa.to_record(g) for g in synthetic.generate(images, seed=seed)), handle)
    return gqa_job([path], "train", settings.load)


def counts(store: GraphStore) -> dict[str, Any]:
    nodes = {r["label"]: r["count"] for r in store.read(catalog.get("admin/count_nodes_by_label"))}
    rels = {
        r["type"]: r["count"] for r in store.read(catalog.get("admin/count_relationships_by_type"))
    }
    return {"nodes": nodes, "relationships": rels}


def expected_graphs(job: LoadJob) -> list[SceneGraph]:
    out: list[SceneGraph] = []
    for item in job.inputs:
        out.extend(g for g in item.records(ByteCounter()) if isinstance(g, SceneGraph))
    return out


def content(store: GraphStore, graphs: list[SceneGraph]) -> list[SceneGraph | None]:
    return [get_scene_graph(store, g.image_id) for g in graphs]


def test_samples_round_trip_exactly_and_reload_is_identical(
    store: GraphStore, settings: Settings
) -> None:
    summaries = load_bundled_samples(store, settings.load)
    assert {k: v.images for k, v in summaries.items()} == {"gqa": 8, "imsitu": 12, "vg": 4}
    graphs = [g for job in sample_jobs(settings.load) for g in expected_graphs(job)]
    assert content(store, graphs) == graphs
    before = counts(store)
    assert before["nodes"]["Image"] == 24
    digest = store_digest(store, page=5)
    assert digest == expected_digest(graphs)
    load_bundled_samples(store, settings.load)
    assert counts(store) == before
    assert store_digest(store) == digest
    assert content(store, graphs) == graphs
    assert get_scene_graphs(store, [g.image_id for g in graphs] + ["gqa:nope"]) == {
        g.image_id: g for g in graphs
    }


def test_digest_sees_a_changed_name(store: GraphStore) -> None:
    from dataclasses import replace

    from covr_loaders.writer import Batch

    graphs = list(synthetic.generate(3, seed=5))
    write_batch(store, Batch.of(0, graphs))
    clean = store_digest(store)
    assert clean == expected_digest(graphs)
    first = graphs[0]
    renamed = replace(first, objects=(replace(first.objects[0], name="teapot"), *first.objects[1:]))
    write_batch(store, Batch.of(0, [renamed]))
    changed = store_digest(store)
    assert (changed.nodes, changed.relationships) == (clean.nodes, clean.relationships)
    assert changed.content != clean.content
    assert changed == expected_digest([renamed, *graphs[1:]])


def test_imsitu_three_modifiers_read_back(store: GraphStore, settings: Settings) -> None:
    load_bundled_samples(store, settings.load)
    graph = get_scene_graph(store, "imsitu:stapling_1.jpg")
    assert graph is not None
    (relation,) = graph.relations
    assert sorted(m.name for m in relation.mods) == ["at", "onto", "using"]
    assert get_scene_graph(store, "imsitu:nope.jpg") is None
    # GQA and VG share original ids; the source keeps them apart
    gqa_image, vg_image = (get_scene_graph(store, f"{s}:2370799") for s in ("gqa", "vg"))
    assert gqa_image is not None
    assert vg_image is not None
    assert len(gqa_image.objects) != len(vg_image.objects)


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 1000))
def test_synthetic_round_trip(store: GraphStore, seed: int) -> None:
    graphs = list(synthetic.Generator(seed, split="val").images(6))
    from covr_loaders.writer import Batch

    write_batch(store, Batch.of(0, graphs))
    assert content(store, graphs) == graphs


def test_bad_input_leaves_the_store_intact(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    load_bundled_samples(store, settings.load)
    before = counts(store)
    data = {
        "1": {
            "objects": {
                "a": {
                    "name": "x",
                    "x": 0,
                    "y": 0,
                    "w": 1,
                    "h": 1,
                    "relations": [{"name": "on", "object": "zz"}],
                }
            }
        }
    }
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LoadFailed):
        run_load(
            store,
            gqa_job([path], "val", settings.load),
            data_dir=tmp_path,
            batch_images=10,
            strict=True,
        )
    summary = run_load(
        store, gqa_job([path], "val", settings.load), data_dir=tmp_path, batch_images=10
    )
    assert summary.skipped == 1
    assert summary.images == 0
    assert counts(store) == before


def test_a_failing_batch_leaves_no_partial_image(store: GraphStore) -> None:
    from covr_loaders.writer import Batch

    graphs = list(synthetic.generate(4, seed=3))
    batch = Batch.of(0, graphs)
    assert isinstance(batch.relations, list)
    batch.relations[-1].append([0, 999, "broken", "on", None, []])  # endpoint that is not there
    with pytest.raises(QueryError):
        write_batch(store, batch)
    assert all(get_scene_graph(store, g.image_id) is None for g in graphs)


class Crash(Exception):
    """Stands in for a killed process."""


class CrashingStore:
    """Delegates to a real store, and dies on the n-th create statement."""

    def __init__(self, inner: GraphStore, after: int) -> None:
        self.inner = inner
        self.after = after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def write(self, query: Any, params: Any = None, **kw: Any) -> Any:
        if query.name == "load/create_images":
            self.after -= 1
            if self.after < 0:
                raise Crash
        return self.inner.write(query, params, **kw)


@pytest.mark.parametrize("resume", [True, False])
def test_resume_after_a_crash_equals_a_clean_load(
    store: GraphStore, settings: Settings, tmp_path: Path, resume: bool
) -> None:
    job = synthetic_train_job(tmp_path, settings, images=300, seed=11)
    graphs = expected_graphs(job)
    run_load(store, job, data_dir=tmp_path, batch_images=40)
    clean = counts(store)
    store.clear()
    store.apply_schema()
    with pytest.raises(Crash):
        run_load(
            CrashingStore(store, 3),  # type: ignore[arg-type]
            job,
            data_dir=tmp_path,
            batch_images=40,
        )
    assert counts(store)["nodes"]["Image"] == 120
    summary = run_load(store, job, data_dir=tmp_path, batch_images=40, resume=resume)
    assert summary.batches_resumed == (3 if resume else 0)
    assert counts(store) == clean
    assert content(store, graphs) == graphs


def test_resume_rewrites_checkpointed_batches_that_were_lost(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    job = sample_jobs(settings.load)[0]
    graphs = expected_graphs(job)
    run_load(store, job, data_dir=tmp_path, batch_images=3)
    store.write(catalog.get("load/delete_images"), {"ids": [graphs[0].image_id]})
    summary = run_load(store, job, data_dir=tmp_path, batch_images=3, resume=True)
    assert summary.batches_written == 1
    assert summary.batches_resumed == 2
    assert content(store, graphs) == graphs


def test_reader_process_with_prerendered_rows_loads_the_same(
    store: GraphStore, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from covr_loaders import writer

    job = synthetic_train_job(tmp_path, settings, images=120, seed=12)
    monkeypatch.setattr(writer, "PARALLEL_MIN_BYTES", 0)  # the forked reader renders the rows
    summary = run_load(store, job, data_dir=tmp_path, batch_images=25)
    assert summary.images_written == 120
    assert store_digest(store) == expected_digest(expected_graphs(job))


def test_several_writers_load_the_same_and_resume_after_a_crash(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    """Three statements in flight (Neo4j's default is two): the same store as one writer, and a
    crash with later batches written before an earlier one resumes to the same store."""
    job = synthetic_train_job(tmp_path, settings, images=300, seed=13)
    graphs = expected_graphs(job)
    summary = run_load(store, job, data_dir=tmp_path, batch_images=20, writers=3)
    assert summary.batches_written == len(list(batch_sizes_for(300, 20)))
    assert store_digest(store) == expected_digest(graphs)
    clean = counts(store)
    store.clear()
    store.apply_schema()
    with pytest.raises(Crash):
        run_load(
            CrashingStore(store, 4),  # type: ignore[arg-type]
            job,
            data_dir=tmp_path / "crashed",
            batch_images=20,
            writers=3,
        )
    summary = run_load(store, job, data_dir=tmp_path / "crashed", batch_images=20, resume=True)
    assert summary.batches_resumed >= 1
    assert counts(store) == clean
    assert store_digest(store) == expected_digest(graphs)


def batch_sizes_for(images: int, largest: int) -> list[int]:
    """The loader's batch sizes for ``images`` images (``writer.batch_sizes``, cut at the end)."""
    from covr_loaders.writer import batch_sizes

    out: list[int] = []
    for size in batch_sizes(largest):
        if images <= 0:
            break
        out.append(min(size, images))
        images -= size
    return out
