"""Neo4j question generation with a cold and a warm plan cache, two builder versions in one run.

Why: on Neo4j a statement text it has not seen is parsed and planned before it runs (tens to
hundreds of milliseconds, seconds on a cold JVM), and the plan is cached by text. Question
generation and related-image lookups used to send texts that differed per subgraph (names,
rules), so the cache missed; issue 15 made the texts depend on the subgraph's shape only. This
benchmark measures what that buys, old and new code side by side on one server and one store.

How: the managed Neo4j (this tree's launcher) is started once in a fresh data directory and the
bundled samples (GQA, imSitu, VG; ``covr_loaders.samples``) are loaded, or with ``--synthetic N``
a synthetic GQA file of N images (``--sources`` limits the question source images per split). Each version of the code
is a git worktree of one revision (``--old``, ``--new``; removed at the end), run as a child
process whose ``covr``, ``covr_cypher`` and ``covr_loaders`` come from that worktree. A child
connects to the server over Bolt and generates the questions of every sample image of every
split (``covr.questions.generate.generate`` over ``StoreRelated``, one worker, the settings'
defaults), three times, each with a fresh ``RelatedLookup`` (no result cache):

1. *prime*: Python warms up (models, WordNet, builders' caches); its time is reported, not used;
2. *cold*: right after ``CALL db.clearQueryCaches()``: every statement text is planned again;
3. *warm*: the same again, every plan cached.

Each child reports the seconds of each run, the number of statements sent and of distinct
statement texts, and a digest of the examples (both versions must generate the same ones). The
versions alternate order over ``--repeats`` rounds; medians, the ratios cold/warm and old/new,
and the load average before every child are printed and written as JSON (``--json``).

Run: ``.venv/bin/python benchmarks/bench_plan_cache.py [--old REV] [--new REV] [--repeats 3]
[--seed 1] [--synthetic 0] [--sources 0] [--backend neo4j|falkordb] [--work DIR]
[--json PATH]``.
``--quick`` (``make bench``: HEAD against itself, 30 synthetic images) runs on the embedded
FalkorDB, whose plan cache cannot be emptied (its "cold" run is warm); ``--quick --backend
neo4j`` on the managed Neo4j.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import (
    REPO,
    digest,
    git,
    load_averages,
    medians,
    parse_args,
    quick_path,
    ratios,
    say,
    worktree,
    write_json,
)

CLEAR_CACHES = "CALL db.clearQueryCaches()"
QUERY_TIMEOUT_S = "900"  # a cold statement on a busy JVM may take long to plan: not a failure here


# ------------------------------------------------------------------------------- child process
class TextMeter:
    """Counts the statements a store runs (``read``, and each of ``read_many``) and their texts."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.statements = 0
        self.texts: set[str] = set()

    def _note(self, query: Any) -> None:
        self.statements += 1
        self.texts.add(query if isinstance(query, str) else str(query.text))

    @contextmanager
    def installed(self) -> Iterator[TextMeter]:
        real_read, real_many = self.store.read, self.store.read_many

        def read(query: Any, params: Any = None, **kw: Any) -> Any:
            self._note(query)
            return real_read(query, params, **kw)

        def read_many(statements: Any, **kw: Any) -> Any:
            batch = list(statements)
            for query, _ in batch:
                self._note(query)
            return real_many(batch, **kw)

        self.store.read, self.store.read_many = read, read_many
        try:
            yield self
        finally:
            self.store.read, self.store.read_many = real_read, real_many


def child(images: dict[str, list[str]], seed: int, clear: bool = True) -> dict[str, Any]:
    """Prime, cold and warm generation runs with the code importable now (a worktree's);
    ``clear``: empty Neo4j's plan cache before the cold run (FalkorDB has no such call)."""
    from covr.graph import open_store
    from covr.questions.generate import GenerationOptions, generate
    from covr.related.lookup import RelatedLookup
    from covr.related.store_provider import StoreRelated
    from covr.settings import Settings

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    store = open_store(settings.graph)

    def run() -> dict[str, Any]:
        lookup = RelatedLookup(store, settings=settings.related)
        meter = TextMeter(store)
        examples: list[Any] = []
        started = time.perf_counter()
        with meter.installed():
            for split, ids in images.items():
                provider = StoreRelated(lookup, {split: ids})
                options = GenerationOptions.from_settings(
                    settings.questions, settings.related, split=split, seed=seed
                )
                examples += list(generate(provider, options, ids, workers=1))
        seconds = time.perf_counter() - started
        return {
            "s": round(seconds, 3),
            "questions": len(examples),
            "statements": meter.statements,
            "texts": len(meter.texts),
            "examples": digest(examples),
        }

    out: dict[str, Any] = {"prime": run()}
    if clear:
        store.write(CLEAR_CACHES)
    out["cold"] = run()
    out["warm"] = run()
    store.close()
    return out


