"""What atomic replacement costs a load (issue 40: "not more than 15 % of load throughput").

A re-load of a file whose images are all stored replaces every one of them: before issue 40 a
batch was ``load/delete_images`` then ``load/create_images`` (up to a batch of images lost when
the create failed); now it is ``GraphStore.replace_images`` (one transaction on Neo4j; staged
then switched on FalkorDB). A first load of new images takes neither path, but it runs the
stricter record checks (``covr.scene.limits``), so both are measured.

For each checkout (this one, and a baseline given with ``--baseline DIR``, for example a
``git worktree`` of the commit before), a fresh process loads a synthetic GQA-format file into
a fresh store and then loads it again; the checkouts alternate, ``--repeats`` times each, and
the medians and their ratios are printed (same run, same machine). Only the Python packages
come from the baseline directory (``server/`` and ``loaders/`` on ``PYTHONPATH``); the Cypher
files are this checkout's, which add statements and change none the baseline runs.

Run: ``.venv/bin/python benchmarks/bench_replace.py --baseline /tmp/base [--images 8500]
[--repeats 3] [--backend falkordb|neo4j] [--batch-images 5000] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import parse_args, write_json

ROOT = Path(__file__).resolve().parents[1]


def one_run(path: Path, data_dir: Path, backend: str, batch_images: int) -> dict[str, Any]:
    """Load ``path`` twice into a fresh store (in this process); elements/s of each load."""
    from covr.graph import open_store
    from covr.settings import Settings
    from covr_loaders.jobs import gqa_job
    from covr_loaders.writer import run_load

    values: dict[str, Any] = {"data_dir": data_dir, "graph_uri": "", "graph_backend": backend}
    settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
    out: dict[str, Any] = {}
    with open_store(settings.graph) as store:
        store.clear()
        store.apply_schema()
        job = gqa_job([path], "train", settings.load)
        for name in ("first", "again"):
            started = time.perf_counter()
            summary = run_load(store, job, data_dir=data_dir / name, batch_images=batch_images)
            seconds = time.perf_counter() - started
            elements = summary.nodes_created + summary.relationships_created
            out[name] = {"seconds": seconds, "elements_per_s": elements / seconds}
    return out


def run_checkout(
    checkout: Path, path: Path, backend: str, work: Path, batch_images: int
) -> dict[str, Any]:
    env = dict(os.environ)
    if checkout != ROOT:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(checkout / "server"), str(checkout / "loaders"), env.get("PYTHONPATH", "")]
        )
    data_dir = Path(tempfile.mkdtemp(dir=work, prefix="store-"))
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--single",
            str(path),
            "--data-dir",
            str(data_dir),
            "--backend",
            backend,
            "--batch-images",
            str(batch_images),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, required=False)
    parser.add_argument("--images", type=int, default=8500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backend", default="falkordb")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--batch-images",
        type=int,
        default=5000,
        help="images per write (5000: FalkorDB's default; the managed Neo4j's is 500)",
    )
    parser.add_argument("--single", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    args = parse_args(parser, {"images": 200, "repeats": 1})
    if args.single is not None:
        print(json.dumps(one_run(args.single, args.data_dir, args.backend, args.batch_images)))
        return
    from covr_loaders import gqa, synthetic

    work = Path(tempfile.mkdtemp(prefix="covr-bench-replace-"))
    path = work / "train_sceneGraphs.json"
    graphs = synthetic.generate(args.images, seed=7, split="train")
    path.write_text(json.dumps(dict(gqa.to_record(g) for g in graphs)))
    checkouts = {"current": ROOT}
    if args.baseline is not None:
        checkouts["baseline"] = args.baseline.resolve()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for repeat in range(args.repeats):
        for name, checkout in checkouts.items():
            result = run_checkout(checkout, path, args.backend, work, args.batch_images)
            runs[name].append(result)
            print(
                f"[{repeat + 1}/{args.repeats}] {name}: first {result['first']['elements_per_s']:,.0f}"
                f" el/s, again {result['again']['elements_per_s']:,.0f} el/s "
                f"(load {os.getloadavg()[0]:.1f})",
                file=sys.stderr,
            )
    report: dict[str, Any] = {"images": args.images, "backend": args.backend, "runs": runs}
    for name, results in runs.items():
        report[name] = {
            load: statistics.median(r[load]["elements_per_s"] for r in results)
            for load in ("first", "again")
        }
    if "baseline" in report:
        report["ratio"] = {
            load: report["current"][load] / report["baseline"][load] for load in ("first", "again")
        }
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=1))
    if args.json:
        write_json(args.json, report, indent=1)


if __name__ == "__main__":
    main()
