"""Loader benchmark (issue 3): synthetic GQA-format files at 0.01×, 0.1× and 1× GQA scale.

For each size the synthetic file is written once (not timed), then loaded ``--repeats`` times,
each time by a fresh Python process into a fresh embedded store, with the real pipeline
(``covr_loaders.writer.run_load``, the same code ``covr load gqa`` runs, name statistics and
snapshot included). A fresh process per load keeps the peak-RSS figure honest: it is the
loader's own peak (parent or reader process, whichever is larger), not this script's.

Reported per size (medians over the repeats): seconds, images/s, graph elements/s (nodes +
relationships created), the loader's peak RSS, the store's memory (``GRAPH.MEMORY USAGE`` of the
graph and the server's ``used_memory``), and the 1-minute load average before each run (the
development machine is shared, so the numbers are noisy). The naive baseline — one statement per
image, object and relation, as a loader without batching would do — runs on the smallest size
and is reported as a ratio of images/s against the batched median of the same size, in the same
run.

Run: ``.venv/bin/python benchmarks/bench_load.py [--images 850 8500 85000] [--repeats 3]
[--repeats-large 2] [--naive-repeats 3] [--durability-cost] [--json PATH]``.
``--durability-cost`` also loads each size with snapshots only (``COVR_EMBEDDED_DURABILITY=
snapshot``), interleaved, and reports the append-only file's cost as a ratio (issue 21).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import median, parse_args, quick_path, write_json
from covr.graph import GraphStore, catalog, open_store
from covr.scene.model import SceneGraph
from covr.scene.records import object_key, relation_key
from covr.settings import Settings
from covr_loaders import synthetic
from covr_loaders.jobs import gqa_job
from covr_loaders.writer import run_load

NAIVE_IMAGE = catalog.get("bench/naive_image")
NAIVE_OBJECT = catalog.get("bench/naive_object")
NAIVE_RELATION = catalog.get("bench/naive_relation")
LARGE = 50_000
"""Sizes from here on use ``--repeats-large`` (a 1× load takes minutes on the shared machine)."""


def store_memory(store: GraphStore) -> dict[str, float]:
    """The graph's own size and the server's used memory, in MB (FalkorDB stores only)."""
    command = getattr(store, "command", None)
    if command is None:
        return {}
    usage = command("GRAPH.MEMORY", "USAGE", getattr(store, "graph_name", "covr"))
    fields = dict(zip(usage[::2], usage[1::2], strict=False))
    info = command("INFO", "memory")
    return {
        "graph_mb": float(fields.get("total_graph_sz_mb", 0)),
        "used_memory_mb": float(info.get("used_memory", 0)) / 1e6,
        "used_memory_peak_mb": float(info.get("used_memory_peak", 0)) / 1e6,
    }


def settings_for(data_dir: Path) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, graph_uri="")  # type: ignore[call-arg]


def one_load(path: Path, data_dir: Path) -> dict[str, Any]:
    """Load ``path`` into a fresh store under ``data_dir`` (runs in its own process)."""
    settings = settings_for(data_dir)
    load_before = os.getloadavg()[0]
    with open_store(settings.graph) as store:
        store.apply_schema()
        summary = run_load(
            store,
            gqa_job([path], "train", settings.load),
            data_dir=settings.data_dir,
            batch_images=settings.load_batch_images,
        )
        memory = store_memory(store)
    return {
        "images": summary.images,
        "seconds": summary.seconds,
        "images_per_s": summary.images_per_s,
        "elements": summary.nodes_created + summary.relationships_created,
        "elements_per_s": summary.elements_per_s,
        "write_elements_per_s": (summary.nodes_created + summary.relationships_created)
        / max(summary.seconds - summary.finish_seconds, 1e-9),
        "finish_seconds": summary.finish_seconds,
        "snapshot_seconds": summary.snapshot_seconds,
        "stats_incremental": summary.stats_incremental,
        "loader_peak_rss_mb": summary.peak_rss_mb,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg()[0],
        **memory,
    }


def bench_pipeline(path: Path, work: Path, durability: str | None = None) -> dict[str, Any]:
    """One load in a fresh interpreter (see the module docstring); ``durability`` sets
    ``COVR_EMBEDDED_DURABILITY`` for it (``None``: the default, ``always``)."""
    data_dir = Path(tempfile.mkdtemp(prefix="load-", dir=work))
    env = dict(os.environ)
    if durability is not None:
        env["COVR_EMBEDDED_DURABILITY"] = durability
    done = subprocess.run(
        [sys.executable, __file__, "--single", str(path), "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"load of {path} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def naive_load(store: GraphStore, graphs: list[SceneGraph]) -> int:
    """One statement per node: what a loader without batching does."""
    statements = 0
    for graph in graphs:
        image = graph.image_id
        store.write(NAIVE_IMAGE, {"props": {"id": image, "source": graph.source}})
        statements += 1
        for obj in graph.objects:
            props = {
                "key": object_key(image, obj.id),
                "id": obj.id,
                "name": obj.name,
                "attributes": list(obj.attributes),
            }
            store.write(NAIVE_OBJECT, {"image": image, "props": props})
            statements += 1
        for rel in graph.relations:
            store.write(
                NAIVE_RELATION,
                {
                    "subject": object_key(image, rel.subject),
                    "target": object_key(image, rel.object),
                    "props": {"key": relation_key(image, rel.id), "id": rel.id, "name": rel.name},
                },
            )
            statements += 1
    return statements


def bench_naive(images: int, work: Path) -> dict[str, Any]:
    graphs = list(synthetic.generate(images, seed=1))
    settings = settings_for(Path(tempfile.mkdtemp(prefix="naive-", dir=work)))
    load_before = os.getloadavg()[0]
    with open_store(settings.graph) as store:
        store.apply_schema()
        started = time.perf_counter()
        statements = naive_load(store, graphs)
        seconds = time.perf_counter() - started
    return {
        "images": images,
        "seconds": seconds,
        "images_per_s": images / seconds,
        "statements": statements,
        "load_average_before": load_before,
    }


def summarize(images: int, path: Path, runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = (
        "seconds",
        "finish_seconds",
        "snapshot_seconds",
        "images_per_s",
        "elements_per_s",
        "write_elements_per_s",
        "loader_peak_rss_mb",
    )
    row: dict[str, Any] = {
        "images": images,
        "file_mb": path.stat().st_size / 1e6,
        "repeats": len(runs),
        "elements": runs[0]["elements"],
        "stats_incremental": all(r["stats_incremental"] for r in runs),
        **{f"{k}_median": median(r[k] for r in runs) for k in keys},
        "loader_peak_rss_mb_max": max(r["loader_peak_rss_mb"] for r in runs),
        "graph_mb": median(r["graph_mb"] for r in runs),
        "used_memory_mb": median(r["used_memory_mb"] for r in runs),
        "load_averages": [round(r["load_average_before"], 1) for r in runs],
        "runs": runs,
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--images", type=int, nargs="+", default=[850, 8500, 85000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--repeats-large", type=int, default=2)
    parser.add_argument("--naive-repeats", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--work", type=Path, help="Directory for files and stores (kept).")
    parser.add_argument(
        "--durability-cost",
        action="store_true",
        help="Per size, also load with COVR_EMBEDDED_DURABILITY=snapshot (interleaved with the "
        "default 'always') and report the append-only file's cost as a ratio of images/s.",
    )
    parser.add_argument("--single", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    quick = {"images": [100], "repeats": 1, "naive_repeats": 1, "work": quick_path("load")}
    args = parse_args(parser, quick)
    if args.single is not None:
        print(json.dumps(one_load(args.single, args.data_dir)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="covr-bench-load-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"cpus": os.cpu_count(), "sizes": []}
    for images in args.images:
        path = work / f"gqa_{images}.json"
        if not path.exists():
            synthetic.write("gqa", path, images=images, seed=1)
        repeats = args.repeats_large if images >= LARGE else args.repeats
        runs: list[dict[str, Any]] = []
        snapshot_runs: list[dict[str, Any]] = []
        for _ in range(repeats):  # interleaved: the machine's noise hits both modes alike
            runs.append(bench_pipeline(path, work))
            if args.durability_cost:
                snapshot_runs.append(bench_pipeline(path, work, "snapshot"))
        row = summarize(images, path, runs)
        if snapshot_runs:
            row["snapshot_only"] = summarize(images, path, snapshot_runs)
            row["durability_ratio"] = (
                row["images_per_s_median"] / row["snapshot_only"]["images_per_s_median"]
            )
            print(
                f"{images:>7,} images: append-only file (fsync always) "
                f"{row['images_per_s_median']:,.0f} images/s vs snapshots only "
                f"{row['snapshot_only']['images_per_s_median']:,.0f} images/s: "
                f"ratio {row['durability_ratio']:.2f}",
                flush=True,
            )
        results["sizes"].append(row)
        print(
            f"{images:>7,} images ({row['file_mb']:.0f} MB), median of {repeats}: "
            f"{row['seconds_median']:.1f} s (of which name statistics + snapshot "
            f"{row['finish_seconds_median']:.1f} s, snapshot alone "
            f"{row['snapshot_seconds_median']:.1f} s), {row['images_per_s_median']:,.0f} images/s, "
            f"{row['elements_per_s_median']:,.0f} elements/s "
            f"({row['write_elements_per_s_median']:,.0f} before statistics + snapshot), "
            f"name statistics {'added' if row['stats_incremental'] else 'recounted'}, "
            f"loader peak RSS {row['loader_peak_rss_mb_median']:.0f} MB "
            f"(max {row['loader_peak_rss_mb_max']:.0f}), graph {row['graph_mb']:.0f} MB, "
            f"server used_memory {row['used_memory_mb']:.0f} MB; "
            f"load average before runs {row['load_averages']}",
            flush=True,
        )
    if not args.no_baseline:
        smallest = min(args.images)
        naive_runs = [bench_naive(smallest, work) for _ in range(args.naive_repeats)]
        batched = next(r for r in results["sizes"] if r["images"] == smallest)
        naive = {
            "images": smallest,
            "repeats": len(naive_runs),
            "images_per_s_median": median(r["images_per_s"] for r in naive_runs),
            "statements": naive_runs[0]["statements"],
            "load_averages": [round(r["load_average_before"], 1) for r in naive_runs],
        }
        naive["ratio"] = batched["images_per_s_median"] / naive["images_per_s_median"]
        results["naive"] = naive
        print(
            f"naive (one statement per image/object/relation), {smallest:,} images, median of "
            f"{len(naive_runs)}: {naive['images_per_s_median']:,.0f} images/s; batched is "
            f"{naive['ratio']:.1f}× faster (load averages {naive['load_averages']})"
        )
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
