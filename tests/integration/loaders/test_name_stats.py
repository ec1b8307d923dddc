"""Name statistics after loads: the counts a load adds equal a full recount, in every case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from covr.graph import GraphStore, catalog, name_stats
from covr.settings import Settings
from covr_loaders import gqa, synthetic
from covr_loaders.jobs import gqa_job
from covr_loaders.samples import load_bundled_samples, sample_jobs
from covr_loaders.writer import Batch, LoadJob, run_load, write_batch

pytestmark = pytest.mark.integration


def rows(store: GraphStore) -> list[tuple[Any, ...]]:
    got = store.read(catalog.get("stats/all"))
    return sorted((r["type"], r["split"], r["name"], r["images"], r["nodes"]) for r in got)


def assert_exact(store: GraphStore) -> None:
    """The stored statistics equal what a full recount writes, and are stamped current."""
    kept = rows(store)
    state = store.read(catalog.get("stats/state"), {"key": name_stats.META_KEY})[0]
    assert state["pending"] is None
    assert state["images"] == state["stored"]
    name_stats.refresh(store)
    assert kept == rows(store)
    assert kept  # the loads wrote names: an empty comparison would prove nothing


def synthetic_job(settings: Settings, tmp_path: Path, name: str, seed: int, n: int) -> LoadJob:
    """A GQA file of ``n`` synthetic images whose ids do not collide with other seeds' files."""
    path = tmp_path / name
    records = dict(gqa.to_record(g) for g in synthetic.generate(n, seed=seed))
    with path.open("w") as handle:
        json.dump({str(int(k) + 1000 * seed): v for k, v in records.items()}, handle)
    return gqa_job([path], name.split("_")[0], settings.load)


def test_loads_that_only_add_images_add_their_counts_exactly(
    store: GraphStore, settings: Settings
) -> None:
    summaries = load_bundled_samples(store, settings.load)  # gqa, then imsitu and vg on top
    assert all(s.stats_incremental for s in summaries.values())
    assert_exact(store)


def test_reload_of_the_same_images_recounts(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    load_bundled_samples(store, settings.load)
    before = name_stats.generation(store)
    job = sample_jobs(settings.load)[0]
    summary = run_load(store, job, data_dir=tmp_path, batch_images=3)
    assert not summary.stats_incremental  # images were replaced: their old names are unknown
    assert name_stats.generation(store) != before
    assert_exact(store)


def test_two_splits_and_a_second_file(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    first = synthetic_job(settings, tmp_path, "train_a.json", 3, 60)
    run_load(store, first, data_dir=tmp_path, batch_images=25)
    generation = name_stats.generation(store)
    # The same generator with another seed and split: overlapping names, new image ids.
    second = synthetic_job(settings, tmp_path, "val_b.json", 4, 50)
    summary = run_load(store, second, data_dir=tmp_path, batch_images=25)
    assert summary.stats_incremental
    assert name_stats.generation(store) != generation
    assert_exact(store)
    assert summary.images_written == 50


def test_a_load_that_died_leaves_a_mark_and_the_next_load_recounts(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    job = synthetic_job(settings, tmp_path, "train_c.json", 5, 40)
    run_load(store, job, data_dir=tmp_path, batch_images=20)
    base = name_stats.begin_load(store)  # a load starts ...
    assert base is not None
    more = list(synthetic.Generator(6, split="val").images(5))
    write_batch(store, Batch.of(0, more))  # ... writes a batch and dies before its finish
    other = synthetic_job(settings, tmp_path, "val_d.json", 7, 30)
    summary = run_load(store, other, data_dir=tmp_path, batch_images=20)
    assert not summary.stats_incremental
    assert_exact(store)


def test_images_written_outside_a_load_make_the_next_load_recount(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    job = synthetic_job(settings, tmp_path, "train_e.json", 8, 40)
    run_load(store, job, data_dir=tmp_path, batch_images=20)
    write_batch(store, Batch.of(0, list(synthetic.Generator(9, split="val").images(4))))
    summary = run_load(
        store,
        synthetic_job(settings, tmp_path, "val_f.json", 10, 30),
        data_dir=tmp_path,
        batch_images=20,
    )
    assert not summary.stats_incremental
    assert_exact(store)


def test_a_cleared_store_reloaded_much_larger_drops_the_old_plans(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cleared store has no statistics node; the last count this process stamped stands in."""
    forgotten: list[int] = []
    real = store.forget_plans

    def counting() -> None:
        forgotten.append(1)
        real()  # the server's plans are really dropped (a no-op on FalkorDB)

    monkeypatch.setattr(store, "forget_plans", counting)
    small = list(synthetic.generate(10, seed=3, split="val"))
    large = list(synthetic.generate(name_stats.PLANS_SMALL_IMAGES * 3, seed=4, split="val"))
    for scenes, expected in ((small, None), (large, 1), (large, 0), (small, 1)):
        store.clear()
        store.apply_schema()
        write_batch(store, Batch.of(0, scenes))
        before = len(forgotten)
        name_stats.refresh(store)
        if expected is not None:
            assert len(forgotten) - before == expected, (len(scenes), forgotten)
