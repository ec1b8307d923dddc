"""Cold-start benchmark of the ``covr`` command (issue 20, item 1): wall time of fresh processes.

Scenarios (each a new process, as a user types it; medians over ``--repeats`` after one untimed
warm-up that prepares caches such as the WordNet copy in the data folder):

- ``help``: ``covr --help``                                        (target <= 0.3 s)
- ``score``: ``covr models score riding near --type relation``      (target <= 1 s)
- ``related-warm``: ``covr related gqa:nope`` with the store already started by ``covr db start``
  (target <= 1 s; the command must say "no image" without loading the classifiers)
- ``related-cold``: the same without a running store (the command starts a private server)
- ``serve``: ``covr serve --port 0 --no-samples`` on an empty store until it prints
  ``listening`` (target <= 3 s), then SIGTERM
- ``quickstart``: ``covr quickstart --out FILE`` in a fresh data folder (what ``make run`` runs:
  load the samples, generate their questions; no target, reported for the newcomer's first run)

Besides wall time, the CPU seconds (user + system) of the command and the children it waited
for are reported: on a loaded machine they say what the command costs, independent of how many
other processes share the cores (for ``serve`` they cover the whole run up to SIGTERM).

Variants: ``after`` is the installed package (this checkout, or ``--after TREE``); ``--before
TREE`` adds the same scenarios for another checkout (e.g. a ``git worktree`` of an older
commit), run through ``PYTHONPATH`` pointing at that tree's package folders. Every variant prints which ``covr``
module it imported, so a report can show which code ran. The machine's load average (1 min) is
printed next to every scenario: the project's machines are shared, so numbers are noisy.

Run: ``.venv/bin/python benchmarks/bench_cli.py [--repeats 5] [--before /tmp/covr-before-cli]
[--only help,score] [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import children_cpu_s, format_ratio, median, parse_args, write_json

TARGETS = {
    "help": 0.3,
    "score": 1.0,
    "related-warm": 1.0,
    "related-cold": None,
    "serve": 3.0,
    "quickstart": None,
}
COVR = [sys.executable, "-m", "covr.cli.main"]


@dataclass
class Variant:
    name: str
    env: dict[str, str]
    data_dir: Path
    module: str = ""
    results: dict[str, dict[str, Any]] = field(default_factory=dict)


def _variant(name: str, tree: Path | None, scratch: Path) -> Variant:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVR_")}
    env.pop("PYTHONPATH", None)
    if tree is not None:
        # The package folders of pyproject.toml's package-dir; covr_cypher is the folder
        # `cypher`, so it gets a link with the import name.
        links = scratch / f"{name}-packages"
        links.mkdir(parents=True, exist_ok=True)
        link = links / "covr_cypher"
        if not link.exists():
            link.symlink_to(tree / "cypher")
        env["PYTHONPATH"] = os.pathsep.join(
            str(p) for p in (tree / "server", tree / "loaders", links, tree / "clients" / "python")
        )
    data = scratch / f"{name}-data"
    data.mkdir(parents=True, exist_ok=True)
    env["COVR_DATA_DIR"] = str(data)
    variant = Variant(name, env, data)
    done = subprocess.run(
        [sys.executable, "-c", "import covr.cli.main as m; print(m.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    variant.module = done.stdout.strip()
    return variant


def _run(variant: Variant, args: list[str], timeout: float = 600) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [*COVR, *args],
        env=variant.env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - started
    lines = (done.stderr or done.stdout).strip().splitlines()
    return seconds, done.returncode, lines[-1] if lines else ""


def _fresh(variant: Variant, prefix: str) -> tuple[dict[str, str], Path]:
    """The variant's environment on a fresh data folder of its own."""
    env = dict(variant.env)
    fresh = Path(tempfile.mkdtemp(prefix=prefix, dir=variant.data_dir))
    env["COVR_DATA_DIR"] = str(fresh)
    nltk = variant.data_dir / "nltk_data"
    if nltk.is_dir():  # the prepared WordNet copy is a cache, not part of the store
        (fresh / "nltk_data").symlink_to(nltk)
    return env, fresh


def _quickstart_once(variant: Variant, timeout: float = 600) -> tuple[float, int, str]:
    """Seconds of ``covr quickstart`` on a fresh data folder (its store starts and stops)."""
    env, fresh = _fresh(variant, "quickstart-")
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [*COVR, "quickstart", "--out", str(fresh / "questions.jsonl")],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    lines = done.stderr.strip().splitlines()
    return seconds, done.returncode, lines[-1] if lines else ""