# ------------------------------------------------------------------------------- parent
def dataset_jobs(args: argparse.Namespace, work: Path) -> list[Any]:
    """The load jobs of the chosen data: the bundled samples, or one synthetic GQA file."""
    from covr.settings import Settings
    from covr_loaders import synthetic
    from covr_loaders.jobs import gqa_job
    from covr_loaders.samples import sample_jobs

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    if not args.synthetic:
        return sample_jobs(settings.load)
    path = work / "synthetic" / "val_sceneGraphs.json"
    if not path.exists():
        synthetic.write("gqa", path, images=args.synthetic, seed=args.seed, split="val")
    return [gqa_job([path], "val", settings.load)]


def source_images(jobs: list[Any], sources: int) -> dict[str, list[str]]:
    """The question source images per split: every image, or the first ``sources`` (0: all)."""
    from covr.scene.model import SceneGraph
    from covr_loaders.jsonio import ByteCounter

    images: dict[str, list[str]] = {}
    for job in jobs:
        for source in job.inputs:
            for record in source.records(ByteCounter()):
                if isinstance(record, SceneGraph):
                    images.setdefault(str(record.split), []).append(record.image_id)
    return {split: sorted(ids)[: sources or None] for split, ids in sorted(images.items())}


@contextmanager
def neo4j_with_data(
    work: Path, args: argparse.Namespace, jobs: list[Any]
) -> Iterator[dict[str, str]]:
    """A managed Neo4j (``--backend falkordb``: the embedded FalkorDB) holding the jobs' data;
    yields the environment a child needs."""
    from covr.graph import open_store
    from covr.settings import Settings
    from covr_loaders.writer import run_load

    data_dir = work / f"{args.backend}-data"
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        data_dir=data_dir,
        graph_uri="",
        graph_backend=args.backend,
        neo4j_bolt_port=0,
        neo4j_heap=args.neo4j_heap,
        neo4j_pagecache=args.neo4j_pagecache,
        startup_timeout_s=args.startup_timeout,
    )
    store = open_store(settings.graph)
    try:
        store.apply_schema()
        for job in jobs:
            run_load(
                store,
                job,
                data_dir=settings.data_dir,
                batch_images=settings.load_batch_images,
                writers=settings.load_writers,
            )
        env = {
            # the child attaches to the embedded server running in the data directory
            "COVR_GRAPH_URI": "",
            "COVR_GRAPH_BACKEND": "falkordb",
            "COVR_DATA_DIR": str(data_dir),
            "COVR_QUERY_TIMEOUT_S": QUERY_TIMEOUT_S,
        }
        if args.backend == "neo4j":
            server = store.server  # type: ignore[attr-defined]
            user, password = server.credentials()
            env = {
                "COVR_GRAPH_URI": server.uri,
                "COVR_GRAPH_USER": user,
                "COVR_GRAPH_PASSWORD": password,
                "COVR_DATA_DIR": str(work / "child-data"),
                "COVR_QUERY_TIMEOUT_S": QUERY_TIMEOUT_S,
            }
        yield env
    finally:
        store.close()
        shutil.rmtree(data_dir, ignore_errors=True)


