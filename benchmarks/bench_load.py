"""Loader benchmark (issue 3): synthetic GQA-format files at 0.01×, 0.1× and 1× GQA scale.

For each size: write the synthetic file (not timed), load it into a fresh embedded store with
the real pipeline (``covr_loaders.writer.run_load``), and report images/s, graph elements/s
(nodes + relationships created), the loader's peak RSS and the store's memory. Repeats give a
median. The naive baseline — one statement per object, relation and edge — runs on the smallest
size only and is reported as a ratio.

Run: ``.venv/bin/python benchmarks/bench_load.py [--images 850 8500 85000] [--repeats 3]
[--json PATH]``. Each load uses its own temporary data directory.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

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


def peak_rss_mb() -> float:
    """Peak resident memory of this process (the loader), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def store_memory_mb(store: GraphStore) -> float:
    """``used_memory`` of the FalkorDB server (embedded/external only)."""
    command = getattr(store, "command", None)
    if command is None:
        return float("nan")
    info = command("INFO", "memory")
    if isinstance(info, dict):
        return float(info.get("used_memory", 0)) / 1e6
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1]) / 1e6
    return float("nan")


def settings_for(data_dir: Path) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, graph_uri="")  # type: ignore[call-arg]


def bench_pipeline(path: Path, work: Path) -> dict[str, Any]:
    settings = settings_for(Path(tempfile.mkdtemp(prefix="load-", dir=work)))
    with open_store(settings) as store:
        store.apply_schema()
        summary = run_load(
            store,
            gqa_job([path], "train", settings),
            data_dir=settings.data_dir,
            batch_images=settings.load_batch_images,
        )
        memory = store_memory_mb(store)
    return {
        "images": summary.images,
        "seconds": summary.seconds,
        "images_per_s": summary.images_per_s,
        "elements": summary.nodes_created + summary.relationships_created,
        "elements_per_s": summary.elements_per_s,
        "store_memory_mb": memory,
    }


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
    with open_store(settings) as store:
        store.apply_schema()
        started = time.perf_counter()
        statements = naive_load(store, graphs)
        seconds = time.perf_counter() - started
    return {
        "images": images,
        "seconds": seconds,
        "images_per_s": images / seconds,
        "statements": statements,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, nargs="+", default=[850, 8500, 85000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="covr-bench-load-"))
    results: dict[str, Any] = {"sizes": []}
    for images in args.images:
        path = work / f"gqa_{images}.json"
        synthetic.write("gqa", path, images=images, seed=1)
        runs = [bench_pipeline(path, work) for _ in range(args.repeats)]
        row = {
            "images": images,
            "file_mb": path.stat().st_size / 1e6,
            "seconds_median": statistics.median(r["seconds"] for r in runs),
            "images_per_s_median": statistics.median(r["images_per_s"] for r in runs),
            "elements": runs[0]["elements"],
            "elements_per_s_median": statistics.median(r["elements_per_s"] for r in runs),
            "store_memory_mb": runs[-1]["store_memory_mb"],
            "loader_peak_rss_mb": peak_rss_mb(),
        }
        results["sizes"].append(row)
        print(
            f"{images:>7,} images ({row['file_mb']:.0f} MB): {row['seconds_median']:.1f} s, "
            f"{row['images_per_s_median']:,.0f} images/s, "
            f"{row['elements_per_s_median']:,.0f} elements/s, "
            f"loader peak RSS {row['loader_peak_rss_mb']:.0f} MB, "
            f"store {row['store_memory_mb']:.0f} MB",
            flush=True,
        )
    if not args.no_baseline:
        smallest = min(args.images)
        naive = bench_naive(smallest, work)
        batched = next(r for r in results["sizes"] if r["images"] == smallest)
        naive["ratio"] = batched["images_per_s_median"] / naive["images_per_s"]
        results["naive"] = naive
        print(
            f"naive (one statement per node), {smallest:,} images: "
            f"{naive['images_per_s']:,.0f} images/s; batched is {naive['ratio']:.1f}× faster"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
