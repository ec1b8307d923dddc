"""Question generation benchmark (issue 6): questions per second end to end, 1 and 2 workers.

For each scale (synthetic GQA-like scene graphs held in memory: 8,500 / 85,000 images = 0.1x / 1x
GQA), build the in-memory related-image source once (timed separately), then time
``covr.questions.generate.generate`` on the first ``--sources`` images of the split — subgraph
enumeration -> positives and distractors (seeded samples, verified by the reference matcher) ->
every template -> executed answers — with 1 and with 2 worker processes, ``--repeats`` times each.
Every repeat starts as a fresh ``covr generate`` process would: an empty lookup-result cache and a
new exclusivity scorer (its memo of name pairs is empty), so the first source images pay for
filling them; the forked workers inherit the index and whatever ``generate`` prepares before the
fork (sorted postings, templates). ``--sources`` defaults to 120: with 30 the two-worker runs did
not amortize the workers' start-up (fork, cold memos in each worker, copy-on-write faults) and
were slower than one worker. Reported: examples,
median questions/s, the ratio to the issue's goal (500 q/s at 1x) and to the original COVR
generator's figure quoted in DESIGN §7 (~47 q/s with one process, ~82 with two), peak RSS of the
parent and of the workers, a cProfile breakdown of one single-worker run grouped by stage, the
two-answer share, and unbalanced -> balanced counts (``balance`` with equal counts per template).

The machine is shared by several engineers: wall-clock numbers are noisy (the load average is
printed), so CPU seconds of the generating processes are reported too (``questions_per_cpu_s``:
what one dedicated core would do).

Run: ``.venv/bin/python benchmarks/bench_questions.py [--scales 8500 85000] [--sources 120]
[--repeats 3] [--json PATH] [--cache DIR]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pickle
import pstats
import resource
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from covr.questions.balance import balance
from covr.questions.generate import GenerationOptions, generate
from covr.related.exclusivity import ResourceExclusivity
from covr.related.memory import InMemoryRelated
from covr.scene.model import SceneGraph
from covr_loaders import synthetic

GOAL = 500.0
ORIGINAL = {1: 47.0, 2: 82.0}


def rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def fresh(provider: InMemoryRelated) -> None:
    """Empty the caches a new process would start with (see the module docstring)."""
    provider._cache = type(provider._cache)(provider._cache.size)
    provider.exclusivity = ResourceExclusivity()


def run(
    provider: InMemoryRelated, options: GenerationOptions, ids: list[str], workers: int
) -> tuple[float, float, list[dict[str, Any]]]:
    """Wall seconds, CPU seconds (this process + finished workers) and the examples."""
    fresh(provider)
    cpu = _cpu()
    start = time.perf_counter()
    examples = list(generate(provider, options, ids, workers=workers))
    return time.perf_counter() - start, _cpu() - cpu, examples


STAGE_FUNCTIONS = {
    "related images (positives + distractors)": ("engine.py", "_related"),
    "subgraph enumeration": ("enumerate.py", "enumerate_subgraphs"),
    "slot filling, text, program": ("slots.py", "instantiate"),
    "image selection": ("picking.py", "pick_images"),
    "execution (world + program)": ("engine.py", "_answer"),
    "example records (signatures, qid)": ("engine.py", "_example"),
}


def profile(
    provider: InMemoryRelated, options: GenerationOptions, ids: list[str]
) -> dict[str, float]:
    """Share of the run's time spent under each stage's function (cumulative, disjoint)."""
    fresh(provider)
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.enable()
    list(generate(provider, options, ids, workers=1))
    prof.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    for stage, (filename, function) in STAGE_FUNCTIONS.items():
        cumulative = sum(
            v[3]
            for (f, _line, name), v in stats.items()
            if f.endswith(filename) and name == function
        )
        out[stage] = round(100 * cumulative / total, 1)
    out["other (loop, combos, dedupe)"] = round(100 - sum(out.values()), 1)
    return out


def synthesize(scale: int, seed: int, cache: str) -> list[SceneGraph]:
    """The synthetic scene graphs (pickled under ``cache`` so repeated runs skip generation)."""
    path = Path(cache) / f"scenes-{scale}-{seed}.pickle" if cache else None
    if path is not None and path.exists():
        with path.open("rb") as handle:
            loaded: list[SceneGraph] = pickle.load(handle)  # our own cache file
            return loaded
    scenes = list(synthetic.generate(scale, seed=seed, split="val"))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            pickle.dump(scenes, handle)
    return scenes


def two_answer_share(examples: list[dict[str, Any]]) -> float:
    answers: dict[str, set[str]] = defaultdict(set)
    for e in examples:
        answers[e["utterance"]].add(json.dumps(e["answer"]))
    return sum(len(a) >= 2 for a in answers.values()) / max(1, len(answers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[8500, 85000])
    parser.add_argument("--sources", type=int, default=120)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default="")
    parser.add_argument("--cache", default="", help="Directory to keep pickled synthetic scenes.")
    args = parser.parse_args()
    results = []
    for scale in args.scales:
        t0 = time.perf_counter()
        scenes = synthesize(scale, args.seed, args.cache)
        t1 = time.perf_counter()
        provider = InMemoryRelated(scenes, presort=True)
        t2 = time.perf_counter()
        ids = provider.images("val")[: args.sources]
        options = GenerationOptions(split="val", seed=args.seed)
        row: dict[str, Any] = {
            "scale": scale,
            "sources": len(ids),
            "synthesize_s": round(t1 - t0, 1),
            "index_s": round(t2 - t1, 1),
            "load_avg_start": os.getloadavg()[0],
        }
        examples: list[dict[str, Any]] = []
        for workers in (1, 2):
            times = []
            cpus = []
            for _ in range(args.repeats):
                elapsed, cpu, examples = run(provider, options, ids, workers)
                times.append(elapsed)
                cpus.append(cpu)
            median = statistics.median(times)
            qps = len(examples) / median
            row[f"workers_{workers}"] = {
                "examples": len(examples),
                "median_s": round(median, 2),
                "median_cpu_s": round(statistics.median(cpus), 2),
                "questions_per_cpu_s": round(len(examples) / statistics.median(cpus), 1),
                "questions_per_s": round(qps, 1),
                "runs_wall_s": [round(t, 2) for t in times],
                "runs_cpu_s": [round(c, 2) for c in cpus],
                "ratio_to_goal_500": round(qps / GOAL, 2),
                "ratio_to_original": round(qps / ORIGINAL[workers], 1),
            }
        row["peak_rss_parent_mb"] = round(rss_mb(resource.RUSAGE_SELF))
        row["peak_rss_worker_mb"] = round(rss_mb(resource.RUSAGE_CHILDREN))
        row["time_by_stage_pct"] = profile(provider, options, ids[: max(4, len(ids) // 4)])
        row["two_answer_share"] = round(two_answer_share(examples), 3)
        balanced = balance(examples, seed=args.seed)
        row["unbalanced"] = len(examples)
        row["balanced_equal_per_template"] = len(balanced)
        row["per_template_unbalanced"] = dict(
            sorted(Counter(e["template"] for e in examples).items())
        )
        row["load_avg_end"] = os.getloadavg()[0]
        results.append(row)
        print(json.dumps(row, indent=2))
        del scenes, provider
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
