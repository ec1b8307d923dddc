"""gRPC service benchmark (issue 7): loopback load with 1, 4 and 16 concurrent clients.

Setup (not timed): synthetic GQA-format scene graphs (``--images``, default 8,500 = 0.1× GQA) are
loaded by the real loader into an embedded store that runs *detached* (``covr db start``), so the
service process (``covr serve``) and this script's direct-library baseline use the same store.

Measured:

1. **Service overhead** (same run, same requests): for every request of a pool, the library call
   (``RelatedLookup.related``, ``generate_for_image`` over ``StoreRelated``, ``get_scene_graph``
   in this process, the lookup built from the same settings as the server's: same exclusivity
   model and presence filter, warmed like the server's) and the same request over
   gRPC (one client) are timed back to back, alternating which goes first so store caches favour
   neither. Reported: p50 of each and the median of the paired differences, once with fresh
   seeds (the lookups compute: their variance on a busy machine swamps a few ms) and once
   *warm* (each request sent once to both sides first, then timed: both answer from their
   result caches, so the difference is the service's own cost: validation, conversion,
   messages, transport; ``--warm-repeats`` timed pairs per warmed request). Each mode runs
   ``--overhead-seconds`` per RPC.
2. **Load**: for each RPC (``--rpcs``) and client count, that many client *processes* (spawned, each with its own
   channel, 30 s deadline; a refused call waits the server's ``RetryInfo`` hint, at least
   20 ms, as the SDK's retry policy would, then sends its next request) send requests for ``--duration`` seconds: throughput,
   p50/p99 latency and status codes. The server runs with ``--max-concurrent`` RPCs
   (``COVR_SERVICE_MAX_CONCURRENT_RPCS``), so 16 clients saturate it: excess calls must get
   ``RESOURCE_EXHAUSTED`` at once, never a timeout; so do the per-method limits
   (``COVR_SERVICE_MAX_GENERATIONS`` / ``COVR_SERVICE_MAX_LOOKUPS``, left at their defaults of
   one / two calls per core). Each phase uses fresh seeds, so result caches
   of one phase do not serve the next.
3. **Server RSS** sampled every 0.5 s from ``/proc``: at the start and end of each phase and the max;
   ``--soak SECONDS`` adds a mixed related + question phase (4 clients) with RSS per quarter.

Run: ``.venv/bin/python benchmarks/bench_service.py [--images 8500] [--duration 60]
[--clients 1 4 16] [--rpcs related questions scene_graph] [--pool 400] [--max-concurrent 8] [--json PATH]``
(``--overhead-only``: step 1 only, e.g. ``--images 850 --overhead-seconds 60 --overhead-only``).
The 2-core development machine is shared: numbers are noisy; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import median, parse_args, percentile, rss_mb, write_json

ROOT = Path(__file__).resolve().parent.parent
CALL_TIMEOUT_S = 30.0
REFUSED_BACKOFF_S = 0.02
KINDS = ("related", "questions", "scene_graph")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RssSampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            self.samples.append((time.monotonic(), rss_mb(self.pid)))

    def window(self, start: float, end: float) -> dict[str, float]:
        inside = [mb for t, mb in self.samples if start <= t <= end]
        if not inside:
            return {}
        return {"start_mb": inside[0], "end_mb": inside[-1], "max_mb": max(inside)}


# ---------------------------------------------------------------------------- requests


def load_and_pool(
    settings: Any,
    work: Path,
    images: int,
    pool_size: int,
    questions: bool,
    report: dict[str, Any],
) -> list[dict[str, Any]]:
    """Load ``images`` synthetic GQA images into the (running) store of ``settings`` with the
    real loader (``report["load_s"]``: its time) and draw the request pool from it."""
    from covr.graph import open_store
    from covr_loaders import synthetic
    from covr_loaders.jobs import gqa_job
    from covr_loaders.writer import run_load

    files = synthetic.write("gqa", work / "train_sceneGraphs.json", images=images, seed=1)
    with open_store(settings.graph) as store:
        store.apply_schema()
        began = time.perf_counter()
        run_load(
            store,
            gqa_job(files, "train", settings.load),
            data_dir=settings.data_dir,
            batch_images=settings.load_batch_images,
        )
        report["load_s"] = round(time.perf_counter() - began, 1)
        return make_pool(store, settings, pool_size, seed=7, questions=questions)


def start_serve(
    covr: list[str], env: dict[str, str], max_concurrent: int, log: Path | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``covr serve`` on a free port (no samples, no per-request log lines); waits for its ready
    line and returns the process and its target. Its stderr (errors with their tracebacks) goes
    to ``log`` when given, so a soak can say why a call failed."""
    port = free_port()
    stderr = log.open("a", encoding="utf-8") if log is not None else subprocess.DEVNULL
    server = subprocess.Popen(
        [*covr, "serve", "--port", str(port), "--no-samples"],
        env={
            **env,
            "COVR_SERVICE_MAX_CONCURRENT_RPCS": str(max_concurrent),
            "COVR_SERVICE_LOG_REQUESTS": "false",
        },
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    if not isinstance(stderr, int):
        stderr.close()  # the child holds its own descriptor
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("listening on"):
        raise RuntimeError(f"server did not start: {line!r}")
    return server, f"127.0.0.1:{port}"


def warm_up(target: str, pool: list[dict[str, Any]]) -> None:
    """Wait until the server's models are loaded and its lookup has read the image table, so no
    phase measures that (the library side warms its own lookup the same way)."""
    import grpc

    from covr_client._proto import related_pb2, service_pb2_grpc

    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        pair = related_pb2.TermPair(node_type=1, x="man", x_prime="woman")  # type: ignore[arg-type]
        stub.ScoreExclusivity(related_pb2.ScoreExclusivityRequest(pairs=[pair]), timeout=600)
        for request in [r for r in pool if r["rpc"] == "related"][:1]:
            grpc_call(stub, request, 999_999_937)  # a seed no phase uses


def make_pool(
    store: Any, settings: Any, size: int, seed: int, *, questions: bool
) -> list[dict[str, Any]]:
    """Related-image, question and scene-graph requests over random images of the store."""
    from covr.graph import catalog
    from covr.related.lookup import RelatedLookup

    rng = random.Random(seed)
    ids = [
        str(r["id"])
        for r in store.read(
            catalog.get("service/image_ids_page"),
            {"source": None, "split": None, "after": "", "limit": 100_000},
        )
    ]
    lookup = RelatedLookup(store, settings=settings.related)
    pool: list[dict[str, Any]] = []
    while len(pool) < size:
        image_id = rng.choice(ids)
        subgraphs = lookup.subgraphs_of_image(image_id)
        if subgraphs:
            g = rng.choice(subgraphs[:50])
            pool.append({"rpc": "related", "key": g.key, "seed": rng.randrange(1 << 30)})
            if questions:
                pool.append(
                    {"rpc": "questions", "image_id": image_id, "seed": rng.randrange(1 << 30)}
                )
        pool.append({"rpc": "scene_graph", "image_id": image_id})
    return pool


def grpc_call(stub: Any, request: dict[str, Any], seed_offset: int) -> None:
    """One request of the pool through ``stub`` (streams read to the end)."""
    from covr_client._proto import questions_pb2, related_pb2, scene_pb2, store_pb2

    if request["rpc"] == "questions":
        message_q = questions_pb2.GenerateQuestionsRequest(
            image_id=request["image_id"], seed=request["seed"] + seed_offset, count=1000
        )
        for _ in stub.GenerateQuestions(message_q, timeout=CALL_TIMEOUT_S):
            pass  # each message is a batch of examples
    elif request["rpc"] == "related":
        message = related_pb2.FindRelatedImagesRequest(
            subgraph=scene_pb2.SubgraphRef(key=request["key"]),
            seed=request["seed"] + seed_offset,
            page_size=20,
        )
        for _ in stub.FindRelatedImages(message, timeout=CALL_TIMEOUT_S):
            pass
    else:
        stub.GetSceneGraph(
            store_pb2.GetSceneGraphRequest(image_id=request["image_id"]), timeout=CALL_TIMEOUT_S
        )


def client_worker(
    target: str, pool: list[dict[str, Any]], start: int, duration: float, seed_offset: int
) -> dict[str, Any]:
    """One client process: requests back to back for ``duration`` seconds."""
    import grpc

    from covr_client._proto import service_pb2_grpc
    from covr_client.errors import from_rpc_error

    latencies: dict[str, list[float]] = {k: [] for k in KINDS}
    codes: Counter[str] = Counter()
    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        end = time.monotonic() + duration
        i = start
        while time.monotonic() < end:
            request = pool[i % len(pool)]
            # Fresh seeds on every pass over the pool and per client: no result-cache hits.
            fresh = seed_offset + (i // len(pool)) * 7_919 + start * 104_729
            i += 1
            began = time.perf_counter()
            try:
                grpc_call(stub, request, fresh)
                codes["OK"] += 1
                latencies[request["rpc"]].append(time.perf_counter() - began)
            except grpc.RpcError as exc:
                codes[exc.code().name] += 1
                if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    # as the SDK's retry policy would: at least the server's RetryInfo hint
                    hint = from_rpc_error(exc).retry_after or 0.0
                    time.sleep(max(REFUSED_BACKOFF_S, hint * (0.5 + random.random() / 2)))
    return {"latencies": latencies, "codes": dict(codes)}


def _worker_entry(args: tuple[str, list[dict[str, Any]], int, float, int], queue: Any) -> None:
    queue.put(client_worker(*args))


# ---------------------------------------------------------------------------- phases


def overhead(
    store: Any,
    settings: Any,
    target: str,
    pool: list[dict[str, Any]],
    seconds: float,
    kinds: list[str],
    warm_repeats: int = 1,
) -> dict[str, Any]:
    """Paired library-vs-RPC timings of the same requests, alternating the order; ``seconds``
    per RPC kind; in warm mode each warmed request is timed ``warm_repeats`` times."""
    import grpc

    from covr.questions.generate import GenerationOptions, generate_for_image
    from covr.related.filters import build_lookup
    from covr.related.store_provider import StoreRelated
    from covr_client._proto import service_pb2_grpc
    from covr_loaders.readback import get_scene_graph

    # The lookup the server builds from the same settings (covr.service.rooms): the ONNX
    # exclusivity model and the presence filter when the settings say so. A plain
    # RelatedLookup (word lists, no presence filter) did less work than the RPC and hid part of
    # the overhead; both sides now run the same lookup, each with its own caches.
    lookup = build_lookup(store, settings.related, settings.models)
    lookup.warm()
    provider = StoreRelated(lookup)
    direct: dict[tuple[str, bool], list[float]] = defaultdict(list)
    remote: dict[tuple[str, bool], list[float]] = defaultdict(list)
    diffs: dict[tuple[str, bool], list[float]] = defaultdict(list)

    def _pair(request: dict[str, Any], seed_offset: int, library_first: bool, warm: bool) -> None:
        def library() -> None:
            if request["rpc"] == "questions":
                options = GenerationOptions.from_settings(
                    settings.questions,
                    settings.related,
                    split="train",
                    seed=request["seed"] + seed_offset,
                )
                generate_for_image(provider, options, request["image_id"])
            elif request["rpc"] == "related":
                lookup.related(request["key"], seed=request["seed"] + seed_offset, limit=20)
            else:
                get_scene_graph(store, request["image_id"])

        if warm:  # the same request once on each side first: both answer from warm caches
            library()
            grpc_call(stub, request, seed_offset)
        for repeat in range(warm_repeats if warm else 1):
            timings = {}
            first = library_first != bool(repeat % 2)
            for what in ("library", "rpc") if first else ("rpc", "library"):
                began = time.perf_counter()
                if what == "library":
                    library()
                else:
                    grpc_call(stub, request, seed_offset)
                timings[what] = time.perf_counter() - began
            kind = (request["rpc"], warm)
            direct[kind].append(timings["library"])
            remote[kind].append(timings["rpc"])
            diffs[kind].append(timings["rpc"] - timings["library"])

    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        for warm in (False, True):
            for kind_of_pool in kinds:
                only = [r for r in pool if r["rpc"] == kind_of_pool]
                end = time.monotonic() + seconds
                for i, request in enumerate(only * 1000):
                    if time.monotonic() >= end:
                        break
                    # fresh seeds per cycle (and per mode): no result-cache hits across pairs
                    seed_offset = (20_000_000 if warm else 10_000_000) + (
                        i // len(only)
                    ) * 1_000_003
                    _pair(request, seed_offset, i % 2 == 0, warm)

    def p50(values: list[float]) -> float:
        return median(values) * 1000

    return {
        kind: {
            "n": len(diffs[(kind, False)]),
            "library_p50_ms": p50(direct[(kind, False)]),
            "rpc_p50_ms": p50(remote[(kind, False)]),
            "overhead_p50_ms": p50(diffs[(kind, False)]),
            "overhead_p50_ci95_ms": median_ci95_ms(diffs[(kind, False)]),
            "n_warm": len(diffs[(kind, True)]),
            "library_warm_p50_ms": p50(direct[(kind, True)]),
            "rpc_warm_p50_ms": p50(remote[(kind, True)]),
            "overhead_warm_p50_ms": p50(diffs[(kind, True)]),
            "overhead_warm_p50_ci95_ms": median_ci95_ms(diffs[(kind, True)]),
        }
        for kind in KINDS
    }


def median_ci95_ms(values: list[float], resamples: int = 2000) -> list[float]:
    """A bootstrap 95 % interval of the median (ms): how far the quoted p50 of paired
    differences can be trusted when single calls vary by far more than the difference."""
    if len(values) < 5:
        return [float("nan"), float("nan")]
    rng = random.Random(0)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples)
    )
    return [medians[int(0.025 * resamples)] * 1000, medians[int(0.975 * resamples)] * 1000]


