"""Splits benchmark (issue 8): every split and the easiness rule on 250,000 synthetic examples.

The examples come from the tests' corpus generator (``tests/support/splits_corpus.py``: real
GQA-like words, programs of all 16 forms, nested quantifier scopes), ``--unique`` distinct ones
replicated with fresh qids up to ``--examples``. Properties are computed once (timed too), then
each split runs ``--repeats`` times: the median wall time is reported with its ratio to the
issue's goal (60 s), and one extra run under ``tracemalloc`` gives the peak Python memory the
split allocated. Easiness scores ``--test`` evaluation instances against all training programs
(the issue's goal: 10,000 against 250,000 in 60 s).

Run: ``.venv/bin/python benchmarks/bench_splits.py [--examples 250000] [--unique 25000]
[--repeats 3] [--json PATH]``. Numbers are noisy on the shared 2-core machine.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import max_rss_mb, parse_args, repeat, write_json
from covr.splits.builders import few_shot, lexical_split, program_split, zero_shot
from covr.splits.hop import Pair, hop_split
from covr.splits.local_structures import EasinessModel
from covr.splits.properties import with_properties
from covr.splits.structure_splits import adversarial_splits, budget_split
from tests.support.splits_corpus import generate_corpus, replicate

GOAL_S = 60.0


def measure(fn: Callable[[], Any], repeats: int) -> dict[str, Any]:
    timings = repeat(fn, repeats)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median = timings.median_wall_s
    return {
        "median_s": round(median, 2),
        "runs_s": [round(t, 2) for t in timings.wall_s],
        "ratio_to_goal": round(median / GOAL_S, 3),
        "peak_alloc_mb": round(peak / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=250_000)
    parser.add_argument("--unique", type=int, default=25_000)
    parser.add_argument("--images", type=int, default=5_000)
    parser.add_argument("--test", type=int, default=10_000, help="easiness test instances")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    quick = {"examples": 10_000, "unique": 1_000, "images": 200, "test": 200, "repeats": 1}
    args = parse_args(parser, quick)

    start = time.perf_counter()
    base, scenes = generate_corpus(args.unique, images=args.images, seed=0)
    examples = list(replicate(base, args.examples))
    generated = time.perf_counter() - start
    start = time.perf_counter()
    for e in examples:
        with_properties(e)
    properties_s = time.perf_counter() - start
    train = sum(1 for e in examples if e["split"] == "train")
    print(
        f"{len(examples)} examples ({train} train) generated in {generated:.1f}s, "
        f"properties in {properties_s:.1f}s",
        flush=True,
    )
    results: dict[str, Any] = {
        "examples": len(examples),
        "unique_examples": args.unique,
        "train_examples": train,
        "properties_s": round(properties_s, 2),
        "splits": {},
    }
    jobs: dict[str, Callable[[], Any]] = {
        "zero-shot HAS-QUANT-COMPSCOPE&HAS-QUANT-ALL": lambda: zero_shot(
            examples, "HAS-QUANT-COMPSCOPE&HAS-QUANT-ALL"
        ),
        "few-shot HAS-COMPAR M=250": lambda: few_shot(examples, "HAS-COMPAR", 250),
        "program 20%": lambda: program_split(examples, seed=0),
        "lexical 65 pairs": lambda: lexical_split(examples, pairs=65, seed=0),
        "hop wooden,table": lambda: hop_split(examples, scenes, Pair("wooden", "table")),
        "adversarial 2-LS": lambda: adversarial_splits(examples, n=2, seed=0),
        "budget 2-LS B=1000": lambda: budget_split(examples, 1000, seed=0),
    }
    for name, job in jobs.items():
        row = measure(job, args.repeats)
        results["splits"][name] = row
        print(f"{name:45s} {row}", flush=True)

    # The case: 10,000 test instances against 250,000 training programs, so every
    # example's program is a training program here (only the timing matters, not leakage).
    train_programs = [e["program"] for e in examples]
    test_programs = [e["program"] for e in examples if e["split"] != "train"][: args.test]

    def easiness() -> None:
        model = EasinessModel(train_programs, n=2)
        for program in test_programs:
            model.easiness(program)

    row = measure(easiness, args.repeats)
    row["train_programs"] = len(train_programs)
    row["test_instances"] = len(test_programs)
    results["easiness 2-LS"] = row
    print(f"{'easiness 2-LS':45s} {row}", flush=True)
    results["peak_rss_mb"] = round(max_rss_mb(resource.RUSAGE_SELF), 1)
    print(f"peak RSS {results['peak_rss_mb']} MB")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
