"""Loads into the managed Neo4j with several writer settings side by side, CPU per element split.

Why: the load goal on Neo4j (50,000 elements/s through Bolt) was far off (6,900-15,300 at 1x),
and wall-clock numbers on the shared 2-core machine move with other work. This benchmark runs
the candidate settings of the write path (images per statement, statements in flight) in the
same run against one server, alternating their order over rounds, and reports besides
elements/s the CPU seconds per element of the three parties: the Neo4j server (``/proc/<pid>/stat``
of the JVM), this process (renders and sends batches) and the forked reader (parses and converts;
``RUSAGE_CHILDREN``). Their sum bounds what the machine can load: ``cores / CPU per element``.

How: a synthetic GQA-format file of ``--scale`` x 85,000 images (seed ``--seed``) is written once;
the managed Neo4j (``COVR_GRAPH_BACKEND=neo4j``, this tree's launcher) starts once in a fresh data
directory. A warm-up load (``--warm-images``) lets the JIT compile the write path first. Then
``--repeats`` rounds; in each, every variant runs once (the order rotates): the store is emptied
(``GraphStore.clear``, not timed), the schema applied, and the file loaded with
``covr_loaders.writer.run_load`` exactly as ``covr load gqa`` does, with the variant's batch
size and writers (``-py``: with the driver's pure-Python packer instead of the compiled one).
Medians per variant, and ratios against the first variant, are printed and written as
JSON (``--json``).

Run: ``.venv/bin/python benchmarks/bench_neo4j_load.py [--scale 0.1] [--repeats 3]
[--variants 500x2 500x2-py 500x1] [--warm-images 4000] [--neo4j-heap 1g] [--neo4j-pagecache 1g]
[--backend neo4j|falkordb] [--work DIR] [--json PATH]``;
a variant is ``<images per statement>x<writers>[-py]``. ``--quick`` (``make bench``) loads tiny
files into the embedded FalkorDB (a Neo4j start alone takes longer); ``--quick --backend neo4j``
into the managed Neo4j.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_backends import (
    GQA_IMAGES,
    SPLIT,
    server_pid,
    settings_for,
    synthetic_file,
)
from benchmarks.harness import CpuClock, medians, parse_args, quick_path, write_json
from covr.graph import GraphStore, catalog, open_store
from covr.settings import Settings
from covr_loaders.jobs import gqa_job
from covr_loaders.writer import run_load

PING = catalog.get("admin/ping")


def parse_variant(text: str) -> tuple[int, int, bool]:
    """``"500x2"`` -> (500 images per statement, 2 writers, compiled packer);
    ``"500x2-py"`` the same with the driver's pure-Python packer."""
    spec, _, packer = text.partition("-")
    batch, _, writers = spec.partition("x")
    try:
        if packer not in ("", "py"):
            raise ValueError(packer)
        return int(batch), int(writers or 1), packer == "py"
    except ValueError:
        raise SystemExit(
            f"a variant is <images>x<writers>[-py], like 500x2 or 500x2-py; got {text!r}"
        ) from None


@contextmanager
def packer(pure_python: bool) -> Iterator[None]:
    """The driver's PackStream packer for one load: compiled (``neo4j-rust-ext``, the project's
    dependency) or, for ``-py`` variants, its pure-Python fallback, so both run against one
    server in one run. Reaches into the driver's private codec: a benchmark-only switch."""
    from neo4j._codec.packstream import v1

    compiled = v1.Packer._pack
    if pure_python:
        v1.Packer._pack = v1.Packer._py_pack  # type: ignore[method-assign]
    try:
        yield
    finally:
        v1.Packer._pack = compiled  # type: ignore[method-assign]


def one_load(
    store: GraphStore, settings: Settings, path: Path, batch: int, writers: int, pure: bool
) -> dict[str, Any]:
    """Empty the store, apply the schema, load ``path``; seconds, elements and CPU split."""
    store.clear()
    store.apply_schema()
    cpu = CpuClock(server_pid=server_pid(store))  # the reader: a waited-for child process
    load_average = os.getloadavg()[0]
    with packer(pure):
        summary = run_load(
            store,
            gqa_job([path], SPLIT, settings.load),
            data_dir=settings.data_dir,
            batch_images=batch,
            writers=writers,
        )
    elements = summary.nodes_created + summary.relationships_created
    server, client, reader = cpu.server_s(), cpu.client_s(), cpu.children_s()
    per_el = 1e6 / max(elements, 1)
    return {
        "elements": elements,
        "seconds": round(summary.seconds, 2),
        "elements_per_s": round(summary.elements_per_s),
        "server_cpu_s": round(server, 2),
        "client_cpu_s": round(client, 2),
        "reader_cpu_s": round(reader, 2),
        "server_us_per_element": round(server * per_el, 1),
        "client_us_per_element": round(client * per_el, 1),
        "reader_us_per_element": round(reader * per_el, 1),
        "total_us_per_element": round((server + client + reader) * per_el, 1),
        "load_average": round((load_average + os.getloadavg()[0]) / 2, 2),
    }