def soak(target: str, pool: list[dict[str, Any]], args: Any, sampler: Any) -> dict[str, Any]:
    """``--soak`` seconds of mixed related-image and question load (4 clients, fresh seeds on
    every pass), with the server's RSS per quarter: stable means the last quarters stop growing
    (the caches have reached their bounds)."""
    mixed = [r for r in pool if r["rpc"] in ("related", "questions")]
    t0 = time.monotonic()
    phase = load_phase(target, mixed, 4, args.soak, seed_offset=900_000_011)
    end = time.monotonic()
    quarter = (end - t0) / 4
    phase["rss_quarters"] = [
        sampler.window(t0 + q * quarter, t0 + (q + 1) * quarter) for q in range(4)
    ]
    print(json.dumps({"soak": phase}), flush=True)
    return phase


def _ci(bounds: list[float]) -> str:
    return f"{bounds[0]:.2f} .. {bounds[1]:.2f} ms"


def load_phase(
    target: str, pool: list[dict[str, Any]], clients: int, duration: float, seed_offset: int
) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    procs = [
        context.Process(
            target=_worker_entry,
            args=((target, pool, n * 7919, duration, seed_offset), queue),
        )
        for n in range(clients)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=duration + 120) for _ in procs]
    for p in procs:
        p.join()
    codes: Counter[str] = Counter()
    out: dict[str, Any] = {"clients": clients, "duration_s": duration}
    for r in results:
        codes.update(r["codes"])
    out["codes"] = dict(codes)
    for kind in KINDS:
        lat = [x for r in results for x in r["latencies"][kind]]
        out[kind] = {
            "ok": len(lat),
            "per_s": len(lat) / duration,
            "p50_ms": percentile(lat, 0.5) * 1000,
            "p99_ms": percentile(lat, 0.99) * 1000,
        }
    return out


