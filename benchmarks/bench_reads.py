"""Read path of both stores, two code versions side by side on the same loaded stores.

Why: ``bench_backends.py`` loads a fresh store per round, so a change of the read path costs a
0.1x Neo4j load (minutes) per measurement, and old and new code never share a run. Here each
backend (embedded FalkorDB, managed Neo4j) is loaded once into a data directory under ``--work``
and kept (``loaded.json`` marks a finished load: a second run of the benchmark starts the server
on it and loads nothing). Each version of the code (``--old``, ``--new``: git revisions, each a
worktree; ``--new WORKTREE`` is the working tree as it is) runs as a child process that attaches
to the running server, so old and new read the same store through the same warm server:

1. **questions**: ``covr.questions.generate.generate`` over ``StoreRelated`` (what ``covr generate
   --lookup store`` runs), one worker, a fresh lookup, the first ``--sources`` images: one priming
   run (plans cached, Python warm), then a timed run: questions/s, statements and transactions
   (one ``read`` = one transaction; one ``read_many`` = one transaction of several statements)
   per question, the server's CPU per question (``/proc/<pid>/stat`` of the redis-server or java
   process), this process's CPU per question;
2. **related**: ``RelatedLookup.related(g, max_distance=2, per_signature=5, positives_limit=5)``
   over ``--queries`` subgraphs (``bench_related.pick_queries``), a priming pass (seed 1), then a
   timed warm pass (seed 2: result-cache misses): p50/p95, statements, transactions and server CPU
   per lookup.

Rounds (``--repeats``) alternate the order of versions and backends; medians per (backend,
version) and the ratios old/new and neo4j/falkordb are printed and written as JSON (``--json``).
Both versions and both backends must give the same examples and related answers (digests).

Run: ``.venv/bin/python benchmarks/bench_reads.py [--images 100] [--sources 20] [--queries 100]
[--old REV] [--new REV|WORKTREE] [--repeats 3] [--backends falkordb neo4j] [--work DIR]
[--json PATH]``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import (
    REPO,
    WORKTREE,
    CpuClock,
    digest,
    git,
    load_average,
    medians,
    parse_args,
    percentile,
    quick_path,
    say,
    worktree,
    write_json,
)

SPLIT = "val"
BACKENDS = ("falkordb", "neo4j")


# ------------------------------------------------------------------------------- child process
class Meter:
    """Statements and transactions a store runs, and the seconds spent in them."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.statements = 0
        self.transactions = 0
        self.sent = 0
        self.seconds = 0.0

    def counts(self) -> tuple[int, int, int, float]:
        """Statements asked for, transactions, statements sent to the server, seconds."""
        return self.statements, self.transactions, self.sent, self.seconds

    def _sent(self, batch: list[Any]) -> int:
        """Statements the server gets for one ``read_many`` (fewer where the backend sends
        several of one text as one: ``covr.graph.neo4j_batch``, when the version has it)."""
        if "coalesce(" not in inspect.getsource(type(self.store).read_many):
            return len(batch)  # this version's backend sends every statement
        from covr.graph.neo4j_batch import coalesce
        from covr.graph.store import as_statement

        return len(coalesce([(as_statement(q), dict(p)) for q, p in batch]))

    @contextmanager
    def installed(self) -> Iterator[Meter]:
        real_read, real_many = self.store.read, self.store.read_many
        inside = [False]

        def read(query: Any, params: Any = None, **kw: Any) -> Any:
            if inside[0]:  # the base read_many loops over read: counted there
                return real_read(query, params, **kw)
            started = time.perf_counter()
            try:
                return real_read(query, params, **kw)
            finally:
                self.statements += 1
                self.transactions += 1
                self.sent += 1
                self.seconds += time.perf_counter() - started

        def read_many(statements: Any, **kw: Any) -> Any:
            batch = list(statements)
            started = time.perf_counter()
            inside[0] = True
            try:
                return real_many(batch, **kw)
            finally:
                inside[0] = False
                self.statements += len(batch)
                self.transactions += 1 if batch else 0
                self.sent += self._sent(batch)
                self.seconds += time.perf_counter() - started

        self.store.read, self.store.read_many = read, read_many
        try:
            yield self
        finally:
            self.store.read, self.store.read_many = real_read, real_many


def _per(count: float, n: int) -> float:
    return round(count / max(1, n), 3)


