"""The warm related call, library and RPC, measured as work: CPU per call and Python calls per call.

Why this exists: ``bench_service.py --overhead-only`` times one warm call per request and pair
(library, then RPC); at ~0.5 ms and ~1.7 ms those medians move by 10-50 % between rounds of the
*same* code on this shared 2-core machine, so a 5 % comparison of two commits (issue 19) cannot
rest on them. This benchmark measures the same warm calls in ways that hold still:

1. **CPU per call over blocks of calls.** ``covr serve`` runs as a subprocess on an embedded store
   of ``--images`` synthetic GQA images; every request of a pool is answered once (warm), then
   ``--blocks`` blocks of 20 RPCs per request and 60 library calls per request (``lookup.related``
   with the lookup the server builds) are run. Per block: the serve process's CPU per RPC
   (``/proc``), this thread's CPU per library call, the wall per call, and the graph server's
   CPU per call. The graph server does the same work per call in every tree (one generation
   check), so its CPU is a **control**: when the machine is slower in a round, it is slower too,
   and the ``normalized`` ratio divides that out.
2. **Python calls per warm call** (``--count-calls``): an in-process server with a counting
   profile function on its threads: calls per warm RPC (server side) and per warm library call.
   Deterministic, so two trees compare exactly.

``--compare REV REV`` checks both commits out as git worktrees (removed afterwards), runs the
measurement in each tree's own code, alternating ``--rounds`` times, and prints the after/before
ratio of each measure per round and its median, with the call counts of both trees.

Run: ``.venv/bin/python benchmarks/bench_warm_calls.py --compare 3e22dd8 HEAD --rounds 6``
(about 75 s per tree and round); ``--measure`` alone measures the checked-out tree.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.harness`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import median, parse_args, proc_cpu_s, write_json

ROOT = Path(__file__).resolve().parent.parent
LINKS = {
    "covr": "server/covr",
    "covr_cypher": "cypher",
    "covr_loaders": "loaders/covr_loaders",
    "covr_client": "clients/python/covr_client",
}
"""Import name -> folder in a tree: a link folder first on ``PYTHONPATH`` runs that tree's code."""
MEASURES = (
    "rpc_cpu_ms",
    "rpc_wall_ms",
    "lib_cpu_ms",
    "lib_wall_ms",
    "db_cpu_per_rpc_ms",
    "db_cpu_per_lib_ms",
)
CONTROLS = {"rpc_cpu_ms": "db_cpu_per_rpc_ms", "lib_cpu_ms": "db_cpu_per_lib_ms"}


def _tree_bench() -> Any:
    """The measured tree's own ``bench_service`` (pool, RPC call, warm-up helpers): its
    ``benchmarks`` folder is first on ``sys.path`` (:func:`main`)."""
    return importlib.import_module("bench_service")


def _rpc(bs: Any) -> Callable[..., None]:
    """The tree's one-request RPC helper (``grpc_call``; ``_grpc_call`` in older trees)."""
    found: Callable[..., None] = getattr(bs, "grpc_call", None) or bs._grpc_call
    return found


def _load(work: Path, images: int) -> tuple[Any, Any, list[dict[str, Any]]]:
    """A loaded embedded store (started by ``covr db start``), its settings and a related pool."""
    bs = _tree_bench()

    from covr.graph import open_store
    from covr.settings import Settings
    from covr_loaders import synthetic
    from covr_loaders.jobs import gqa_job
    from covr_loaders.writer import run_load

    settings = Settings(_env_file=None, data_dir=work / "d", graph_uri="")  # type: ignore[call-arg]
    files = synthetic.write("gqa", work / "train_sceneGraphs.json", images=images, seed=1)
    store = open_store(settings.graph)
    store.apply_schema()
    run_load(
        store,
        gqa_job(files, "train", settings.load),
        data_dir=settings.data_dir,
        batch_images=settings.load_batch_images,
    )
    pool = bs.make_pool(store, settings, 100, seed=7, questions=False)
    return store, settings, [r for r in pool if r["rpc"] == "related"]


def _block(
    repeats: int,
    pool: list[dict[str, Any]],
    call: Callable[[dict[str, Any]], Any],
    cpu_s: Callable[[], float],
    db_cpu_s: Callable[[], float],
) -> tuple[float, float, float]:
    """``repeats`` calls per pool request: wall, ``cpu_s`` and graph-server CPU per call (ms)."""
    n = repeats * len(pool)
    cpu, db, began = cpu_s(), db_cpu_s(), time.perf_counter()
    for _ in range(repeats):
        for request in pool:
            call(request)
    per = 1000 / n
    return (
        (time.perf_counter() - began) * per,
        (cpu_s() - cpu) * per,
        (db_cpu_s() - db) * per,
    )