def run_child(
    shim: Path, env: dict[str, str], images: dict[str, list[str]], seed: int, clear: bool
) -> Any:
    """One child process with ``shim``'s packages first on its path; its JSON result."""
    full = {**os.environ, **env, "PYTHONPATH": str(shim)}
    payload = json.dumps({"images": images, "seed": seed, "clear": clear})
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child"],
        input=payload,
        env=full,
        cwd=shim.parent,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians per version and the ratios the issue asks for."""
    out: dict[str, Any] = {}
    for label, rows in runs.items():
        phases = {p: medians([r[p] for r in rows]) for p in ("prime", "cold", "warm")}
        med: dict[str, Any] = {f"{p}_s": phases[p]["s"] for p in phases}
        med.update({f"{p}_texts": rows[0][p]["texts"] for p in ("cold", "warm")})
        med["statements"] = rows[0]["cold"]["statements"]
        med["questions"] = rows[0]["cold"]["questions"]
        med["cold_over_warm"] = round(med["cold_s"] / med["warm_s"], 2)
        med["examples"] = sorted({r[p]["examples"] for r in rows for p in ("cold", "warm")})
        out[label] = med
    old, new = out["old"], out["new"]
    out["old_over_new"] = ratios({k: old[k] for k in ("cold_s", "warm_s", "cold_texts")}, new)
    out["same_examples"] = old["examples"] == new["examples"]
    return out


def table(result: dict[str, Any]) -> str:
    rows = [
        ("distinct statement texts", "cold_texts"),
        ("statements sent", "statements"),
        ("questions", "questions"),
        ("cold plan cache, s (median)", "cold_s"),
        ("warm plan cache, s (median)", "warm_s"),
        ("cold / warm", "cold_over_warm"),
        ("first run in the process, s (median)", "prime_s"),
    ]
    old_over_new = result["old_over_new"]
    lines = ["| measure | old | new | old/new |", "|---|---:|---:|---:|"]
    for label, key in rows:
        ratio = old_over_new.get(key)
        lines.append(
            f"| {label} | {result['old'][key]} | {result['new'][key]} | "
            f"{'' if ratio is None else ratio} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--old", default="HEAD~1", help="Revision of the old builder.")
    parser.add_argument("--new", default="HEAD", help="Revision of the new builder.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--synthetic",
        type=int,
        default=0,
        help="Images of a synthetic GQA file to load instead of the bundled samples (0: samples).",
    )
    parser.add_argument(
        "--sources", type=int, default=0, help="Question source images per split (0: all)."
    )
    parser.add_argument("--startup-timeout", type=float, default=300.0)
    parser.add_argument("--neo4j-heap", default="1g")
    parser.add_argument("--neo4j-pagecache", default="512m")
    parser.add_argument(
        "--backend",
        choices=("neo4j", "falkordb"),
        default="neo4j",
        help="The store (falkordb: the embedded store, for a quick run; its plan cache cannot be "
        "emptied, so its cold run is warm).",
    )
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument(
        "--json", type=Path, default=REPO / "benchmarks" / "results" / "plan_cache.json"
    )
    quick = {
        "backend": "falkordb",  # a Neo4j start alone takes longer than the whole quick run
        "old": "HEAD",
        "synthetic": 30,
        "sources": 3,
        "repeats": 1,
        "work": quick_path("plan_cache"),
        "json": quick_path("plan_cache.json"),
    }
    args = parse_args(parser, quick)
    if args.child:
        request = json.loads(sys.stdin.read())
        print(json.dumps(child(request["images"], request["seed"], request.get("clear", True))))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="covr-plan-cache-"))
    work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"load_average_start": load_averages(), "args": vars(args).copy()}
    report["args"]["work"] = str(work)
    report["args"]["json"] = str(args.json)
    report["revisions"] = {"old": git("rev-parse", args.old), "new": git("rev-parse", args.new)}
    jobs = dataset_jobs(args, work)
    images = source_images(jobs, args.sources)
    report["images"] = {split: len(ids) for split, ids in images.items()}
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    with (
        worktree(args.old, work, "old") as old_shim,
        worktree(args.new, work, "new") as new_shim,
        neo4j_with_data(work, args, jobs) as env,
    ):
        shims = {"old": old_shim, "new": new_shim}
        for round_no in range(args.repeats):
            order = ("old", "new") if round_no % 2 == 0 else ("new", "old")
            for label in order:
                before = load_averages()
                result = run_child(shims[label], env, images, args.seed, args.backend == "neo4j")
                result["load_average"] = before
                runs[label].append(result)
                say(f"round {round_no + 1} {label}: {json.dumps(result)}")
    report["runs"] = runs
    report["summary"] = summary(runs)
    report["load_average_end"] = load_averages()
    write_json(args.json, report)
    print(table(report["summary"]))
    print(
        f"\nsame examples old/new: {report['summary']['same_examples']}; load average at start "
        f"{report['load_average_start']}, at end {report['load_average_end']}; JSON: {args.json}"
    )


if __name__ == "__main__":
    main()