def child_questions(
    store: Any, settings: Any, ids: list[str], pid: int, seed: int
) -> dict[str, Any]:
    from covr.questions.generate import GenerationOptions, generate
    from covr.related.lookup import RelatedLookup
    from covr.related.store_provider import StoreRelated

    options = GenerationOptions.from_settings(
        settings.questions, settings.related, split=SPLIT, seed=seed
    )
    out: dict[str, Any] = {}
    for phase in ("prime", "timed"):
        lookup = RelatedLookup(store, settings=settings.related)
        provider = StoreRelated(lookup, {SPLIT: list(ids)})
        lookup.warm()
        meter = Meter(store)
        with meter.installed():
            cpu = CpuClock(server_pid=pid)
            started = time.perf_counter()
            examples = list(generate(provider, options, list(ids), workers=1))
            seconds = time.perf_counter() - started
            statements, transactions, sent, spent = meter.counts()
        n = len(examples)
        out[phase] = {
            "questions": n,
            "s": round(seconds, 3),
            "questions_per_s": round(n / seconds, 2),
            "statements_per_question": _per(statements, n),
            "transactions_per_question": _per(transactions, n),
            "sent_per_question": _per(sent, n),
            "store_share": round(spent / seconds, 3),
            "server_cpu_ms_per_question": round(1000 * cpu.server_s() / max(1, n), 3),
            "client_cpu_ms_per_question": round(1000 * cpu.client_s() / max(1, n), 3),
            "examples": digest(examples),
        }
    return out


def child_related(
    store: Any, settings: Any, path: str, count: int, pid: int, seed: int
) -> dict[str, Any]:
    from benchmarks.bench_related import pick_queries, related_answer
    from covr.related.lookup import RelatedLookup
    from covr.scene.model import SceneGraph
    from covr_loaders.jobs import gqa_job
    from covr_loaders.jsonio import ByteCounter

    job = gqa_job([Path(path)], SPLIT, settings.load)
    scenes = [r for r in job.inputs[0].records(ByteCounter()) if isinstance(r, SceneGraph)]
    queries = pick_queries(scenes, count, seed, settings)
    del scenes
    lookup = RelatedLookup(store, settings=settings.related)
    lookup.warm()
    for g in queries:  # prime: plans, name lists, exclusivity decisions
        lookup.related(g, max_distance=2, per_signature=5, positives_limit=5, seed=1)
    meter = Meter(store)
    times: list[float] = []
    answers: list[Any] = []
    with meter.installed():
        cpu = CpuClock(server_pid=pid)
        for g in queries:
            started = time.perf_counter()
            result = lookup.related(g, max_distance=2, per_signature=5, positives_limit=5, seed=2)
            times.append(time.perf_counter() - started)
            answers.append(related_answer(result))
        statements, transactions, sent, spent = meter.counts()
        server_cpu = cpu.server_s()
    n = len(times)
    return {
        "lookups": n,
        "p50_ms": round(1000 * statistics.median(times), 2),
        "p95_ms": round(1000 * percentile(times, 0.95), 2),
        "mean_ms": round(1000 * statistics.fmean(times), 2),
        "statements_per_lookup": _per(statements, n),
        "transactions_per_lookup": _per(transactions, n),
        "sent_per_lookup": _per(sent, n),
        "store_ms_per_lookup": round(1000 * spent / n, 2),
        "server_cpu_ms_per_lookup": round(1000 * server_cpu / n, 2),
        "answers": digest(answers),
    }


def child(request: dict[str, Any]) -> dict[str, Any]:
    """Questions and related lookups with the code importable now (a worktree's)."""
    from covr.graph import open_store
    from covr.settings import Settings

    settings = Settings()  # the parent's environment names the store
    store = open_store(settings.graph)
    pid, seed = int(request["pid"]), int(request["seed"])
    out: dict[str, Any] = {}
    try:
        if request["ids"]:
            out["questions"] = child_questions(store, settings, request["ids"], pid, seed)
        if request["queries"]:
            out["related"] = child_related(
                store, settings, request["path"], request["queries"], pid, seed
            )
    finally:
        store.close()
    return out


# ------------------------------------------------------------------------------- parent
def version(rev: str, work: Path, label: str) -> AbstractContextManager[Path]:
    """A folder whose packages are ``rev``'s (a detached worktree) or the working tree's, with
    this tree's benchmarks (the child's code)."""
    return worktree(rev, work, label, links={"benchmarks": REPO / "benchmarks"})


def backend_env(backend: str, data_dir: Path, args: argparse.Namespace) -> dict[str, str]:
    return {
        "COVR_DATA_DIR": str(data_dir),
        "COVR_GRAPH_URI": "",
        "COVR_GRAPH_BACKEND": backend,
        "COVR_NEO4J_BOLT_PORT": "0",  # a free port: another managed Neo4j may hold the default
        "COVR_NEO4J_HEAP": args.neo4j_heap,
        "COVR_NEO4J_PAGECACHE": args.neo4j_pagecache,
        "COVR_NEO4J_STARTUP_TIMEOUT_S": str(args.startup_timeout),
    }


@contextmanager
def loaded_store(backend: str, path: Path, args: argparse.Namespace) -> Iterator[dict[str, str]]:
    """The backend's server over a data directory holding ``path`` (loaded once, kept)."""
    from benchmarks.bench_backends import phase_load
    from covr.graph import open_store
    from covr.settings import Settings

    data_dir = args.work / f"{backend}-{path.parent.name}"
    env = backend_env(backend, data_dir, args)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        store = open_store(settings.graph)
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    marker = data_dir / "loaded.json"
    try:
        if not marker.exists():
            marker.write_text(json.dumps(phase_load(store, path, settings)))
        state = store.server.read_state()  # type: ignore[attr-defined]
        yield {**env, "BENCH_PID": str(state.pid)}
    finally:
        store.close()


