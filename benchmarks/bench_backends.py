"""FalkorDB (embedded) against the managed Neo4j Community, side by side in one run.

For each scale (synthetic GQA-format data: ``--scales 0.1 1`` = 8,500 and 85,000 images) the file
is written once (seed ``--seed``, split ``val``), the related-image queries are drawn from it
(``bench_related.pick_queries``: equal shares of single, hop, chain and V subgraphs) and the
question source images are its first ``--sources`` ids. Then ``--repeats`` rounds; each round runs
both backends one after the other (the order alternates between rounds; only one server runs at a
time), each in a fresh data directory:

1. **start**: ``open_store`` + the first ``admin/ping`` (empty store);
2. **load**: the project's loader path (``covr_loaders.writer.run_load``, as ``covr load gqa``):
   elements/s = nodes + relationships created per second of the whole load (name statistics and
   the snapshot included; ``write_elements_per_s`` leaves them out);
3. **related**: ``RelatedLookup.related(g, max_distance=2, per_signature=5, positives_limit=5)``
   as in ``bench_related``: ``warm()`` (timed apart), a cold pass (seed 1), then ``--passes`` warm
   passes with other seeds (result-cache misses, candidate lists cached); p50/p95 of the warm
   passes, the p50 of each pass (the JSON's ``related_p50_by_pass_ms``: Neo4j's JVM is still
   compiling after the first passes), store reads (round trips) and milliseconds inside
   ``store.read`` per lookup, in all and by statement kind (``related_statements_per_warm_lookup``);
4. **questions** (scales in ``--question-scales``): ``covr.questions.generate.generate`` over
   ``StoreRelated`` (what ``covr generate --lookup store`` runs), one worker, a fresh lookup (as a
   new process has), for the ``--sources`` first images: questions/s; then again with another
   fresh lookup on the same server (``questions_again_per_s``: the JVM compiled by then);
5. **restart**: the store is closed (server stopped) and opened again: seconds to the first
   answered ``admin/ping`` and to a warmed lookup (image table and vocabularies read);
6. **memory**: RSS of the server process (the redis-server pid, the java pid: ``server.json``)
   empty, after the load, after the workload, after the restart, and its peak (``VmHWM``).

Besides the scales, a ``--sample-images`` (100) synthetic file is loaded per backend and round and
questions are generated for all of its images (the size of DESIGN §7's bar). Server CPU seconds
(``/proc/<pid>/stat``) and this process's CPU seconds are recorded per phase, so a slow row can be
read as server work or client/round-trip work. Both backends must agree: the related answers and
the generated examples are hashed per backend and compared.

Medians over the rounds are reported, with the ratio neo4j/falkordb, as JSON (``--json``, default
``benchmarks/results/backends.json``) and as a markdown table on stdout. The machine has 2 cores
shared with other work: the load average is recorded at every phase.

Run: ``.venv/bin/python benchmarks/bench_backends.py [--scales 0.1 1] [--repeats 2]
[--queries 200] [--passes 2] [--sources 100] [--question-scales 0.1] [--sample-images 100]
[--neo4j-heap 2g] [--neo4j-pagecache 2g] [--backends falkordb neo4j] [--work DIR]
[--json PATH]`` (one backend: no ratios, no agreement check). ``--quick`` (``make bench``)
runs tiny sizes on FalkorDB alone; ``--quick --backends falkordb neo4j`` on both (46 s,
measured 2026-12-07).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_load import store_memory
from benchmarks.bench_questions import two_answer_share
from benchmarks.bench_related import pick_queries, related_answer
from benchmarks.harness import (
    digest,
    format_ratio,
    load_average,
    load_averages,
    medians,
    parse_args,
    peak_rss_mb,
    percentile,
    proc_cpu_s,
    quick_path,
    ratios,
    rss_mb,
    write_json,
)
from covr.graph import GraphStore, catalog, open_store
from covr.graph.managed import ManagedServer
from covr.graph.store import as_statement
from covr.questions.generate import GenerationOptions, generate
from covr.related.lookup import RelatedLookup
from covr.related.store_provider import StoreRelated
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph
from covr.settings import Settings
from covr_loaders import synthetic
from covr_loaders.jobs import gqa_job
from covr_loaders.jsonio import ByteCounter
from covr_loaders.writer import run_load

GQA_IMAGES = 85_000
LARGE_SCALE = 0.5
"""Scales from here on use ``--repeats-large`` rounds."""
BackendName = Literal["falkordb", "neo4j"]
BACKENDS: tuple[BackendName, BackendName] = ("falkordb", "neo4j")
SPLIT = "val"
PING = catalog.get("admin/ping")

# (key, label, unit, higher is better) of the markdown table, in order
ROWS: tuple[tuple[str, str, str, bool], ...] = (
    ("load_elements_per_s", "load: elements/s (whole load)", "/s", True),
    ("load_write_elements_per_s", "load: elements/s (batches only)", "/s", True),
    ("load_s", "load: seconds", "s", False),
    ("load_server_cpu_s", "load: server CPU", "s", False),
    ("related_warm_p50_ms", "related ED<=2, warm p50", "ms", False),
    ("related_warm_p95_ms", "related ED<=2, warm p95", "ms", False),
    ("related_cold_p50_ms", "related ED<=2, cold p50", "ms", False),
    ("related_reads_per_lookup", "related: store reads per warm lookup", "", False),
    ("related_store_ms_per_lookup", "related: ms in store.read per warm lookup", "ms", False),
    ("related_server_cpu_ms_per_lookup", "related: server CPU per warm lookup", "ms", False),
    ("related_warm_up_s", "related: lookup.warm()", "s", False),
    ("questions_per_s", "questions/s (1 worker)", "/s", True),
    ("questions_again_per_s", "questions/s, again on the same server", "/s", True),
    ("questions_reads_per_question", "questions: store reads per question", "", False),
    ("questions_store_share", "questions: share of time in store.read", "", False),
    ("start_s", "start, empty store, to first answer", "s", False),
    ("restart_s", "restart with data, to first answer", "s", False),
    ("restart_warm_s", "restart with data, to warmed lookup", "s", False),
    ("rss_empty_mb", "server RSS, empty", "MB", False),
    ("rss_loaded_mb", "server RSS after load", "MB", False),
    ("rss_workload_mb", "server RSS after lookups/questions", "MB", False),
    ("rss_restarted_mb", "server RSS after restart + warm", "MB", False),
    ("rss_peak_mb", "server peak RSS (VmHWM)", "MB", False),
)


# ------------------------------------------------------------------------------- small helpers
def settings_for(backend: BackendName, data_dir: Path, args: argparse.Namespace) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None,
        data_dir=data_dir,
        graph_uri="",
        graph_backend=backend,
        neo4j_bolt_port=0,
        neo4j_heap=args.neo4j_heap,
        neo4j_pagecache=args.neo4j_pagecache,
        # a first Neo4j start initialises its system database: over a minute on the shared
        # 2-core machine at load average 9 (the default 60 s timed out)
        startup_timeout_s=args.startup_timeout,
    )


def server_pid(store: GraphStore) -> int:
    """The managed server's pid, as recorded in its ``server.json``."""
    server = getattr(store, "server", None)
    state = server.read_state() if isinstance(server, ManagedServer) else None
    if state is None:
        raise SystemExit("the store has no managed server (set no COVR_GRAPH_URI)")
    return state.pid


