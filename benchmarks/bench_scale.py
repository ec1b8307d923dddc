"""Ray against the process pool (issue 17, Performance: "Ray overhead"): ``covr generate`` with
``--workers N`` and with ``--ray local`` on N CPUs (``COVR_RAY_CPUS=N``, ``--shards 4N``), N = 1
and 2, on synthetic GQA-format val sets loaded into an embedded FalkorDB of their own (100
images: the sample's size; 8,500: 0.1x GQA), each run a fresh ``covr`` process as a user runs it.

Reported per cell: medians of wall time and questions/s over ``--repeats``, the examples, the
ratio Ray / pool at the same N (questions/s), and the digest of every output (Ray and the pool
must write the same bytes; a differing digest fails the benchmark). Ray's own start-up (a local
``ray.init`` and ``shutdown`` with N CPUs, nothing run) is timed separately, so its fixed cost
can be told from its per-image cost. The load average is printed: the machine is shared.

Run: ``.venv/bin/python benchmarks/bench_scale.py [--images 100 8500] [--sources 120]
[--repeats 3] [--lookup memory|store] [--json PATH]``. Reuses bench_questions' store set-up
(``cli_dataset``) and its per-process measurement (``cli_run``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_questions import cli_dataset, cli_run, run_covr
from benchmarks.harness import load_averages, median, parse_args, quick_path, write_json


def ray_start_s(cpus: int, temp: Path) -> float:
    """Wall seconds of a local ``ray.init`` + ``shutdown`` with ``cpus`` CPUs in a fresh
    process (what ``--ray local`` pays before the first shard)."""
    code = (
        "import time, logging, ray; t = time.perf_counter(); "
        f"ray.init(address='local', num_cpus={cpus}, include_dashboard=False, "
        f"logging_level=logging.ERROR, _temp_dir={str(temp)!r}, _node_ip_address='127.0.0.1', "
        "object_store_memory=256 << 20); ray.shutdown(); print(time.perf_counter() - t)"
    )
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def scene_read_s(env: dict[str, str]) -> dict[str, float]:
    """What each Ray worker of the memory path reads before its first image: every scene graph
    of the split, through its own store connection (the pool reads it once and forks)."""
    code = (
        "import time; from covr.graph import open_store; from covr.settings import Settings; "
        "from covr.related.lookup import RelatedLookup; from covr.scale.tasks import read_scenes; "
        "s = Settings(); store = open_store(s.graph); t = time.perf_counter(); "
        "lookup = RelatedLookup(store, settings=s.related); ids = lookup.image_ids('val'); "
        "n = len(read_scenes(lookup, ids)); print(time.perf_counter() - t, n); store.close()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    seconds, scenes = done.stdout.split()
    return {"seconds": round(float(seconds), 2), "scenes": int(scenes)}


def cells_for(workers: int) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The two ways of running with ``workers`` workers: flags and extra environment."""
    return {
        "pool": (["--workers", str(workers)], {}),
        "ray": (
            ["--ray", "local", "--shards", str(4 * workers)],
            {"COVR_RAY_CPUS": str(workers)},
        ),
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    wall = median(r["wall_s"] for r in runs)
    return {
        "examples": runs[0]["examples"],
        "median_wall_s": round(wall, 2),
        "questions_per_s": round(runs[0]["examples"] / wall, 2),
        "walls": [round(r["wall_s"], 2) for r in runs],
        "load_averages": [round(r["load_average"], 2) for r in runs],
        "digests": sorted({r["digest"] for r in runs}),
    }


def measure(args: argparse.Namespace, images: int) -> dict[str, Any]:
    """Every (mode, workers) cell on one dataset, interleaved per repeat."""
    work = Path(args.work)
    env, pid = cli_dataset(images, work, args.seed)
    env["COVR_RAY_TEMP_DIR"] = str(work / "ray")
    sources = ["--images", str(args.sources)] if args.sources else []
    flags = [*sources, "--seed", str(args.seed), "--lookup", args.lookup]
    cells: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    try:
        reads = [scene_read_s(env) for _ in range(args.repeats)]
        for repeat in range(args.repeats):
            for workers in (1, 2):
                for mode, (extra, extra_env) in cells_for(workers).items():
                    out = work / f"scale-{images}-{mode}-{workers}.jsonl"
                    run = cli_run({**env, **extra_env}, pid, [*flags, *extra], out)
                    cells[(mode, workers)].append(run)
                    line = {"images": images, "mode": mode, "workers": workers, "repeat": repeat}
                    print(json.dumps({**line, **run}), file=sys.stderr)
    finally:
        run_covr(["db", "stop"], env)
    table = {f"{m} / {w}": summary(r) for (m, w), r in cells.items()}
    digests = {d for cell in table.values() for d in cell["digests"]}
    if len(digests) != 1:
        raise SystemExit(f"outputs differ between Ray and the pool: {table}")
    ratios = {
        f"ray/pool at {w}": round(
            table[f"ray / {w}"]["questions_per_s"] / table[f"pool / {w}"]["questions_per_s"], 3
        )
        for w in (1, 2)
    }
    return {
        "images": images,
        "sources": args.sources or images,
        "lookup": args.lookup,
        "scene_read_s": reads,
        "cells": table,
        "ratios": ratios,
        "load_average_end": load_averages(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, nargs="+", default=[100, 8500])
    parser.add_argument("--sources", type=int, default=120, help="0: every image.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--lookup", choices=("memory", "store"), default="memory")
    parser.add_argument("--work", default="/tmp/covr-bscale")
    parser.add_argument("--json", type=Path, default=None)
    quick = {"images": [30], "sources": 4, "repeats": 1, "work": str(quick_path("scale"))}
    args = parse_args(parser, quick)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    starts = {
        n: [round(ray_start_s(n, Path(args.work) / "ray"), 2) for _ in range(args.repeats)]
        for n in (1, 2)
    }
    result = {
        "ray_start_s": {n: {"runs": s, "median": median(s)} for n, s in starts.items()},
        "datasets": [measure(args, images) for images in args.images],
        "total_s": 0.0,
    }
    result["total_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))
    if args.json is not None:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