def run_child(
    shim: Path, env: dict[str, str], request: dict[str, Any], extra: str = ""
) -> dict[str, Any]:
    full = {**os.environ, **env, "PYTHONPATH": os.pathsep.join(p for p in (extra, str(shim)) if p)}
    full.pop("COVR_GRAPH_URI", None)
    done = subprocess.run(
        [sys.executable, "-c", "import benchmarks.bench_reads as b; b.child_main()"],
        input=json.dumps(request),
        env=full,
        cwd=shim,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"child failed ({done.returncode}):\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def child_main() -> None:
    print(json.dumps(child(json.loads(sys.stdin.read()))))


def flatten(result: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in result.get("questions", {}).get("timed", {}).items():
        out[f"q_{key}"] = value
    for key, value in result.get("related", {}).items():
        out[f"r_{key}"] = value
    return out


def table(summary: dict[str, dict[str, dict[str, Any]]], labels: list[str]) -> str:
    cells = [(b, v) for b in summary for v in labels if v in summary[b]]
    keys = list(summary[cells[0][0]][cells[0][1]])
    head = " | ".join(f"{b} {v}" for b, v in cells)
    lines = [f"| measure | {head} |", "|---" + "|---:" * len(cells) + "|"]
    for key in keys:
        row = " | ".join(str(summary[b][v].get(key, "")) for b, v in cells)
        lines.append(f"| {key} | {row} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--images", type=int, default=100, help="Synthetic GQA images loaded.")
    parser.add_argument("--sources", type=int, default=20, help="Question source images (0: none).")
    parser.add_argument("--queries", type=int, default=100, help="Related lookups (0: none).")
    parser.add_argument("--old", default="", help="Old revision (empty: only --new).")
    parser.add_argument("--new", default=WORKTREE, help="New revision, or WORKTREE.")
    parser.add_argument(
        "--new-path",
        default="",
        help="A folder put first on the new version's import path (e.g. a driver build).",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--startup-timeout", type=float, default=300.0)
    parser.add_argument("--neo4j-heap", default="2g")
    parser.add_argument("--neo4j-pagecache", default="2g")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "covr-reads")
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "reads.json")
    quick = {
        "backends": ["falkordb"],  # a Neo4j start alone takes longer than the whole quick run
        "images": 30,
        "sources": 3,
        "queries": 8,
        "repeats": 1,
        "work": quick_path("reads"),
        "json": quick_path("reads.json"),
    }
    args = parse_args(parser, quick)
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    from covr.settings import Settings
    from covr_loaders import synthetic
    from covr_loaders.jobs import gqa_job
    from covr_loaders.jsonio import ByteCounter

    path = args.work / f"gqa-{args.images}-seed{args.seed}" / f"{SPLIT}_sceneGraphs.json"
    if not path.exists():
        synthetic.write("gqa", path, images=args.images, seed=args.seed, split=SPLIT)
    plain = Settings(_env_file=None)  # type: ignore[call-arg]
    records = gqa_job([path], SPLIT, plain.load).inputs[0].records(ByteCounter())
    ids = sorted(str(r.image_id) for r in records if hasattr(r, "image_id"))
    request = {
        "ids": ids[: args.sources] if args.sources else [],
        "queries": args.queries,
        "path": str(path),
        "seed": args.seed,
    }
    revs = {"new": args.new, **({"old": args.old} if args.old else {})}
    labels = list(revs)
    report: dict[str, Any] = {
        "load_average_start": load_average(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "revisions": {k: v if v == WORKTREE else git("rev-parse", v) for k, v in revs.items()},
    }
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {b: {v: [] for v in revs} for b in BACKENDS}
    with ExitStack() as stack:
        shims = {
            label: stack.enter_context(version(rev, args.work, label))
            for label, rev in revs.items()
        }
        for backend in args.backends:  # one server at a time (2 cores)
            with loaded_store(backend, path, args) as env:
                for round_no in range(args.repeats):
                    order = labels if round_no % 2 == 0 else labels[::-1]
                    for label in order:
                        before = load_average()
                        extra = args.new_path if label == "new" else ""
                        result = run_child(
                            shims[label], env, {**request, "pid": env["BENCH_PID"]}, extra
                        )
                        row = {**flatten(result), "load_average": before}
                        runs[backend][label].append(row)
                        say(f"[{backend} {label} {round_no + 1}] {json.dumps(row)}")
    summary = {
        b: {v: medians(rows, others="list") for v, rows in runs[b].items() if rows} for b in runs
    }
    summary = {b: s for b, s in summary.items() if s}
    report.update({"runs": runs, "median": summary, "load_average_end": load_average()})
    write_json(args.json, report)
    print(table(summary, labels))
    print(
        f"\nload average {report['load_average_start']} -> {report['load_average_end']}; "
        f"JSON: {args.json}"
    )


if __name__ == "__main__":
    main()