def measure(images: int, blocks: int) -> dict[str, Any]:
    """Step 1 of the module docstring, in the current tree; medians over the blocks."""
    bs = _tree_bench()
    call = _rpc(bs)
    import grpc

    from covr.related.filters import build_lookup
    from covr_client._proto import service_pb2_grpc

    work = Path(tempfile.mkdtemp(prefix="covr-warm-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVR_")}
    env["COVR_DATA_DIR"] = str(work / "d")
    covr = [sys.executable, "-m", "covr.cli.main"]
    subprocess.run([*covr, "db", "start"], env=env, check=True, capture_output=True)
    server = None
    blocks_out: dict[str, list[float]] = {k: [] for k in MEASURES}
    try:
        store, settings, pool = _load(work, images)
        found = subprocess.run(
            ["pgrep", "-n", "-f", str(work / "d")], capture_output=True, text=True
        )
        db_pid = int(found.stdout.split()[0])
        port = bs.free_port()
        server = subprocess.Popen(
            [*covr, "serve", "--port", str(port), "--no-samples"],
            env={**env, "COVR_SERVICE_LOG_REQUESTS": "false"},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert server.stdout is not None
        if not server.stdout.readline().startswith("listening on"):
            raise RuntimeError("covr serve did not start")
        target = f"127.0.0.1:{port}"
        bs.warm_up(target, pool)
        lookup = build_lookup(store, settings.related, settings.models)
        lookup.warm()
        with grpc.insecure_channel(target) as channel:
            stub = service_pb2_grpc.CovrServiceStub(channel)
            for r in pool:  # one cold call each: every timed call below is a warm one
                call(stub, r, 9)
                lookup.related(r["key"], seed=r["seed"] + 9, limit=20)
            time.sleep(2)
            serve_cpu = partial(proc_cpu_s, server.pid)
            db_cpu = partial(proc_cpu_s, db_pid)
            rpc = partial(call, stub)
            for _ in range(blocks):
                wall, cpu, db = _block(20, pool, lambda r: rpc(r, 9), serve_cpu, db_cpu)
                blocks_out["rpc_wall_ms"].append(wall)
                blocks_out["rpc_cpu_ms"].append(cpu)
                blocks_out["db_cpu_per_rpc_ms"].append(db)
                wall, cpu, db = _block(
                    60,
                    pool,
                    lambda r: lookup.related(r["key"], seed=r["seed"] + 9, limit=20),
                    time.thread_time,
                    db_cpu,
                )
                blocks_out["lib_wall_ms"].append(wall)
                blocks_out["lib_cpu_ms"].append(cpu)
                blocks_out["db_cpu_per_lib_ms"].append(db)
        store.close()
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        subprocess.run([*covr, "db", "stop"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return {k: median(v) for k, v in blocks_out.items()}


def count_calls(images: int) -> dict[str, float]:
    """Step 2 of the module docstring: Python calls per warm RPC (server threads) and per warm
    library call, in the current tree."""
    bs = _tree_bench()
    call = _rpc(bs)
    import grpc

    from covr.related.filters import build_lookup
    from covr.service.server import build_server
    from covr_client._proto import service_pb2_grpc

    work = Path(tempfile.mkdtemp(prefix="covr-calls-"))
    counts: collections.Counter[str] = collections.Counter()
    on = threading.Event()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if on.is_set() and event in ("call", "c_call"):
            counts[event] += 1

    try:
        store, settings, pool = _load(work, images)
        settings = settings.model_copy(update={"service_port": 0, "service_log_requests": False})
        threading.setprofile(profile)  # the server's threads start after this
        service = build_server(settings.server, store)
        service.start()
        bs.warm_up(service.target, pool)
        lookup = build_lookup(store, settings.related, settings.models)
        lookup.warm()
        with grpc.insecure_channel(service.target) as channel:
            stub = service_pb2_grpc.CovrServiceStub(channel)
            for r in pool:
                call(stub, r, 5)
                lookup.related(r["key"], seed=r["seed"] + 5, limit=20)
            on.set()
            for r in pool:
                call(stub, r, 5)
            on.clear()
            rpc = sum(counts.values()) / len(pool)
            counts.clear()
            sys.setprofile(profile)
            on.set()
            for r in pool:
                lookup.related(r["key"], seed=r["seed"] + 5, limit=20)
            on.clear()
            sys.setprofile(None)
            library = sum(counts.values()) / len(pool)
        threading.setprofile(None)
        service.stop(0)
        store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"calls_per_warm_rpc_server": rpc, "calls_per_warm_library_call": library}


# ---------------------------------------------------------------------------- comparison


def _tree(rev: str, parent: Path) -> tuple[Path, Path]:
    """A detached worktree of ``rev`` and its link folder (see :data:`LINKS`)."""
    tree = parent / rev.replace("/", "_")
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), rev], check=True
    )
    links = parent / f"links-{tree.name}"
    links.mkdir()
    for name, folder in LINKS.items():
        (links / name).symlink_to(tree / folder)
    return tree, links


