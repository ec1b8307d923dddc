"""Soak of the gRPC service on either store (issue 21 item 7): mixed RPCs, 16 clients, minutes.

Why a separate script: ``bench_service.py --soak`` runs 4 clients of two read RPCs on the embedded
FalkorDB only; the acceptance asks for 16 clients of every kind of call, writes included, on both
stores, with the store's memory beside the service's and a check that no acknowledged write is
lost. The pool, the call helpers, the RSS sampler and the warm-up are reused from
``bench_service``.

Setup (not timed): synthetic GQA scene graphs (``--images``, default 850) are loaded by the real
loader into a store started detached by ``covr db start`` in a fresh ``COVR_DATA_DIR``
(``--backend neo4j``: ``COVR_GRAPH_BACKEND=neo4j``, the managed Neo4j on a free Bolt port), then
``covr serve`` starts on it.

Soak: ``--clients`` client *processes* (own channel each, 30 s deadline) send, for ``--seconds``,
a weighted mix of ``FindRelatedImages``, ``GenerateQuestions``, ``GetSceneGraph``,
``ImportSceneGraphs`` (one fresh small scene graph per call: a stored one cut to its first
``--import-objects`` objects under a new id, strict) and ``GetStatistics``. A refused call waits
the server's ``RetryInfo`` hint, as the SDK's retry policy would. Reported per quarter of the
soak: calls by RPC and status code, p50/p99 per RPC (OK calls), RSS of the service process and of
the store process (the pid in the data directory's ``server.json``: ``redis-server`` or the Neo4j
``java``) at the quarter's start and end and its max, and the 1-minute load average at the
quarter's end. After the soak, every scene graph whose import was acknowledged (``written`` = 1)
is read back with ``GetSceneGraph`` and compared with what was sent (lists in canonical order):
"lost" counts the ones missing or different.

Run: ``.venv/bin/python benchmarks/bench_soak.py --backend falkordb|neo4j [--seconds 600]
[--clients 16] [--images 850] [--max-concurrent 8] [--spawn-wait 15] [--json PATH]``. Every
process the script starts (clients, service, store) is stopped at the end, on error and on
Ctrl-C too.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from queue import Empty
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_service import (
    CALL_TIMEOUT_S,
    REFUSED_BACKOFF_S,
    RssSampler,
    grpc_call,
    load_and_pool,
    start_serve,
    warm_up,
)
from benchmarks.harness import parse_args, percentile, write_json

RPCS = ("related", "questions", "scene_graph", "import", "statistics")
# Weights of the mix: reads dominate, as in use; questions are the costliest call (seconds), so
# fewer of them keep the other RPCs from waiting only on the generation limit.
EXPECTED_UNDER_LOAD = {"RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"}
"""Status codes an overloaded service may answer; any other failure is reported with its details."""
WEIGHTS = {"related": 3, "questions": 1, "scene_graph": 3, "import": 2, "statistics": 1}
STOP_WAIT_S = 60.0


def canonical(message: Any) -> str:
    """A scene graph as sorted JSON: the store gives no list order back, so equality of what was
    sent and what is read must not depend on it."""
    from google.protobuf.json_format import MessageToDict

    def norm(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: norm(v) for k, v in sorted(value.items())}
        if isinstance(value, list):
            items = [norm(v) for v in value]
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return value

    return json.dumps(norm(MessageToDict(message)), sort_keys=True)


def small_copy(template: Any, image_key: str, max_objects: int) -> Any:
    """A fresh small scene graph: ``template`` cut to its first objects (relations and rel-mods
    only between kept objects) under a new original id, so every import writes a new image."""
    from covr_client._proto import scene_pb2

    graph = scene_pb2.SceneGraph()
    graph.CopyFrom(template)
    kept = [o.id for o in graph.objects[:max_objects]]
    del graph.objects[max_objects:]
    keep = set(kept)
    relations = [
        r
        for r in graph.relations
        if r.subject in keep and r.object in keep and all(m.object in keep for m in r.mods)
    ]
    copies = [scene_pb2.Relation() for _ in relations]
    for copy, relation in zip(copies, relations, strict=True):
        copy.CopyFrom(relation)
    del graph.relations[:]
    graph.relations.extend(copies)
    graph.original_id = image_key
    graph.image_id = f"{graph.source}:{image_key}"
    return graph


def soak_client(
    target: str,
    pool: list[dict[str, Any]],
    client: int,
    end_at: float,
    seed_offset: int,
    import_objects: int,
) -> dict[str, Any]:
    """One client process: weighted random RPCs back to back until ``end_at`` (monotonic: one
    clock for all processes on Linux, so the parent can cut the calls into quarters).

    Returns ``events`` (start time, RPC, status code, seconds) and ``acked``: the image id and
    canonical form of every scene graph whose import the server acknowledged."""
    import grpc

    from covr_client._proto import service_pb2_grpc, store_pb2
    from covr_client.errors import from_rpc_error

    rng = random.Random(seed_offset + client)
    kinds = list(WEIGHTS)
    weights = [WEIGHTS[k] for k in kinds]
    by_kind = {k: [r for r in pool if r["rpc"] == k] for k in ("related", "questions")}
    reads = [r for r in pool if r["rpc"] == "scene_graph"]
    events: list[tuple[float, str, str, float]] = []
    acked: list[tuple[str, str]] = []
    unexpected: list[tuple[str, str, str]] = []
    templates: list[Any] = []
    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        for request in reads[client : client + 3]:  # templates for imports (not timed)
            for attempt in range(600):  # 16 clients start at once: the server refuses some
                try:
                    templates.append(
                        stub.GetSceneGraph(
                            store_pb2.GetSceneGraphRequest(image_id=request["image_id"]),
                            timeout=120,
                        ).scene_graph
                    )
                    break
                except grpc.RpcError as exc:
                    if exc.code() is not grpc.StatusCode.RESOURCE_EXHAUSTED or attempt == 599:
                        raise
                    time.sleep(0.1 + rng.random() * 0.2)
        n = 0
        while time.monotonic() < end_at:
            kind = rng.choices(kinds, weights)[0]
            n += 1
            began_at = time.monotonic()
            began = time.perf_counter()
            try:
                if kind in by_kind:
                    request = rng.choice(by_kind[kind])
                    # fresh seeds per call and client: no result-cache hits
                    grpc_call(stub, request, seed_offset + client * 1_000_003 + n * 7_919)
                elif kind == "scene_graph":
                    grpc_call(stub, rng.choice(reads), 0)
                elif kind == "statistics":
                    stub.GetStatistics(store_pb2.GetStatisticsRequest(), timeout=CALL_TIMEOUT_S)
                else:
                    graph = small_copy(
                        rng.choice(templates), f"soak-{seed_offset}-{client}-{n}", import_objects
                    )
                    messages = [
                        store_pb2.ImportSceneGraphsRequest(
                            options=store_pb2.ImportOptions(strict=True)
                        ),
                        store_pb2.ImportSceneGraphsRequest(scene_graph=graph),
                    ]
                    answer = stub.ImportSceneGraphs(iter(messages), timeout=CALL_TIMEOUT_S)
                    if answer.written != 1:
                        raise RuntimeError(f"import not written: {answer}")
                    acked.append((graph.image_id, canonical(graph)))
                events.append((began_at, kind, "OK", time.perf_counter() - began))
            except grpc.RpcError as exc:
                events.append((began_at, kind, exc.code().name, time.perf_counter() - began))
                if exc.code().name not in EXPECTED_UNDER_LOAD:
                    unexpected.append((kind, exc.code().name, str(exc.details())))
                if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    hint = from_rpc_error(exc).retry_after or 0.0
                    time.sleep(max(REFUSED_BACKOFF_S, hint * (0.5 + rng.random() / 2)))
    return {"events": events, "acked": acked, "unexpected": unexpected}


def _client_entry(args: tuple[str, list[dict[str, Any]], int, float, int, int], queue: Any) -> None:
    queue.put(soak_client(*args))


def service_env(item: str) -> tuple[str, str]:
    """``KEY=VALUE`` of ``--env`` as a pair (argparse's error names the option)."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--env {item!r}: expected KEY=VALUE")
    return key, value


def rss_kb_series(sampler: RssSampler, start: float, end: float) -> dict[str, float]:
    """Start, end and max RSS (MB, rounded) of one sampler over a window."""
    window = sampler.window(start, end)
    return {k: round(v) for k, v in window.items()}


def quarters(
    events: list[tuple[float, str, str, float]],
    t0: float,
    seconds: float,
    service: RssSampler,
    store: RssSampler,
    loads: list[float],
) -> list[dict[str, Any]]:
    """Per quarter of the soak: status codes and p50/p99 per RPC, both RSS windows, load."""
    out = []
    quarter = seconds / 4
    for q in range(4):
        start, end = t0 + q * quarter, t0 + (q + 1) * quarter
        inside = [e for e in events if start <= e[0] < end or (q == 3 and e[0] >= end)]
        row: dict[str, Any] = {
            "quarter": q + 1,
            "load_average_1m": loads[q] if q < len(loads) else None,
            "service_rss_mb": rss_kb_series(service, start, end),
            "store_rss_mb": rss_kb_series(store, start, end),
            "codes": dict(Counter(e[2] for e in inside)),
        }
        for kind in RPCS:
            ok = [e[3] for e in inside if e[1] == kind and e[2] == "OK"]
            codes = Counter(e[2] for e in inside if e[1] == kind)
            row[kind] = {
                "codes": dict(codes),
                "p50_ms": round(percentile(ok, 0.5) * 1000, 1),
                "p99_ms": round(percentile(ok, 0.99) * 1000, 1),
            }
        out.append(row)
    return out


def read_back(target: str, acked: list[tuple[str, str]]) -> dict[str, Any]:
    """Every acknowledged import read back and compared: missing, different and error counts."""
    import grpc

    from covr_client._proto import service_pb2_grpc, store_pb2

    missing: list[str] = []
    different: list[str] = []
    errors: Counter[str] = Counter()
    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        for image_id, sent in acked:
            for attempt in range(20):
                try:
                    got = stub.GetSceneGraph(
                        store_pb2.GetSceneGraphRequest(image_id=image_id), timeout=60
                    ).scene_graph
                except grpc.RpcError as exc:
                    if exc.code() is grpc.StatusCode.NOT_FOUND:
                        missing.append(image_id)
                    elif exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and attempt < 19:
                        time.sleep(0.2)
                        continue
                    else:
                        errors[exc.code().name] += 1
                    break
                if canonical(got) != sent:
                    different.append(image_id)
                break
    return {
        "acknowledged": len(acked),
        "missing": len(missing),
        "different": len(different),
        "read_errors": dict(errors),
        "lost": len(missing) + len(different),
        "examples": (missing + different)[:5],
    }


def warm(target: str, pool: list[dict[str, Any]], attempts: int = 10) -> None:
    """``bench_service.warm_up``, retried: on a loaded machine the server's first related call
    (its lookup reading the image table, the models loading) can outlast one 30 s deadline; the
    server goes on warming, so a later attempt answers."""
    import grpc

    for attempt in range(attempts):
        try:
            warm_up(target, pool)
            return
        except grpc.RpcError as exc:
            if exc.code() is not grpc.StatusCode.DEADLINE_EXCEEDED or attempt == attempts - 1:
                raise


def store_pid(data_dir: Path) -> int:
    """The store server's pid from ``server.json`` (FalkorDB: in the data directory; the managed
    Neo4j: in its ``neo4j`` subdirectory)."""
    for path in (data_dir / "server.json", data_dir / "neo4j" / "server.json"):
        if path.exists():
            return int(json.loads(path.read_text())["pid"])
    raise RuntimeError(f"no server.json under {data_dir}")


def stop_process(proc: subprocess.Popen[Any] | multiprocessing.process.BaseProcess) -> None:
    """SIGTERM one process this script started, then SIGKILL if it has not gone within a minute."""
    if isinstance(proc, subprocess.Popen):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    elif proc.is_alive():
        proc.terminate()
        proc.join(STOP_WAIT_S)
        if proc.is_alive():
            proc.kill()
            proc.join()


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Set up, soak, read back; stops the clients, the service and the store whatever happens."""
    from covr.graph.managed import pid_runs
    from covr.settings import Settings

    work = Path(tempfile.mkdtemp(prefix=f"covr-soak-{args.backend[:3]}-"))
    data_dir = work / "d"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(data_dir),
        "COVR_GRAPH_BACKEND": args.backend,
        "COVR_NEO4J_BOLT_PORT": "0",  # never the default port another session's Neo4j holds
        **dict(args.env),
    }
    covr = [sys.executable, "-m", "covr.cli.main"]
    report: dict[str, Any] = {
        "backend": args.backend,
        "images": args.images,
        "clients": args.clients,
        "seconds": args.seconds,
        "max_concurrent_rpcs": args.max_concurrent,
        "env": dict(args.env),
        "weights": WEIGHTS,
        "load_average_at_start": os.getloadavg()[0],
    }
    server: subprocess.Popen[str] | None = None
    clients: list[multiprocessing.process.BaseProcess] = []
    db_pid: int | None = None
    try:
        began = time.perf_counter()
        subprocess.run([*covr, "db", "start"], env=env, check=True, capture_output=True)
        db_pid = store_pid(data_dir)
        report["store_start_s"] = round(time.perf_counter() - began, 1)
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None,
            data_dir=data_dir,
            graph_uri="",
            graph_backend=args.backend,
            neo4j_bolt_port=0,
        )
        pool = load_and_pool(settings, work, args.images, args.pool, True, report)
        server, target = start_serve(covr, env, args.max_concurrent, work / "serve.log")
        warm(target, pool)
        service_rss, store_rss = RssSampler(server.pid), RssSampler(db_pid)
        service_rss.start()
        store_rss.start()
        context = multiprocessing.get_context("spawn")
        queue = context.Queue()
        # the clients spawn and import first; the soak clock starts for all at the same moment
        t0 = time.monotonic() + args.spawn_wait
        end_at = t0 + args.seconds
        seed_offset = random.Random().randrange(1 << 20) * 1_000
        clients = [
            context.Process(
                target=_client_entry,
                args=((target, pool, n, end_at, seed_offset, args.import_objects), queue),
            )
            for n in range(args.clients)
        ]
        for p in clients:
            p.start()
        loads: list[float] = []
        for q in range(1, 5):
            time.sleep(max(0.0, t0 + q * args.seconds / 4 - time.monotonic()))
            loads.append(round(os.getloadavg()[0], 2))
            since = t0 + (q - 1) * args.seconds / 4
            print(
                f"quarter {q}: load {loads[-1]}  service RSS "
                f"{rss_kb_series(service_rss, since, time.monotonic())}  store RSS "
                f"{rss_kb_series(store_rss, since, time.monotonic())}",
                flush=True,
            )
        results: list[dict[str, Any]] = []
        while len(results) < len(clients):  # a client that died never reports: fail, not hang
            try:
                results.append(queue.get(timeout=5))
            except Empty:
                if sum(p.is_alive() for p in clients) + len(results) < len(clients):
                    if queue.empty():
                        raise RuntimeError("a client process died (see its traceback)") from None
                elif time.monotonic() > end_at + CALL_TIMEOUT_S + 120:
                    raise RuntimeError("clients did not report") from None
        for p in clients:
            p.join(STOP_WAIT_S)
        service_rss.stop.set()
        store_rss.stop.set()
        events = [e for r in results for e in r["events"]]
        acked = [a for r in results for a in r["acked"]]
        # calls that ended with a code no load explains (INTERNAL, UNKNOWN...), with the details;
        # the service's tracebacks are in serve.log beside the data directory
        report["unexpected"] = [u for r in results for u in r["unexpected"]][:50]
        report["serve_log"] = str(work / "serve.log")
        report["quarters"] = quarters(events, t0, args.seconds, service_rss, store_rss, loads)
        report["codes_by_rpc"] = {
            kind: dict(Counter(e[2] for e in events if e[1] == kind)) for kind in RPCS
        }
        ok = {kind: [e[3] for e in events if e[1] == kind and e[2] == "OK"] for kind in RPCS}
        report["total"] = {
            kind: {
                "calls_per_s": round(len(ok[kind]) / args.seconds, 2),
                "p50_ms": round(percentile(ok[kind], 0.5) * 1000, 1),
                "p99_ms": round(percentile(ok[kind], 0.99) * 1000, 1),
            }
            for kind in RPCS
        }
        report["service_alive_after"] = server.poll() is None
        report["nothing_lost"] = read_back(target, acked)
        report["load_average_at_end"] = os.getloadavg()[0]
    finally:
        for p in clients:
            stop_process(p)
        if server is not None:
            stop_process(server)
        subprocess.run([*covr, "db", "stop"], env=env, check=False, capture_output=True)
        marker = b"redis-server" if args.backend == "falkordb" else b"java"
        if db_pid is not None and pid_runs(db_pid, marker):
            os.kill(db_pid, signal.SIGKILL)  # only the store this script started, by its pid
    return report


def table(report: dict[str, Any]) -> str:
    """The per-quarter Markdown table of the docs."""
    lines = [
        "| quarter | load | service RSS MB start → end (max) | store RSS MB start → end (max) "
        "| calls by status | p50 / p99 ms: related, questions, scene graph, import, statistics |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["quarters"]:
        sv, st = row["service_rss_mb"], row["store_rss_mb"]
        lat = ", ".join(f"{row[k]['p50_ms']:.0f} / {row[k]['p99_ms']:.0f}" for k in RPCS)
        codes = " ".join(f"{k} {v}" for k, v in sorted(row["codes"].items()))
        lines.append(
            f"| {row['quarter']} | {row['load_average_1m']} "
            f"| {sv.get('start_mb')} → {sv.get('end_mb')} ({sv.get('max_mb')}) "
            f"| {st.get('start_mb')} → {st.get('end_mb')} ({st.get('max_mb')}) | {codes} | {lat} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", choices=("falkordb", "neo4j"), default="falkordb")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--images", type=int, default=850)
    parser.add_argument("--pool", type=int, default=200)
    parser.add_argument("--max-concurrent", type=int, default=8)
    parser.add_argument("--import-objects", type=int, default=4)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        type=service_env,
        metavar="KEY=VALUE",
        help="An environment variable for the store and the service (repeatable), e.g. "
        "COVR_RELATED_CACHE_DECISIONS=1000 to tell cache fill from a leak, MALLOC_ARENA_MAX=2.",
    )
    parser.add_argument(
        "--spawn-wait",
        type=float,
        default=15.0,
        help="Seconds the client processes get to start and import before the soak clock starts.",
    )
    quick = {"seconds": 8.0, "clients": 2, "images": 30, "pool": 20, "spawn_wait": 5.0}
    args = parse_args(parser, quick)
    # SIGTERM (a timeout, a supervisor) unwinds like Ctrl-C, so ``run``'s cleanup stops every
    # process it started instead of leaving the service and the store running
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    report = run(args)
    print(json.dumps(report, indent=2))
    print(table(report))
    if args.json:
        write_json(args.json, report)
    return 0 if report["nothing_lost"]["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
