"""Model serving benchmark (issue 5): exclusivity pairs/s and presence items/s via onnxruntime.

Exclusivity, on ``--pairs`` distinct seeded ``(type, x, x')`` pairs drawn from the gold set's
and the lexicon's vocabulary (medians over ``--repeats``):

- ``cold pairs``: ``m_batch`` with the per-pair score cache emptied before each repeat but the
  per-term features already cached (the steady state of a running service meeting new pairs):
  validation + featurization + one ONNX run per 8,192 rows;
- ``onnx only``: onnxruntime on the precomputed feature matrix;
- ``cached``: ``m_batch`` again on pairs it has scored (the per-pair cache);
- ``baseline``: the resource-rule default (``covr.related.exclusivity.ResourceExclusivity``)
  on the same pairs with its cache emptied, reported as a ratio against ``cold pairs``;
- ``first call``: the very first ``m_batch`` of a fresh model, term features included.

Presence: ``score_batch`` on ``--items`` (simple subgraph, synthetic scene graph) items.
The machine is shared by several engineers: numbers are noisy; the load average is printed.

Run: ``.venv/bin/python benchmarks/bench_models.py [--pairs 50000] [--repeats 5] [--items 5000]``
(set ``COVR_DATA_DIR`` to a folder of yours: WordNet is copied there on first use).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import parse_args, repeat, write_json
from covr.models import load_exclusivity_model, load_presence_model
from covr.models.exclusivity import OnnxExclusivity
from covr.models.gold import load_gold
from covr.models.presence import is_simple
from covr.related.exclusivity import ResourceExclusivity
from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.settings import get_settings
from covr_loaders import synthetic


def vocabulary(model: OnnxExclusivity) -> dict[str, list[str]]:
    lex = model.featurizer.lexicon
    words: dict[str, set[str]] = {
        "object": set(lex.noun_vocab),
        "attribute": set(lex.attr_vocab),
        "relation": set(lex.rel_vocab),
    }
    for g in load_gold():
        words[g.kind].update((g.x, g.x_prime))
    return {k: sorted(v) for k, v in words.items()}


def draw_pairs(vocab: dict[str, list[str]], count: int, seed: int) -> list[tuple[Any, str, str]]:
    rng = random.Random(seed)
    kinds = sorted(vocab)
    out: set[tuple[str, str, str]] = set()
    while len(out) < count:
        kind = rng.choice(kinds)
        x, y = rng.sample(vocab[kind], 2)
        out.add((kind, x, y))
    return sorted(out)


CPU_TIMES: dict[str, float] = {}


def timed(fn: Any, repeats: int, before: Any = None, name: str = "") -> float:
    """Median wall seconds; the median CPU seconds of this process go to ``CPU_TIMES[name]``
    (on a shared machine wall time also counts waiting for a core; CPU time does not)."""
    timings = repeat(fn, repeats, before)
    if name:
        CPU_TIMES[name] = timings.median_cpu_s
    return timings.median_wall_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--items", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None)
    args = parse_args(parser, {"pairs": 1_000, "repeats": 1, "items": 200})
    report: dict[str, Any] = {"load_average_1m": os.getloadavg()[0]}

    start = time.perf_counter()
    model = load_exclusivity_model(settings=get_settings().models)
    report["exclusivity_load_s"] = round(time.perf_counter() - start, 2)
    pairs = draw_pairs(vocabulary(model), args.pairs, args.seed)
    n = len(pairs)
    start = time.perf_counter()
    model.m_batch(pairs)
    first = time.perf_counter() - start
    cold = timed(lambda: model.m_batch(pairs), args.repeats, model.clear_cache, "cold")
    rows = model.featurizer.rows(
        [(("relation" if k == "relmod" else k), x, y) for k, x, y in pairs]
    )
    onnx_only = timed(lambda: model.predict_rows(rows), args.repeats)
    model.m_batch(pairs)
    cached = timed(lambda: model.m_batch(pairs), args.repeats, name="cached")
    holder: dict[str, ResourceExclusivity] = {}

    def fresh_baseline() -> None:
        holder["m"] = ResourceExclusivity()

    base = timed(lambda: holder["m"].m_batch(pairs), args.repeats, fresh_baseline, "base")
    report["exclusivity"] = {
        "pairs": n,
        "first_call_pairs_per_s": round(n / first),
        "cold_pairs_per_s": round(n / cold),
        "onnx_only_pairs_per_s": round(n / onnx_only),
        "cached_pairs_per_s": round(n / cached),
        "baseline_resource_rules_pairs_per_s": round(n / base),
        "cold_vs_baseline_ratio": round(base / cold, 3),
        "cold_pairs_per_cpu_s": round(n / CPU_TIMES["cold"]),
        "cached_pairs_per_cpu_s": round(n / CPU_TIMES["cached"]),
        "baseline_pairs_per_cpu_s": round(n / CPU_TIMES["base"]),
        "model_version": model.version,
    }

    presence = load_presence_model(settings=get_settings().models)
    scenes = list(synthetic.generate(300, seed=args.seed))
    options = EnumerationOptions(max_relations=1, max_subgraphs=50, include_relmods=False)
    items: list[Any] = []
    rng = random.Random(args.seed)
    for scene in scenes:
        simple = [g for g in enumerate_subgraphs(scene, options) if is_simple(g)]
        for g in rng.sample(simple, min(len(simple), 20)):
            items.append((g, rng.choice(scenes), None))
    items = items[: args.items]
    presence_s = timed(lambda: presence.score_batch(items), args.repeats, name="presence")
    report["presence"] = {
        "items": len(items),
        "items_per_s": round(len(items) / presence_s),
        "items_per_cpu_s": round(len(items) / CPU_TIMES["presence"]),
        "model_version": presence.version,
    }
    print(json.dumps(report, indent=2, sort_keys=True))
    if args.json_path:
        write_json(args.json_path, report, sort_keys=True)


if __name__ == "__main__":
    main()