class ReadMeter:
    """Counts read statements (``store.read``, and each statement of ``store.read_many``, which
    Neo4j runs in one transaction) and the time spent in them."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.calls = 0
        self.seconds = 0.0
        self.texts: set[str] = set()
        self.kinds: dict[str, list[float]] = {}
        """statement name (``read_many`` of a name for a batch) -> [calls, seconds]"""
        self._real: Callable[..., Any] = store.read
        self._real_many: Callable[..., Any] = store.read_many
        self._inside_many = False

    @contextmanager
    def installed(self) -> Iterator[ReadMeter]:
        real, real_many = self._real, self._real_many

        def counting(query: Any, params: Any = None, **kw: Any) -> Any:
            if self._inside_many:  # the base read_many loops over read: counted there
                return real(query, params, **kw)
            started = time.perf_counter()
            try:
                return real(query, params, **kw)
            finally:
                elapsed = time.perf_counter() - started
                statement = as_statement(query)
                self.texts.add(statement.text)
                self.calls += 1
                self.seconds += elapsed
                self._tally(statement.name, elapsed)

        def counting_many(statements: Any, **kw: Any) -> Any:
            batch = list(statements)
            started = time.perf_counter()
            self._inside_many = True
            try:
                return real_many(batch, **kw)
            finally:
                self._inside_many = False
                elapsed = time.perf_counter() - started
                self.texts.update(as_statement(q).text for q, _ in batch)
                self.calls += len(batch)
                self.seconds += elapsed
                if batch:
                    self._tally(f"read_many of {as_statement(batch[0][0]).name}", elapsed)

        self.store.read = counting  # type: ignore[method-assign]
        self.store.read_many = counting_many  # type: ignore[method-assign]
        try:
            yield self
        finally:
            self.store.read = real  # type: ignore[method-assign]
            self.store.read_many = real_many  # type: ignore[method-assign]

    def _tally(self, kind: str, seconds: float) -> None:
        entry = self.kinds.setdefault(kind, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds

    def mark(self) -> tuple[int, float]:
        return self.calls, self.seconds

    def per_lookup(self, lookups: int) -> dict[str, dict[str, float]]:
        """Calls and milliseconds per lookup by statement kind, dearest first (which statement
        to work on; Neo4j's built statements are all ``<inline>``, their rounds ``(then
        checked)``)."""
        ranked = sorted(self.kinds.items(), key=lambda kv: -kv[1][1])
        return {
            kind: {"calls": round(calls / lookups, 2), "ms": round(1000 * sec / lookups, 2)}
            for kind, (calls, sec) in ranked
        }


def open_timed(settings: Settings) -> tuple[GraphStore, float]:
    """The store and the seconds from ``open_store`` to its first answered query."""
    started = time.perf_counter()
    store = open_store(settings.graph)
    store.read(PING)
    return store, time.perf_counter() - started


# ------------------------------------------------------------------------------- phases
def phase_load(store: GraphStore, path: Path, settings: Settings) -> dict[str, Any]:
    pid = server_pid(store)
    store.apply_schema()
    server_cpu = proc_cpu_s(pid)
    client_cpu = time.process_time()
    summary = run_load(
        store,
        gqa_job([path], SPLIT, settings.load),
        data_dir=settings.data_dir,
        batch_images=settings.load_batch_images,
        writers=settings.load_writers,
    )
    elements = summary.nodes_created + summary.relationships_created
    return {
        "load_images": summary.images,
        "load_elements": elements,
        "load_batches": summary.batches_written,
        "load_s": round(summary.seconds, 2),
        "load_finish_s": round(summary.finish_seconds, 2),
        "load_elements_per_s": round(summary.elements_per_s),
        "load_write_elements_per_s": round(
            elements / max(summary.seconds - summary.finish_seconds, 1e-9)
        ),
        "load_server_cpu_s": round(proc_cpu_s(pid) - server_cpu, 2),
        "load_client_cpu_s": round(time.process_time() - client_cpu, 2),
        "load_average_load": load_average(),
    }


def phase_related(
    store: GraphStore, settings: Settings, queries: Sequence[Subgraph], passes: int
) -> dict[str, Any]:
    pid = server_pid(store)
    lookup = RelatedLookup(store, settings=settings.related)
    meter = ReadMeter(store)
    out: dict[str, Any] = {"related_load_average": load_average()}
    with meter.installed():
        started = time.perf_counter()
        lookup.warm()
        out["related_warm_up_s"] = round(time.perf_counter() - started, 3)
        times: dict[str, list[float]] = {"cold": [], "warm": []}
        answers: list[Any] = []
        pass_p50: list[float] = []
        reads_before, cpu_before = meter.mark(), 0.0
        for seed in range(1, passes + 2):
            label = "cold" if seed == 1 else "warm"
            if seed == 2:
                reads_before, cpu_before = meter.mark(), proc_cpu_s(pid)
                cold_texts = set(meter.texts)
                meter.kinds.clear()
            for g in queries:
                t0 = time.perf_counter()
                result = lookup.related(
                    g, max_distance=2, per_signature=5, positives_limit=5, seed=seed
                )
                times[label].append(time.perf_counter() - t0)
                if seed == 2:
                    answers.append(related_answer(result))
            pass_p50.append(round(1000 * statistics.median(times[label][-len(queries) :]), 2))
        warm_reads = (meter.calls - reads_before[0], meter.seconds - reads_before[1])
        warm_cpu = proc_cpu_s(pid) - cpu_before
    warm = times["warm"]
    out.update(
        {
            "related_queries": len(queries),
            "related_cold_p50_ms": round(1000 * statistics.median(times["cold"]), 2),
            "related_cold_p95_ms": round(1000 * percentile(times["cold"], 0.95), 2),
            "related_warm_p50_ms": round(1000 * statistics.median(warm), 2),
            "related_warm_p95_ms": round(1000 * percentile(warm, 0.95), 2),
            "related_warm_max_ms": round(1000 * max(warm), 2),
            "related_reads_per_lookup": round(warm_reads[0] / len(warm), 2),
            "related_store_ms_per_lookup": round(1000 * warm_reads[1] / len(warm), 2),
            "related_server_cpu_ms_per_lookup": round(1000 * warm_cpu / len(warm), 2),
            "related_texts_cold": len(cold_texts),
            "related_new_texts_warm": len(meter.texts - cold_texts),
            "related_answers": digest(answers),
            # a JVM keeps compiling for thousands of lookups: the trend says whether the warm
            # passes measured a steady state
            "related_p50_by_pass_ms": pass_p50,
            "related_statements_per_warm_lookup": meter.per_lookup(len(warm)),
        }
    )
    return out


def _generate_once(
    store: GraphStore, settings: Settings, ids: Sequence[str], seed: int, meter: ReadMeter
) -> tuple[list[Any], float, float, int, float]:
    """One ``covr generate`` over ``ids`` with a fresh lookup: (examples, seconds, warm-up
    seconds, reads, seconds inside reads)."""
    lookup = RelatedLookup(store, settings=settings.related)
    provider = StoreRelated(lookup, {SPLIT: list(ids)})
    options = GenerationOptions.from_settings(
        settings.questions, settings.related, split=SPLIT, seed=seed
    )
    started = time.perf_counter()
    lookup.warm()
    warm_up = time.perf_counter() - started
    reads = meter.mark()
    started = time.perf_counter()
    examples = list(generate(provider, options, list(ids), workers=1))
    seconds = time.perf_counter() - started
    return examples, seconds, warm_up, meter.calls - reads[0], meter.seconds - reads[1]


def phase_questions(
    store: GraphStore, settings: Settings, ids: Sequence[str], seed: int
) -> dict[str, Any]:
    """Questions for ``ids`` through the store lookup, as a fresh ``covr generate`` would; then
    once more with another fresh lookup on the same server: a first run on a just-started
    Neo4j is mostly its JVM compiling (a served store is not restarted per run)."""
    pid = server_pid(store)
    meter = ReadMeter(store)
    load_before = load_average()
    with meter.installed():
        server_cpu, client_cpu = proc_cpu_s(pid), time.process_time()
        examples, seconds, warm_up, calls, spent = _generate_once(store, settings, ids, seed, meter)
        server_cpu, client_cpu = proc_cpu_s(pid) - server_cpu, time.process_time() - client_cpu
        again, again_s, _, _, again_spent = _generate_once(store, settings, ids, seed, meter)
    if digest(again) != digest(examples):
        raise SystemExit("a second generation on the same store gave other examples")
    return {
        "questions_sources": len(ids),
        "questions": len(examples),
        "questions_s": round(seconds, 2),
        "questions_per_s": round(len(examples) / seconds, 1),
        "questions_again_per_s": round(len(again) / again_s, 1),
        "questions_again_store_share": round(again_spent / again_s, 3),
        "questions_warm_up_s": round(warm_up, 3),
        "questions_reads_per_question": round(calls / max(1, len(examples)), 2),
        "questions_store_share": round(spent / seconds, 3),
        "questions_server_cpu_s": round(server_cpu, 2),
        "questions_client_cpu_s": round(client_cpu, 2),
        "questions_two_answer_share": round(two_answer_share(examples), 3),
        "questions_examples": digest(examples),
        "questions_load_average": load_before,
    }


def run_backend(
    backend: BackendName,
    path: Path,
    work: Path,
    args: argparse.Namespace,
    *,
    queries: Sequence[Subgraph] = (),
    question_ids: Sequence[str] = (),
) -> dict[str, Any]:
    """One round of one backend in a fresh data directory (see the module docstring)."""
    data_dir = Path(tempfile.mkdtemp(prefix=f"{backend[:3]}-", dir=work))
    settings = settings_for(backend, data_dir, args)
    out: dict[str, Any] = {"backend": backend, "start_load_average": load_average()}
    gc.collect()
    store, out["start_s"] = open_timed(settings)
    try:
        pid = server_pid(store)
        out["rss_empty_mb"] = round(rss_mb(pid))
        out.update(phase_load(store, path, settings))
        out["rss_loaded_mb"] = round(rss_mb(pid))
        out.update(store_memory(store))
        if queries:
            out.update(phase_related(store, settings, queries, args.passes))
        if question_ids:
            out.update(phase_questions(store, settings, question_ids, args.seed))
        out["rss_workload_mb"] = round(rss_mb(pid))
        out["rss_peak_mb"] = round(peak_rss_mb(pid))
    finally:
        store.close()
    if queries:
        store, out["restart_s"] = open_timed(settings)
        try:
            started = time.perf_counter()
            RelatedLookup(store, settings=settings.related).warm()
            out["restart_warm_s"] = round(out["restart_s"] + time.perf_counter() - started, 2)
            out["rss_restarted_mb"] = round(rss_mb(server_pid(store)))
        finally:
            store.close()
        out["restart_s"] = round(out["restart_s"], 2)
    out["start_s"] = round(out["start_s"], 2)
    shutil.rmtree(data_dir, ignore_errors=True)
    return out


# ------------------------------------------------------------------------------- aggregation
def rounds(
    label: str,
    path: Path,
    work: Path,
    args: argparse.Namespace,
    repeats: int,
    *,
    queries: Sequence[Subgraph] = (),
    question_ids: Sequence[str] = (),
) -> dict[str, Any]:
    """``--repeats`` rounds of each backend of ``--backends`` (alternating order); medians and,
    with both backends, the ratios neo4j/falkordb and whether they agree."""
    backends: list[BackendName] = args.backends
    runs: dict[str, list[dict[str, Any]]] = {b: [] for b in backends}
    for round_no in range(repeats):
        order = backends if round_no % 2 == 0 else backends[::-1]
        for backend in order:
            print(f"[{label}] round {round_no + 1}: {backend} ...", file=sys.stderr, flush=True)
            run = run_backend(backend, path, work, args, queries=queries, question_ids=question_ids)
            run["round"] = round_no + 1
            runs[backend].append(run)
            print(f"[{label}] {json.dumps(run)}", file=sys.stderr, flush=True)
    summary = {b: medians(runs[b]) for b in backends}
    both = set(BACKENDS) <= set(backends)
    agree = {
        key: all(runs["falkordb"][i][key] == runs["neo4j"][i][key] for i in range(repeats))
        for key in ("related_answers", "questions_examples")
        if both and key in runs["falkordb"][0]
    }
    return {
        "label": label,
        "median": summary,
        "ratio_neo4j_over_falkordb": ratios(summary["neo4j"], summary["falkordb"]) if both else {},
        "backends_agree": agree,
        "runs": runs,
    }


def read_scenes(path: Path, settings: Settings) -> list[SceneGraph]:
    job = gqa_job([path], SPLIT, settings.load)
    return [r for r in job.inputs[0].records(ByteCounter()) if isinstance(r, SceneGraph)]


def synthetic_file(work: Path, images: int, seed: int) -> Path:
    path = work / f"gqa-{images}-seed{seed}" / f"{SPLIT}_sceneGraphs.json"
    if not path.exists():
        synthetic.write("gqa", path, images=images, seed=seed, split=SPLIT)
    return path


# ------------------------------------------------------------------------------- report
def _fmt(value: Any, unit: str) -> str:
    if not isinstance(value, float):
        return "–"
    if unit == "/s" or abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| section | measure | falkordb | neo4j | neo4j/falkordb | better |",
        "|---|---|---:|---:|---:|---|",
    ]
    for section in results:
        med, ratio = section["median"], section["ratio_neo4j_over_falkordb"]
        falkordb, neo4j = med.get("falkordb", {}), med.get("neo4j", {})
        for key, label, unit, higher in ROWS:
            if key not in falkordb and key not in neo4j:
                continue
            f, n = falkordb.get(key), neo4j.get(key)
            better = "–"
            if isinstance(f, float) and isinstance(n, float) and f != n:
                better = "neo4j" if (n > f) == higher else "falkordb"
            lines.append(
                f"| {section['label']} | {label}{f' ({unit})' if unit not in ('', '/s') else ''} "
                f"| {_fmt(f, unit)} | {_fmt(n, unit)} | {format_ratio(ratio.get(key), unit='')} "
                f"| {better} |"
            )
        agree = ", ".join(
            f"{k}: {'yes' if v else 'NO'}" for k, v in section["backends_agree"].items()
        )
        loads = sorted(
            {
                v
                for runs in section["runs"].values()
                for run in runs
                for k, v in run.items()
                if k.endswith("load_average")
            }
        )
        lines.append(
            f"| {section['label']} | backends agree ({agree or 'n/a'}); load average "
            f"{min(loads):.1f}–{max(loads):.1f} | | | | |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--scales",
        type=float,
        nargs="+",
        default=[0.1, 1.0],
        help="Fractions of GQA's 85,000 images.",
    )
    parser.add_argument("--repeats", type=int, default=2, help="Rounds of both backends.")
    parser.add_argument(
        "--backends",
        nargs="+",
        choices=BACKENDS,
        default=list(BACKENDS),
        help="The stores to run (both by default: the ratios and the agreement need both).",
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passes", type=int, default=2, help="Warm passes per round.")
    parser.add_argument("--sources", type=int, default=100, help="Question source images.")
    parser.add_argument("--question-scales", type=float, nargs="*", default=[0.1])
    parser.add_argument(
        "--repeats-large",
        type=int,
        default=1,
        help=f"Rounds at scales >= {LARGE_SCALE:g} (a 1x Neo4j load takes over ten minutes).",
    )
    parser.add_argument("--sample-images", type=int, default=100, help="0 skips the sample.")
    parser.add_argument(
        "--sample-sources",
        type=int,
        default=20,
        help="Question source images of the sample (0: all; Neo4j made ~15 q/s in the smoke run).",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--startup-timeout", type=float, default=300.0)
    parser.add_argument("--neo4j-heap", default="2g")
    parser.add_argument("--neo4j-pagecache", default="2g")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "covr-bb")
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(__file__).resolve().parent / "results" / "backends.json",
    )
    quick = {
        "backends": ["falkordb"],  # a Neo4j start alone takes longer than the whole quick run
        "scales": [0.001],
        "repeats": 1,
        "queries": 8,
        "passes": 1,
        "sources": 3,
        "question_scales": [0.001],
        "sample_images": 20,
        "sample_sources": 3,
        "work": quick_path("backends"),
        "json": quick_path("backends.json"),
    }
    args = parse_args(parser, quick)
    if min(args.passes, args.repeats, args.repeats_large) < 1:
        parser.error("--passes, --repeats and --repeats-large must be at least 1")
    args.work.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    report: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_average_start": load_averages(),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "sections": results,
    }

    def save() -> None:
        report["load_average_end"] = load_averages()
        write_json(args.json, report)

    plain = settings_for("falkordb", args.work, args)  # reading files, drawing queries
    if args.sample_images:
        path = synthetic_file(args.work, args.sample_images, args.seed)
        ids: list[str] = sorted(s.image_id for s in read_scenes(path, plain))
        ids = ids[: args.sample_sources or None]
        label = f"sample {args.sample_images} ({len(ids)} sources)"
        results.append(rounds(label, path, args.work, args, args.repeats, question_ids=ids))
        save()
    for scale in args.scales:
        images = round(scale * GQA_IMAGES)
        path = synthetic_file(args.work, images, args.seed)
        scenes = read_scenes(path, plain)
        queries = pick_queries(scenes, args.queries, args.seed, plain)
        ids = []
        if any(abs(scale - q) < 1e-9 for q in args.question_scales):
            ids = sorted(s.image_id for s in scenes)[: args.sources]
        del scenes
        gc.collect()
        repeats = args.repeats_large if scale >= LARGE_SCALE else args.repeats
        label = f"{scale:g}x ({images:,})"
        results.append(
            rounds(label, path, args.work, args, repeats, queries=queries, question_ids=ids)
        )
        save()
    save()
    print(table(results))
    print(
        f"\nload average at start {report['load_average_start']}, at end "
        f"{report['load_average_end']}; JSON: {args.json}"
    )


if __name__ == "__main__":
    main()
