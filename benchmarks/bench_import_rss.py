"""Service RSS around a maximal strict ImportSceneGraphs call (issue 40 item 2).

The audit's reproduction: a strict stream of 200 scene graphs of 5,000 objects (62 MB on the
wire) took the server from 135 to 676 MB and it kept 607 MB afterwards. This script starts the
embedded store (``covr db start``) and ``covr serve`` in a fresh data directory, makes one small
import (so models, channels and the writer are warm), reads the service's ``VmRSS`` (baseline),
sends the large strict stream ``--rounds`` times and reads ``VmRSS`` after each (2 s after the
answer) and ``VmHWM`` (peak). A stream over ``COVR_SERVICE_IMPORT_MAX_BYTES`` is refused and
reported as such (its code), which is the budget working.

Run: ``.venv/bin/python benchmarks/bench_import_rss.py [--graphs 200] [--objects 5000]
[--rounds 2] [--env COVR_X=Y ...] [--json PATH]``. The store and the service it starts are
stopped at the end, on error and on Ctrl-C too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_service import start_serve
from benchmarks.harness import peak_rss_mb, rss_mb


def _requests(prefix: str, graphs: int, objects: int, strict: bool) -> Iterator[Any]:
    from covr.v1 import store_pb2

    yield store_pb2.ImportSceneGraphsRequest(options=store_pb2.ImportOptions(strict=strict))
    for g in range(graphs):
        message = store_pb2.ImportSceneGraphsRequest()
        graph = message.scene_graph
        graph.source, graph.original_id, graph.split = "bench", f"{prefix}{g}", "val"
        graph.width, graph.height = 640, 480
        for i in range(objects):
            obj = graph.objects.add(id=str(i), name=f"thing{i % 97}", attributes=["red"])
            obj.box.x, obj.box.y, obj.box.w, obj.box.h = i % 600, i % 400, 10, 12
        yield message


def _import(target: str, prefix: str, graphs: int, objects: int) -> dict[str, Any]:
    import grpc

    from covr.v1 import service_pb2_grpc

    sent = sum(r.ByteSize() for r in _requests(prefix, graphs, objects, True))
    began = time.perf_counter()
    options = [("grpc.max_send_message_length", 64 << 20)]
    with grpc.insecure_channel(target, options=options) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        try:
            answer = stub.ImportSceneGraphs(_requests(prefix, graphs, objects, True), timeout=1800)
            outcome: dict[str, Any] = {"code": "OK", "written": answer.written}
        except grpc.RpcError as exc:
            outcome = {"code": exc.code().name, "details": (exc.details() or "")[:200]}
    outcome["wire_mb"] = round(sent / 1e6, 1)
    outcome["seconds"] = round(time.perf_counter() - began, 1)
    return outcome


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="covr-import-rss-"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(work / "d"),
        "COVR_GRAPH_URI": "",
        **dict(args.env),
    }
    covr = [sys.executable, "-m", "covr.cli.main"]
    report: dict[str, Any] = {"graphs": args.graphs, "objects": args.objects, "env": args.env}
    server: subprocess.Popen[str] | None = None
    try:
        subprocess.run([*covr, "db", "start"], env=env, check=True, capture_output=True)
        server, target = start_serve(covr, env, 8, work / "serve.log")
        report["warm_up"] = _import(target, "warm", 2, 10)
        time.sleep(2)
        report["baseline_rss_mb"] = round(rss_mb(server.pid))
        rounds = []
        for n in range(args.rounds):
            outcome = _import(target, f"r{n}-", args.graphs, args.objects)
            time.sleep(2)
            outcome["rss_after_mb"] = round(rss_mb(server.pid))
            outcome["peak_rss_mb"] = round(peak_rss_mb(server.pid))
            rounds.append(outcome)
            print(json.dumps(outcome), flush=True)
        report["rounds"] = rounds
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
        subprocess.run([*covr, "db", "stop"], env=env, check=False, capture_output=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        type=lambda s: tuple(s.split("=", 1)),
        help="KEY=VALUE for the service (repeatable)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = run(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
