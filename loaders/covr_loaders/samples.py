"""The small sample files shipped with the loaders, and one call that loads them all.

The files under ``samples/`` were written for this project (not copied from the datasets) in each
dataset's official format, small but structured like the real thing: several relations per
object, GQA's spatial predicates, imSitu frames with 0, 1 and 3 modifiers and empty roles, VG
objects with several names. The quick-start command loads them with :func:`load_bundled_samples`.
"""

from __future__ import annotations

import json
from pathlib import Path

from covr.graph.store import GraphStore
from covr_loaders.config import LoadSettings
from covr_loaders.jobs import gqa_job, imsitu_job, vg_job
from covr_loaders.progress import Reporter
from covr_loaders.writer import LoadJob, LoadSummary, run_load

SAMPLES = Path(__file__).parent / "samples"


def sample_jobs(settings: LoadSettings) -> list[LoadJob]:
    """One load job per bundled sample file."""
    imsitu_dir = SAMPLES / "imsitu"
    return [
        gqa_job([SAMPLES / "gqa" / "val_sceneGraphs.json"], "val", settings),
        imsitu_job(
            [imsitu_dir / "dev.json"],
            "dev",
            settings,
            space=imsitu_dir / "imsitu_space.json",
            templates=imsitu_dir / "generation_templates.tab",
        ),
        vg_job([SAMPLES / "vg" / "scene_graphs.json"], "train", settings),
    ]


def sample_val_images() -> list[str]:
    """Ids of the samples' val images (the GQA sample file's keys, as the loader names them),
    sorted: the quick start generates questions for exactly these, whatever else the store
    holds."""
    with (SAMPLES / "gqa" / "val_sceneGraphs.json").open(encoding="utf-8") as handle:
        return sorted(f"gqa:{key}" for key in json.load(handle))


def load_bundled_samples(
    store: GraphStore, settings: LoadSettings, reporter: Reporter | None = None
) -> dict[str, LoadSummary]:
    """Load every bundled sample (idempotent: running it twice leaves the same store)."""
    out: dict[str, LoadSummary] = {}
    for job in sample_jobs(settings):
        out[job.source] = run_load(
            store,
            job,
            data_dir=settings.data_dir,
            batch_images=settings.load_batch_images,
            writers=settings.load_writers,
            reporter=reporter,
        )
    return out