def _serve_once(variant: Variant, timeout: float = 600) -> tuple[float, int, str]:
    """Seconds until ``listening`` on an empty store of its own (a fresh data folder)."""
    env, fresh = _fresh(variant, "serve-")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*COVR, "serve", "--port", "0", "--no-samples"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    line = ""
    try:
        assert proc.stdout is not None
        deadline = started + timeout
        while time.perf_counter() < deadline:
            line = proc.stdout.readline()
            if not line or "listening" in line:
                break
        seconds = time.perf_counter() - started
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(fresh, ignore_errors=True)
    return seconds, 0 if "listening" in line else 1, line.strip()


SCENARIOS: dict[str, list[str]] = {
    "help": ["--help"],
    "score": ["models", "score", "riding", "near", "--type", "relation"],
    "related-warm": ["related", "gqa:nope"],
    "related-cold": ["related", "gqa:nope"],
}


FRESH = {"serve": _serve_once, "quickstart": _quickstart_once}
"""Scenarios that run on a fresh data folder each time, by their own function."""


def measure(variant: Variant, name: str, repeats: int) -> dict[str, Any]:
    cpu: list[float] = []

    def once() -> tuple[float, int, str]:
        before = children_cpu_s()
        result = FRESH[name](variant) if name in FRESH else _run(variant, SCENARIOS[name])
        cpu.append(children_cpu_s() - before)
        return result

    if name == "related-warm":
        _run(variant, ["db", "start"])
    try:
        once()  # warm-up: caches such as the WordNet copy, bytecode
        times, loads, codes, last = [], [], set(), ""
        for _ in range(repeats):
            loads.append(os.getloadavg()[0])
            seconds, code, last = once()
            times.append(seconds)
            codes.add(code)
    finally:
        if name == "related-warm":
            _run(variant, ["db", "stop"])
    return {
        "median_s": round(median(times), 3),
        "cpu_s": round(median(cpu[1:]), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "load_1min": round(statistics.mean(loads), 2),
        "exit_codes": sorted(codes),
        "last_line": last[:120],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--before-repeats", type=int, help="repeats of the before variant (default --repeats)"
    )
    parser.add_argument("--before", type=Path, help="another checkout to compare with")
    parser.add_argument(
        "--after", type=Path, help="run 'after' from this checkout instead of the installed one"
    )
    parser.add_argument("--only", default="", help="comma-separated scenario names")
    parser.add_argument("--json", type=Path, help="also write the results here")
    # quickstart (a minute: load the samples, generate their questions) is left out
    args = parse_args(parser, {"repeats": 1, "only": "help,score,related-warm,related-cold,serve"})
    # SIGTERM unwinds like Ctrl-C, so `finally` stops a store started by `db start`.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    names = [n for n in (args.only.split(",") if args.only else TARGETS) if n]
    scratch = Path(tempfile.mkdtemp(prefix="covr-bench-cli-"))
    after = args.after.resolve() if args.after is not None else None
    variants = [_variant("after", after, scratch)]
    if args.before is not None:
        variants.insert(0, _variant("before", args.before.resolve(), scratch))
    try:
        for variant in variants:
            print(f"# {variant.name}: {variant.module}", flush=True)
            repeats = args.repeats
            if variant.name == "before" and args.before_repeats is not None:
                repeats = args.before_repeats
            for name in names:
                variant.results[name] = measure(variant, name, repeats)
                print(f"  {name:13} {json.dumps(variant.results[name])}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("\n| scenario | target | " + " | ".join(v.name for v in variants) + " | ratio |")
    print("|---|---|" + "---|" * len(variants) + "---|")
    for name in names:
        cells = [
            f"{v.results[name]['median_s']:.2f} s, {v.results[name]['cpu_s']:.2f} s CPU "
            f"(load {v.results[name]['load_1min']})"
            for v in variants
        ]
        ratio = ""
        if len(variants) == 2 and variants[1].results[name]["median_s"] > 0:
            before, after = (v.results[name]["median_s"] for v in variants)
            ratio = f"{format_ratio(before / after, digits=1)} faster"
        target = TARGETS.get(name)
        limit = "-" if target is None else f"<= {target} s"
        print(f"| {name} | {limit} | {' | '.join(cells)} | {ratio} |")
    if args.json is not None:
        write_json(args.json, {v.name: {"module": v.module, **v.results} for v in variants})


if __name__ == "__main__":
    main()