def ceiling(row: dict[str, Any], cores: int) -> dict[str, float]:
    """Elements/s the machine could reach if every core did nothing but this load."""
    return {
        "all_parties": round(cores * 1e6 / row["total_us_per_element"]),
        "server_alone": round(cores * 1e6 / row["server_us_per_element"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=0.1, help="Fraction of GQA's images.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", nargs="+", default=["500x2", "500x2-py", "500x1"])
    parser.add_argument("--warm-images", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--neo4j-heap", default="1g")
    parser.add_argument("--neo4j-pagecache", default="1g")
    parser.add_argument("--startup-timeout", type=float, default=300.0)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/neo4j_load.json"))
    parser.add_argument(
        "--backend",
        choices=("neo4j", "falkordb"),
        default="neo4j",
        help="The store loaded into (falkordb: the embedded one, for a quick run; no -py variants).",
    )
    quick = {
        "backend": "falkordb",  # a Neo4j start alone takes longer than the whole quick run
        "scale": 0.001,
        "repeats": 1,
        "variants": ["500x1"],
        "warm_images": 20,
        "work": quick_path("neo4j_load"),
        "json": quick_path("neo4j_load.json"),
    }
    args = parse_args(parser, quick)
    variants = {name: parse_variant(name) for name in args.variants}
    work = args.work or Path(tempfile.mkdtemp(prefix="covr-neo4j-load-"))
    images = round(args.scale * GQA_IMAGES)
    path = synthetic_file(work, images, args.seed)
    warm_path = synthetic_file(work, args.warm_images, args.seed + 1)
    data_dir = work / "data"
    shutil.rmtree(data_dir, ignore_errors=True)
    settings = settings_for(args.backend, data_dir, args)
    store = open_store(settings.graph)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    try:
        store.read(PING)
        first = next(iter(variants.values()))
        warm = one_load(store, settings, warm_path, *first)
        print(f"warm-up: {json.dumps(warm)}", flush=True)
        names = list(variants)
        for round_ in range(args.repeats):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                result = one_load(store, settings, path, *variants[name])
                runs[name].append(result)
                print(f"round {round_ + 1} {name}: {json.dumps(result)}", flush=True)
    finally:
        store.close()
    cores = os.cpu_count() or 1
    base = medians(runs[args.variants[0]], digits=2)
    out: dict[str, Any] = {
        "backend": args.backend,
        "scale": args.scale,
        "images": images,
        "repeats": args.repeats,
        "cores": cores,
        "neo4j_heap": args.neo4j_heap,
        "neo4j_pagecache": args.neo4j_pagecache,
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "variants": {},
    }
    first = args.variants[0]
    print(
        f"\n| variant | el/s | vs {first} | same round vs {first} | server / client / reader us/el |"
    )
    print("|---|---:|---:|---:|---|")
    for name, rows in runs.items():
        row = medians(rows, digits=2)
        ratio = round(row["elements_per_s"] / base["elements_per_s"], 3)
        # the same round's loads ran minutes apart, so they saw the same load average
        paired = round(
            statistics.median(
                mine["elements_per_s"] / theirs["elements_per_s"]
                for mine, theirs in zip(rows, runs[args.variants[0]], strict=True)
            ),
            3,
        )
        out["variants"][name] = {
            "median": row,
            "ratio_elements_per_s": ratio,
            "paired_ratio_elements_per_s": paired,
            "ceiling_elements_per_s": ceiling(row, cores),
            "runs": rows,
        }
        print(
            f"| {name} | {row['elements_per_s']:,.0f} | {ratio:.2f} | {paired:.2f} | "
            f"{row['server_us_per_element']} / {row['client_us_per_element']} / "
            f"{row['reader_us_per_element']} |"
        )
    write_json(args.json, out)
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
