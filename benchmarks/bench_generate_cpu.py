"""CPU per question of the default ``covr generate`` (store lookup + ONNX models), two revisions
side by side: what a change to the store path buys, measured in one run (issue 16, Performance).

Each revision (``--old``, ``--new``) is a git worktree run through a folder of links that makes
its packages import first (``harness.worktree``); both generate from the same embedded FalkorDB
holding ``--images`` synthetic GQA val images (``bench_questions.cli_dataset``: loaded once per
work folder; the server runs until the end). Every repeat runs, interleaved, as fresh processes
of one worker each:

- ``old``: the old revision;
- ``new cold``: the new revision with the data folder's remembered pair scores deleted first
  (what the first run over a store costs);
- ``new warm``: the new revision again (it reads the scores the cold run kept).

CPU seconds are the ``covr`` process's (``RUSAGE_CHILDREN``) plus the graph server's
(``/proc/<pid>/stat``), so the machine's load does not enter them; medians over repeats; a
digest per mode (the outputs must be the same bytes for a change that only saves work).

Run: ``.venv/bin/python benchmarks/bench_generate_cpu.py --old REV [--new HEAD] [--images 100]
[--sources 30] [--repeats 3] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_questions import REFERENCE_Q_PER_CPU_S, cli_dataset, run_covr
from benchmarks.harness import CpuClock, median, parse_args, quick_path, worktree, write_json

MODES = ("old", "new cold", "new warm")


def run_once(
    shim: Path, env: dict[str, str], pid: int, args: argparse.Namespace, out: Path
) -> dict[str, Any]:
    """One ``covr generate`` process of the revision behind ``shim``."""
    cmd = [sys.executable, "-m", "covr.cli.main", "generate", "--split", "val", "--quiet"]
    cmd += ["--images", str(args.sources), "--seed", str(args.seed), "--workers", "1"]
    cmd += ["--out", str(out)]
    full = {**env, "PYTHONPATH": str(shim)}
    load = os.getloadavg()[0]
    cpu, start = CpuClock(server_pid=pid), time.perf_counter()
    done = subprocess.run(cmd, env=full, cwd=shim.parent, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"generate failed ({done.returncode}): {done.stderr[-2000:]}")
    data = out.read_bytes()
    return {
        "examples": data.count(b"\n"),
        "wall_s": time.perf_counter() - start,
        "client_cpu_s": cpu.children_s(),
        "server_cpu_s": cpu.server_s(),
        "load_average": load,
        "digest": hashlib.sha256(data).hexdigest()[:16],
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    total = median(r["client_cpu_s"] + r["server_cpu_s"] for r in runs)
    examples = runs[0]["examples"]
    return {
        "examples": examples,
        "median_cpu_s": round(total, 2),
        "median_client_cpu_s": round(median(r["client_cpu_s"] for r in runs), 2),
        "median_server_cpu_s": round(median(r["server_cpu_s"] for r in runs), 2),
        "median_wall_s": round(median(r["wall_s"] for r in runs), 2),
        "questions_per_cpu_s": round(examples / total, 1),
        "x_reference_29_6": round(examples / total / REFERENCE_Q_PER_CPU_S, 2),
        "digests": sorted({r["digest"] for r in runs}),
        "load_average": [round(r["load_average"], 1) for r in runs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="The revision to compare against (required).")
    parser.add_argument("--new", default="HEAD")
    parser.add_argument("--images", type=int, default=100, help="Synthetic images in the store.")
    parser.add_argument("--sources", type=int, default=30, help="Source images per run.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", default="/tmp/covr-bgc")
    parser.add_argument("--json", default="")
    quick = {
        "old": "HEAD",  # against itself: shows the run works
        "images": 30,
        "sources": 3,
        "repeats": 1,
        "work": str(quick_path("generate_cpu")),
    }
    args = parse_args(parser, quick)
    if args.old is None:
        parser.error("the following arguments are required: --old")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    env, pid = cli_dataset(args.images, work, args.seed)
    memo_folder = Path(env["COVR_DATA_DIR"]) / "models"
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
    try:
        with worktree(args.old, work, "old") as old, worktree(args.new, work, "new") as new:
            for repeat in range(args.repeats):
                for mode in MODES:
                    if mode == "new cold":
                        for memo in memo_folder.glob("*.pair-scores.npz"):
                            memo.unlink()
                    shim = old if mode == "old" else new
                    out = work / f"out-{mode.replace(' ', '-')}.jsonl"
                    run = run_once(shim, env, pid, args, out)
                    runs[mode].append(run)
                    print(json.dumps({"repeat": repeat, "mode": mode, **run}), file=sys.stderr)
    finally:
        run_covr(["db", "stop"], env)  # the store stays loaded on disk for the next run
    cells = {m: summary(r) for m, r in runs.items()}
    base = cells["old"]["median_cpu_s"] / cells["old"]["examples"]
    for cell in cells.values():
        cell["cpu_per_question_old_over_this"] = round(
            base / (cell["median_cpu_s"] / cell["examples"]), 2
        )
    result = {
        "old": args.old,
        "new": args.new,
        "images": args.images,
        "sources": args.sources,
        "repeats": args.repeats,
        "cells": cells,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
