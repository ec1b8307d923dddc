"""The dataset a user gets from real images, and what it costs (issue 36, Performance).

Loads a real GQA-format file (default: the 100 real GQA train images in ../shared/data/real)
as split ``val`` into an embedded store of its own (``covr db start``, ``covr load``; the server
keeps running), then runs, ``--repeats`` times and interleaved, as fresh processes with one
worker:

- ``all``: ``covr generate`` over every image, no quota (what a user ran before issue 36);
- ``all-uncapped``: the same with ``--max-image-share 1`` (no image share: what the share costs);
- ``memory``: ``covr generate --lookup memory`` over every image (the in-memory matcher with
  the word lists over the store's scene graphs: no presence model);
- ``per-template``: ``covr generate --per-template N``;
- ``baseline`` (with ``--baseline DIR``, e.g. a ``git worktree`` of an older commit): that
  checkout's ``covr generate`` over every image, its packages first on ``PYTHONPATH``, on the
  same store (the before/after ratio of one run).

Each is followed by ``covr balance --per-template N`` (not timed). Reported per mode (medians):
examples, CPU seconds of the ``covr`` process plus the graph server's, questions per
CPU-second and its ratio to the original COVR generator's 29.6 on 100 real GQA val images
(issue 16; the reference cannot run here, its figure is quoted), the balanced release's size and
the CPU it cost per kept example, and the dataset's figures: the most-shown image's share of the
examples (run and release), the top five's share of image slots, the share of texts with two
answers, near-duplicates, and per form the share of examples whose answer follows from the number
of images shown. The saving of ``--per-template``: CPU per balanced example, ``all`` over
``per-template``, for a release of the same per-form size.

Run: ``.venv/bin/python benchmarks/bench_dataset.py [--gqa FILE | --samples] [--per-template 40]
[--repeats 3] [--baseline DIR] [--work DIR] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_questions import REFERENCE_Q_PER_CPU_S, cli_run, run_covr
from benchmarks.harness import parse_args, quick_path, write_json
from covr.jsonlines import json_lines

ROOT = Path(__file__).resolve().parents[1]
REAL_GQA = ROOT.parent / "shared/data/real/gqa/train_sceneGraphs.first100.json"
COUNT_IMAGES = re.compile(r"^There (?:is|are) (exactly|at least|at most) (\d+) images? with ")
COMPARE = {"exactly": int.__eq__, "at least": int.__ge__, "at most": int.__le__}


def follows_from_image_count(example: dict[str, Any]) -> bool:
    """Read from the text: could the answer be given knowing only how many images are shown?"""
    shown = len(example["scenes"])
    text = example["utterance"]
    if text.startswith("How many images contain"):
        return bool(example["answer"] == shown)
    found = COUNT_IMAGES.match(text)
    if found is None:
        return False
    compare, number = COMPARE[found.group(1)], int(found.group(2))
    return len({compare(k, number) for k in range(shown)}) == 1


def figures(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """The dataset-level figures of issue 36 for one file."""
    n = len(examples)
    per_example = Counter(i for e in examples for i in set(e["scenes"]))
    slots = Counter(i for e in examples for i in e["scenes"])
    answers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in examples:
        answers[(e["template"], e["utterance"])].add(json.dumps(e["answer"]))
    keys = Counter(
        (e["utterance"], json.dumps(e["answer"]), frozenset(e["scenes"])) for e in examples
    )
    by_form: dict[str, list[bool]] = defaultdict(list)
    for e in examples:
        by_form[e["template"]].append(follows_from_image_count(e))
    top = per_example.most_common(1)
    return {
        "examples": n,
        "top_image": top[0][0] if top else None,
        "top_image_share": round(top[0][1] / n, 4) if top else 0.0,
        "top5_slot_share": round(
            sum(k for _, k in slots.most_common(5)) / max(1, sum(slots.values())), 4
        ),
        "two_answer_text_share": round(
            sum(len(a) >= 2 for a in answers.values()) / max(1, len(answers)), 4
        ),
        "near_duplicates": sum(k - 1 for k in keys.values()),
        "max_count_shortcut_share_per_form": round(
            max((sum(f) / len(f) for f in by_form.values()), default=0.0), 4
        ),
        "per_form": dict(sorted(Counter(e["template"] for e in examples).items())),
    }


def read(path: Path) -> list[dict[str, Any]]:
    return [line.value for line in json_lines(path)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gqa", type=Path, default=REAL_GQA)
    parser.add_argument(
        "--samples",
        action="store_true",
        help="The bundled samples (covr load samples, split val) instead of --gqa.",
    )
    parser.add_argument("--per-template", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="An older checkout to run beside.")
    parser.add_argument("--work", type=Path, default=Path("/tmp/covr-bench-dataset"))
    parser.add_argument("--json", type=Path)
    args = parse_args(parser, {"repeats": 1, "per_template": 5, "work": quick_path("dataset")})
    data = args.work / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVR_")}
    env.update(COVR_DATA_DIR=str(data), COVR_GRAPH_URI="")
    run_covr(["db", "start"], env)
    n = str(args.per_template)
    modes: dict[str, list[str]] = {
        "all": [],
        "all-uncapped": ["--max-image-share", "1"],
        "memory": ["--lookup", "memory"],
        "per-template": ["--per-template", n],
    }
    envs = dict.fromkeys(modes, env)
    if args.baseline is not None:
        modes["baseline"] = []
        old = args.baseline.resolve()
        envs["baseline"] = {**env, "PYTHONPATH": f"{old / 'server'}{os.pathsep}{old / 'loaders'}"}
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    try:
        if not (args.work / "loaded").exists():
            if args.samples:
                run_covr(["load", "samples"], env)
            else:
                run_covr(["load", "gqa", str(args.gqa), "--split", "val"], env)
            (args.work / "loaded").write_text("ok\n")
        pid = int(json.loads((data / "server.json").read_text())["pid"])
        for repeat in range(args.repeats):
            for mode, flags in modes.items():
                out = args.work / f"{mode}.jsonl"
                flags = [*flags, "--seed", str(args.seed), "--workers", "1"]
                run = cli_run(envs[mode], pid, flags, out)
                balanced = args.work / f"{mode}.balanced.jsonl"
                run_covr(["balance", str(out), str(balanced), "--per-template", n], envs[mode])
                run["balanced"] = sum(1 for _ in balanced.open())
                run["repeat"] = repeat
                runs[mode].append(run)
                print(json.dumps({"mode": mode, **run}), file=sys.stderr)
    finally:
        run_covr(["db", "stop"], env)
    source = "bundled samples" if args.samples else str(args.gqa)
    report: dict[str, Any] = {"file": source, "per_template": args.per_template}
    for mode, results in runs.items():
        cpu = statistics.median(r["client_cpu_s"] + r["server_cpu_s"] for r in results)
        examples, kept = results[0]["examples"], results[0]["balanced"]
        report[mode] = {
            "examples": examples,
            "median_cpu_s_client_plus_server": round(cpu, 2),
            "questions_per_cpu_s": round(examples / cpu, 1),
            "ratio_to_reference_29_6": round(examples / cpu / REFERENCE_Q_PER_CPU_S, 2),
            "balanced": kept,
            "survive_balance": round(kept / max(1, examples), 4),
            "cpu_ms_per_balanced_example": round(1000 * cpu / max(1, kept), 1),
            "digests": sorted({r["digest"] for r in results}),
            "run": figures(read(args.work / f"{mode}.jsonl")),
            "release": figures(read(args.work / f"{mode}.balanced.jsonl")),
        }
    if "baseline" in report:
        report["ratio_to_baseline_questions_per_cpu_s"] = round(
            report["all"]["questions_per_cpu_s"] / report["baseline"]["questions_per_cpu_s"], 2
        )
    report["per_template_saves"] = round(
        report["all"]["cpu_ms_per_balanced_example"]
        / max(1e-9, report["per-template"]["cpu_ms_per_balanced_example"]),
        2,
    )
    report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=1))
    if args.json:
        write_json(args.json, {**report, "runs": runs}, indent=1)


if __name__ == "__main__":
    main()