# ---------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=8500)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--overhead-seconds", type=float, default=None)
    parser.add_argument(
        "--soak",
        type=float,
        default=0.0,
        help="seconds of mixed related + question load after the phases (RSS per quarter)",
    )
    parser.add_argument(
        "--warm-repeats",
        type=int,
        default=3,
        help="timed pairs per warmed request (a warm-up costs a cold call on both sides)",
    )
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--pool", type=int, default=400)
    parser.add_argument("--max-concurrent", type=int, default=8)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--overhead-only",
        action="store_true",
        help="measure only the paired library-vs-RPC overhead (no load phases)",
    )
    parser.add_argument(
        "--rpcs",
        nargs="+",
        choices=KINDS,
        default=["related", "questions"],
        help="RPCs to load, one phase per RPC and client count (scene_graph: a cheap baseline)",
    )
    quick = {
        "images": 40,
        "duration": 2.0,
        "overhead_seconds": 2.0,
        "warm_repeats": 1,
        "clients": [2],
        "pool": 20,
    }
    args = parse_args(parser, quick)

    from covr.graph import open_store
    from covr.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="covr-bs-"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(work / "d"),
    }
    covr = [sys.executable, "-m", "covr.cli.main"]
    subprocess.run([*covr, "db", "start"], env=env, check=True, capture_output=True)
    report: dict[str, Any] = {
        "images": args.images,
        "max_concurrent_rpcs": args.max_concurrent,
    }
    server: subprocess.Popen[str] | None = None
    try:
        settings = Settings(_env_file=None, data_dir=work / "d", graph_uri="")  # type: ignore[call-arg]
        pool = load_and_pool(
            settings, work, args.images, args.pool, "questions" in args.rpcs, report
        )
        with open_store(settings.graph) as store:
            server, target = start_serve(covr, env, args.max_concurrent)
            warm_up(target, pool)  # models load in the background at start (WordNet: seconds)
            sampler = RssSampler(server.pid)
            sampler.start()
            t0 = time.monotonic()
            report["overhead"] = overhead(
                store,
                settings,
                target,
                pool,
                args.overhead_seconds or args.duration,
                args.rpcs,
                args.warm_repeats,
            )
            report["overhead"]["rss"] = sampler.window(t0, time.monotonic())
            phases = []
            for kind in [] if args.overhead_only else args.rpcs:
                only = [r for r in pool if r["rpc"] == kind]
                for n, clients in enumerate(args.clients):
                    t0 = time.monotonic()
                    phase = load_phase(
                        target, only, clients, args.duration, seed_offset=(n + 1) * 100_000_007
                    )
                    phase["rpc"] = kind
                    phase["rss"] = sampler.window(t0, time.monotonic())
                    phases.append(phase)
                    print(json.dumps(phase), flush=True)
            report["phases"] = phases
            if args.soak:
                report["soak"] = soak(target, pool, args, sampler)
            sampler.stop.set()
            report["rss_over_run_mb"] = [
                round(mb, 1) for _, mb in sampler.samples[:: max(1, len(sampler.samples) // 20)]
            ]
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        subprocess.run([*covr, "db", "stop"], env=env, check=False, capture_output=True)
    print(json.dumps(report, indent=2))
    o = report["overhead"]
    print("\nservice overhead (paired, 1 client):")
    for kind in args.rpcs:
        print(
            f"  {kind:12s} library p50 {o[kind]['library_p50_ms']:.2f} ms  rpc p50 "
            f"{o[kind]['rpc_p50_ms']:.2f} ms  overhead p50 {o[kind]['overhead_p50_ms']:.2f} ms"
            f"  (95% CI {_ci(o[kind]['overhead_p50_ci95_ms'])}, n={o[kind]['n']})"
        )
        print(
            f"  {'':12s} warm: library p50 {o[kind]['library_warm_p50_ms']:.2f} ms  rpc p50 "
            f"{o[kind]['rpc_warm_p50_ms']:.2f} ms  overhead p50 "
            f"{o[kind]['overhead_warm_p50_ms']:.2f} ms"
            f"  (95% CI {_ci(o[kind]['overhead_warm_p50_ci95_ms'])}, n={o[kind]['n_warm']})"
        )
    print("\nload (client processes; per RPC: requests/s, p50/p99 ms; status codes; server RSS):")
    for p in report["phases"]:
        k = p["rpc"]
        print(
            f"  {k:12s} {p['clients']:2d} clients: {p[k]['per_s']:.2f}/s  p50 {p[k]['p50_ms']:.1f} ms"
            f"  p99 {p[k]['p99_ms']:.1f} ms  {p['codes']}  rss {p['rss']}"
        )
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
