"""Time to a dataset (issue 39, item 4 and the "time to a dataset" goal): ``covr build`` end to end.

"A balanced 100 k-example release from the 1x store in <= 1 h on this machine, one command."

What it runs, as a user would (a real ``covr build`` process, a real embedded store it starts
itself, nothing imported from the project in this process but the synthetic generator):

1. **data**: a synthetic GQA-format set of ``--images`` scene graphs (85,000 = 1x GQA), one seed,
   cut into two files by position: the last ``--val-images`` as ``val_sceneGraphs.json`` (the
   evaluation pool of the splits) and the rest as ``train_sceneGraphs.json``. One file cut in two,
   because the generator derives an image from its number: two files of one seed would hold the
   same ids. Written once per (images, seed) under ``--work`` and reused.
2. **build**: ``covr build OUT --gqa train... --gqa val... --examples N --seed S --workers K
   --json`` in a fresh ``COVR_DATA_DIR`` (``--store`` keeps one data directory across runs, so
   that a second run measures a build from the already loaded store: the load stage then reads
   its checkpoints only). Its own summary (wall and peak memory per stage, examples kept, what
   the images could not give) is the report, with this process's clock around it, the CPU of the
   build's process tree (``RUSAGE_CHILDREN``: the build, its workers and the embedded store
   server it starts and stops, each reaped by its parent), and the load average at the start
   and end.

Run: ``.venv/bin/python benchmarks/bench_build.py [--images 85000] [--val-images 10000]
[--examples 100000] [--workers 2] [--seed 1] [--work DIR] [--store DIR] [--json PATH]``.
``--quick`` (``make bench``): 120 images, 60 examples (about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import (
    REPO,
    children_cpu_s,
    load_averages,
    parse_args,
    quick_path,
    say,
    write_json,
)

DEFAULT_WORK = Path(tempfile.gettempdir()) / "covr-bench-build"
RESULT = REPO / "benchmarks/results/build.json"


def synthetic_pair(work: Path, images: int, val_images: int, seed: int) -> tuple[Path, Path]:
    """The train and val files of one synthetic set (see the module text), made once."""
    from covr_loaders import synthetic

    folder = work / f"gqa-{images}-val{val_images}-seed{seed}"
    train, val = folder / "train_sceneGraphs.json", folder / "val_sceneGraphs.json"
    if train.exists() and val.exists():
        return train, val
    folder.mkdir(parents=True, exist_ok=True)
    whole = folder / "all.json"
    synthetic.write("gqa", whole, images=images, seed=seed, split="train")
    graphs: dict[str, Any] = json.loads(whole.read_text(encoding="utf-8"))
    ids = list(graphs)
    cut = len(ids) - val_images
    for path, part in ((train, ids[:cut]), (val, ids[cut:])):
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({k: graphs[k] for k in part}), encoding="utf-8")
        tmp.replace(path)
    whole.unlink()
    return train, val


def run_build(args: argparse.Namespace, train: Path, val: Path) -> dict[str, Any]:
    data_dir = args.store or (args.work / "data")
    if args.store is None:
        shutil.rmtree(data_dir, ignore_errors=True)
    out = args.work / "build"
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "COVR_DATA_DIR": str(data_dir), "COVR_GRAPH_URI": ""}
    command = [
        sys.executable, "-m", "covr.cli.main", "build", str(out),
        "--gqa", str(train), "--gqa", str(val),
        "--examples", str(args.examples), "--seed", str(args.seed),
        "--workers", str(args.workers), "--json", "--quiet",
    ]  # fmt: skip
    say(f"build: {' '.join(command[3:])}")
    loads = load_averages()
    cpu_before = children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    stopped = subprocess.run(
        [sys.executable, "-m", "covr.cli.main", "db", "stop"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"covr build failed ({done.returncode}):\n{done.stderr[-4000:]}")
    summary = json.loads(done.stdout)
    return {
        "images": args.images,
        "val_images": args.val_images,
        "examples_target": args.examples,
        "workers": args.workers,
        "seed": args.seed,
        "wall_s": round(wall, 1),
        "build_tree_cpu_s": round(children_cpu_s() - cpu_before, 1),
        "load_average_start": loads,
        "load_average_end": load_averages(),
        "store_stopped": stopped.returncode == 0,
        "summary": summary,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=85_000)
    parser.add_argument("--val-images", type=int, default=10_000)
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument(
        "--store", type=Path, default=None, help="Reuse this data directory (a loaded store)."
    )
    parser.add_argument("--json", type=Path, default=RESULT)
    args = parse_args(
        parser,
        {
            "images": 120,
            "val_images": 40,
            "examples": 60,
            "work": quick_path("build"),
            "json": quick_path("build.json"),
        },
        argv,
    )
    if not 0 < args.val_images < args.images:
        parser.error("--val-images must be between 1 and --images - 1")
    args.work.mkdir(parents=True, exist_ok=True)
    say(f"data: {args.images} synthetic images ({args.val_images} val), seed 7")
    train, val = synthetic_pair(args.work, args.images, args.val_images, seed=7)
    result = run_build(args, train, val)
    write_json(args.json, result)
    summary = result["summary"]
    say(f"wall {result['wall_s']} s; summary in {args.json}")
    print(json.dumps({k: v for k, v in result.items() if k != "summary"}, indent=2))
    print(json.dumps(summary, indent=2)[:4000])


if __name__ == "__main__":
    main()