def _run_in(tree: Path, links: Path, flag: str, args: argparse.Namespace) -> dict[str, Any]:
    out = tree / "warm-calls.json"
    argv = [
        sys.executable,
        __file__,
        flag,
        "--images",
        str(args.images),
        "--blocks",
        str(args.blocks),
    ]
    env = {
        **os.environ,
        "PYTHONPATH": f"{links}:{tree}:{tree / 'benchmarks'}",
        "OMP_NUM_THREADS": "1",
    }
    subprocess.run(
        [*argv, "--json", str(out)], cwd=tree, env=env, check=True, stderr=subprocess.DEVNULL
    )
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def compare(args: argparse.Namespace) -> dict[str, Any]:
    before, after = args.compare
    parent = Path(tempfile.mkdtemp(prefix="covr-warm-trees-"))
    trees = {}
    try:
        for rev in (before, after):
            trees[rev] = _tree(rev, parent)
        calls = {rev: _run_in(*trees[rev], "--count-calls", args) for rev in (before, after)}
        rounds: dict[str, list[dict[str, Any]]] = {before: [], after: []}
        for n in range(args.rounds):
            for rev in (before, after) if n % 2 == 0 else (after, before):
                rounds[rev].append(_run_in(*trees[rev], "--measure", args))
                print(
                    f"round {n + 1} {rev}: {json.dumps(rounds[rev][-1])}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        for tree, _links in trees.values():
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
            )
        shutil.rmtree(parent, ignore_errors=True)
    ratios: dict[str, Any] = {}
    for key in MEASURES:
        per = [b[key] / a[key] for a, b in zip(rounds[before], rounds[after], strict=True)]
        ratios[key] = {
            "per_round": [round(x, 3) for x in per],
            "median": round(median(per), 3),
        }
    for key, control in CONTROLS.items():
        per = [
            (b[key] / b[control]) / (a[key] / a[control])
            for a, b in zip(rounds[before], rounds[after], strict=True)
        ]
        ratios[f"{key} normalized"] = {
            "per_round": [round(x, 3) for x in per],
            "median": round(median(per), 3),
        }
    return {"before": before, "after": after, "calls": calls, "rounds": rounds, "ratios": ratios}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two git revisions")
    parser.add_argument("--measure", action="store_true", help="measure the current tree (step 1)")
    parser.add_argument(
        "--count-calls", action="store_true", help="count calls in the current tree (step 2)"
    )
    parser.add_argument(
        "--rounds", type=int, default=6, help="alternating rounds per tree (--compare)"
    )
    parser.add_argument("--images", type=int, default=850)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--json", type=Path, default=None)
    args = parse_args(parser, {"measure": True, "images": 30, "blocks": 1})
    # the measured tree's own benchmark helpers (bench_service), not this file's neighbours
    sys.path.insert(0, str(Path.cwd() / "benchmarks"))
    if args.compare:
        report = compare(args)
        print(f"after/before ({report['after']} / {report['before']}), per round and median:")
        for key, ratio in report["ratios"].items():
            print(f"  {key:34s} {ratio['median']:.3f}  {ratio['per_round']}")
        for rev, calls in report["calls"].items():
            print(f"  calls {rev}: {json.dumps(calls)}")
    elif args.count_calls:
        report = count_calls(args.images)
    elif args.measure:
        report = measure(args.images, args.blocks)
    else:
        parser.error("give --compare BEFORE AFTER, --measure or --count-calls")
    if args.json is not None:
        write_json(args.json, report, indent=1)
    elif not args.compare:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
