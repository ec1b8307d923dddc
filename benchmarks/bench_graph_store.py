"""Graph-room benchmarks on the embedded store (issue: foundation).

1. Round trip of a trivial read (``admin/ping``) through the graph room: median over many calls,
   repeated in several rounds; the raw client call (``GRAPH.RO_QUERY`` through redis-py, no graph
   room) is measured in the same run as the baseline, so the room's own overhead is visible.
2. ``UNWIND`` batch insert of N small nodes in 10,000-row batches, beside the same load done one
   statement per node (the baseline); the ratio is the figure.

Run: ``.venv/bin/python benchmarks/bench_graph_store.py [--nodes 100000] [--repeats 5]``.
Uses its own temporary data directory; prints a table and writes JSON with ``--json PATH``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import median, parse_args, write_json
from covr.graph import catalog, open_store
from covr.graph.falkor import FalkorStore
from covr.settings import Settings


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"node-{i % 997}", "score": i / 7} for i in range(n)]


def bench_ping(store: FalkorStore, calls: int, rounds: int) -> dict[str, float]:
    ping = catalog.get("admin/ping")
    raw = store._db.connection  # baseline only: the bare client without the graph room
    graph = store.graph_name
    room: list[float] = []
    bare: list[float] = []
    for _ in range(rounds):
        for _ in range(calls):
            t = time.perf_counter()
            store.read(ping)
            room.append(time.perf_counter() - t)
        for _ in range(calls):
            t = time.perf_counter()
            raw.execute_command("GRAPH.RO_QUERY", graph, ping.text, "--compact")
            bare.append(time.perf_counter() - t)
    return {
        "room_median_ms": median(room) * 1000,
        "room_p95_ms": statistics.quantiles(room, n=20)[18] * 1000,
        "bare_median_ms": median(bare) * 1000,
        "overhead_ratio": median(room) / median(bare),
        "calls": float(len(room)),
    }


def _clear(store: FalkorStore) -> None:
    statement = catalog.get("bench/delete_all")
    while store.write(statement, {"limit": 50_000}).nodes_deleted:
        pass


def bench_load(store: FalkorStore, nodes: int, repeats: int, single: int) -> dict[str, float]:
    rows = _rows(nodes)
    batched: list[float] = []
    one_by_one: list[float] = []
    unwind = catalog.get("bench/unwind_create")
    create = catalog.get("bench/create_one")
    for _ in range(repeats):
        _clear(store)
        t = time.perf_counter()
        summary = store.write_rows(unwind, rows, batch_size=10_000)
        batched.append(nodes / (time.perf_counter() - t))
        assert summary.nodes_created == nodes, summary
        _clear(store)
        t = time.perf_counter()
        for row in rows[:single]:
            store.write(create, row)
        one_by_one.append(single / (time.perf_counter() - t))
    _clear(store)
    return {
        "unwind_nodes_per_s_median": median(batched),
        "unwind_nodes_per_s_min": min(batched),
        "single_nodes_per_s_median": median(one_by_one),
        "ratio_unwind_over_single": median(batched) / median(one_by_one),
        "nodes": float(nodes),
        "single_statements_timed": float(single),
        "repeats": float(repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument(
        "--single",
        type=int,
        default=20_000,
        help="nodes timed for the one-statement-per-node baseline (rate measured)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ping-calls", type=int, default=2_000)
    parser.add_argument("--json", type=Path, default=None)
    quick = {"nodes": 2_000, "single": 200, "repeats": 1, "ping_calls": 100}
    args = parse_args(parser, quick)
    with tempfile.TemporaryDirectory(prefix="covr-bench-") as tmp:
        settings = Settings(_env_file=None, data_dir=Path(tmp), graph_uri="")  # type: ignore[call-arg]
        with open_store(settings.graph) as store:
            assert isinstance(store, FalkorStore)
            store.apply_schema()
            ping = bench_ping(store, args.ping_calls, args.repeats)
            load = bench_load(store, args.nodes, args.repeats, args.single)
    result = {"ping": ping, "load": load}
    print(
        f"trivial read via graph room: median {ping['room_median_ms']:.3f} ms "
        f"(p95 {ping['room_p95_ms']:.3f} ms) over {int(ping['calls'])} calls; bare client "
        f"{ping['bare_median_ms']:.3f} ms; room/bare {ping['overhead_ratio']:.2f}x  [target <= 1 ms]"
    )
    print(
        f"UNWIND insert, 10k-row batches: median {load['unwind_nodes_per_s_median']:,.0f} nodes/s "
        f"(min {load['unwind_nodes_per_s_min']:,.0f}) over {int(load['repeats'])} loads of "
        f"{int(load['nodes']):,} nodes  [target >= 100,000]"
    )
    print(
        f"one statement per node: median {load['single_nodes_per_s_median']:,.0f} nodes/s; "
        f"ratio UNWIND/single = {load['ratio_unwind_over_single']:.1f}x"
    )
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
