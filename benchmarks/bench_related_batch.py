"""Batch distractor lookup: N unary FindRelatedImages calls vs one FindRelatedImagesBatch stream.

Setup (not timed): ``--images`` synthetic GQA-format scene graphs written by
``covr_loaders.synthetic`` and loaded with ``covr load gqa`` into the embedded store of a fresh
data directory, served by ``covr serve --port 0`` in its own process (the client is this one),
warmed (models, image table) by one batch over every image.

Measured, ``--repeats`` times (the order of the two alternates per repeat): the same images
asked one ``FindRelatedImages {image_id, max_subgraphs, page_size=1000}`` call after another,
and in one ``FindRelatedImagesBatch`` stream (same ``max_subgraphs``), both through the SDK.
Each mode and repeat uses a seed of its own, so neither answers from the result cache the other
filled (vocabularies and scene caches are warm for both). Printed: one JSON line with images/s
per repeat, the medians, and ``ratio`` = batch / unary median images/s; also whether both gave
the same number of subgraph records.

    .venv/bin/python benchmarks/bench_related_batch.py --images 200 --max-subgraphs 2 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import load_averages, median, parse_args, ratio


def unary(client: Any, ids: list[str], seed: int, max_subgraphs: int) -> tuple[float, int]:
    """Seconds for one FindRelatedImages call per image, and the subgraphs answered."""
    began = time.perf_counter()
    records = 0
    for image_id in ids:
        pages = client.find_related_images(
            image_id=image_id, seed=seed, max_subgraphs=max_subgraphs, page_size=1000
        )
        records += sum(1 for _ in pages)
    return time.perf_counter() - began, records


def batch(client: Any, ids: list[str], seed: int, max_subgraphs: int) -> tuple[float, int]:
    """Seconds for one batch stream over every image, and the subgraphs answered."""
    began = time.perf_counter()
    records = 0
    for result in client.find_related_images_batch(ids, seed=seed, max_subgraphs=max_subgraphs):
        assert result.ok, result.problems
        records += len(result.records)
    return time.perf_counter() - began, records


def measure(target: str, ids: list[str], args: argparse.Namespace) -> dict[str, Any]:
    from covr_client import Client

    rates: dict[str, list[float]] = {"unary": [], "batch": []}
    records: dict[str, set[int]] = {"unary": set(), "batch": set()}
    with Client(target, timeout=3600.0) as client:
        began = time.perf_counter()
        batch(client, ids, 0, args.max_subgraphs)  # warm-up: models, image table, scenes
        warm_s = time.perf_counter() - began
        for repeat in range(args.repeats):
            order = ["unary", "batch"] if repeat % 2 == 0 else ["batch", "unary"]
            for mode in order:
                seed = 1000 + 2 * repeat + (mode == "batch")
                run = unary if mode == "unary" else batch
                seconds, count = run(client, ids, seed, args.max_subgraphs)
                rates[mode].append(len(ids) / seconds)
                records[mode].add(count)
                print(f"repeat {repeat} {mode}: {len(ids) / seconds:.1f} images/s", file=sys.stderr)
    medians = {mode: median(values) for mode, values in rates.items()}
    return {
        "images": len(ids),
        "max_subgraphs": args.max_subgraphs,
        "repeats": args.repeats,
        "warm_up_s": round(warm_s, 1),
        "unary_images_per_s": [round(r, 2) for r in rates["unary"]],
        "batch_images_per_s": [round(r, 2) for r in rates["batch"]],
        "unary_median": round(medians["unary"], 2),
        "batch_median": round(medians["batch"], 2),
        "ratio": ratio(medians["batch"], medians["unary"], digits=3),
        "same_record_counts": records["unary"] == records["batch"] and len(records["unary"]) == 1,
        "records_per_pass": sorted(records["batch"]),
        "load_average": load_averages(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument("--max-subgraphs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parse_args(parser, {"images": 20, "max_subgraphs": 1, "repeats": 1})

    work = Path(tempfile.mkdtemp(prefix="covr-brb-"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(work / "d"),
        "COVR_SERVICE_LOG_REQUESTS": "false",
    }
    covr = [sys.executable, "-m", "covr.cli.main"]
    from covr_loaders import synthetic

    files = synthetic.write("gqa", work / "train_sceneGraphs.json", images=args.images, seed=1)
    began = time.perf_counter()
    load = [*covr, "load", "gqa", *map(str, files), "--split", "train"]
    subprocess.run(load, env=env, check=True, capture_output=True)
    load_s = round(time.perf_counter() - began, 1)
    serve = [*covr, "serve", "--port", "0", "--no-samples"]
    server = subprocess.Popen(serve, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        ready = server.stdout.readline()  # "listening on HOST:PORT"
        if not ready.startswith("listening on"):
            raise RuntimeError(f"covr serve did not start: {ready!r}")
        target = ready.split()[-1]
        from covr_client import Client

        with Client(target, timeout=600.0) as client:
            ids = list(client.list_images())
        report = {"load_s": load_s, **measure(target, ids, args)}
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
