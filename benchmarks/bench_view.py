"""View benchmark (issue 18): drawing examples, and the browser on a 250,000-example file.

1. **Render**: every five-image example generated for the bundled GQA samples (the question engine
   in memory, ``tests/support/view_data.py``) drawn as one SVG document ``--repeats`` times each,
   from scratch (no cache between drawings). Goal: median ≤ 50 ms. One PNG rasterization is timed
   too.
2. **Browser**: real generated examples replicated with fresh qids into a JSONL file of
   ``--examples`` lines (250,000 by default), indexed once (timed: the one-off cost), then
   ``covr view FILE`` is started as its own process (the real CLI; the store it opens lazily is not
   touched by list pages); timed: from ``Popen`` until it listens (Python start-up, the CLI's
   imports, opening the index), and from listening to the first page's HTTP response (the
   viewer's own start: goal ≤ 1 s), and both together.
   Then filter pages (template, paper template, answer, image, full-text, combined, a far page)
   are each requested cold and twice more; goal ≤ 1 s each.

Run: ``.venv/bin/python benchmarks/bench_view.py [--examples 250000] [--repeats 20] [--json PATH]``.
Numbers are noisy on the shared 2-core machine; the process CPU time is printed beside wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import median, parse_args, write_json
from covr.view.dataset import Dataset
from covr.view.example_svg import example_svg
from covr.view.raster import svg_to_png
from tests.support.view_data import sample_examples, sample_scenes

RENDER_GOAL_MS = 50.0
PAGE_GOAL_S = 1.0


def bench_render(repeats: int) -> dict[str, Any]:
    scenes = {s.image_id: s for s in sample_scenes()}
    five = [e for e in sample_examples() if len(e["scenes"]) == 5]
    assert five, "no five-image example generated"
    wall: list[float] = []
    cpu: list[float] = []
    for example in five:
        example_svg(example, scenes)  # imports and first-call set-up are not part of a drawing
    for _ in range(repeats):
        for example in five:
            w0, c0 = time.perf_counter(), time.process_time()
            svg = example_svg(example, scenes)
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
    start = time.perf_counter()
    png = svg_to_png(svg)
    png_ms = (time.perf_counter() - start) * 1000
    median_ms = median(wall) * 1000
    return {
        "examples_with_5_images": len(five),
        "drawings": len(wall),
        "median_ms": round(median_ms, 1),
        "p90_ms": round(sorted(wall)[int(0.9 * len(wall))] * 1000, 1),
        "median_cpu_ms": round(median(cpu) * 1000, 1),
        "svg_kb": round(len(svg) / 1000, 1),
        "png_ms": round(png_ms, 1),
        "png_kb": round(len(png) / 1000, 1),
        "goal_ms": RENDER_GOAL_MS,
        "ok": median_ms <= RENDER_GOAL_MS,
    }


def write_big_file(path: Path, count: int) -> dict[str, Any]:
    """``count`` examples: the generated ones over and over, each with a fresh qid."""
    base = [json.dumps(e, separators=(",", ":")) for e in sample_examples()]
    qids = [json.loads(line)["qid"] for line in base]
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            j = i % len(base)
            line = base[j].replace(f'"qid":"{qids[j]}"', f'"qid":"{qids[j]}-{i // len(base)}"', 1)
            handle.write(line + "\n")
    return {"examples": count, "file_mb": round(path.stat().st_size / 1e6, 1)}


def _get(url: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        body: bytes = response.read()
        assert response.status == 200
    return time.perf_counter() - start, body


def bench_browser(path: Path, data_dir: Path) -> dict[str, Any]:
    start = time.perf_counter()
    dataset = Dataset(path, rebuild=True)
    index_s = time.perf_counter() - start
    examples = sample_examples()
    first = examples[0]
    template = first["template"]
    image = first["scenes"][0]
    word = re.findall(r"[a-z]+", first["utterance"].lower())[-1]
    dataset.close()
    log = path.with_name("view.log")
    env = {**os.environ, "COVR_DATA_DIR": str(data_dir), "COVR_VIEW_PORT": "0"}
    with log.open("w") as handle:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "covr.cli.main", "view", str(path), "--no-browser"],
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            url = ""
            while not url:
                found = re.search(r"(http://127\.0\.0\.1:\d+/)", log.read_text())
                if found:
                    url = found.group(1)
                elif proc.poll() is not None:
                    raise RuntimeError(log.read_text())
                else:
                    time.sleep(0.005)
            listening_s = time.perf_counter() - started
            served_s, body = _get(url)
            first_page_s = time.perf_counter() - started
            assert b"example-row" in body
            queries = {
                "template": {"template": template},
                "paper_template": {"paper_template": first["paper_template"]},
                "answer": {"answer": "true"},
                "image": {"image": image},
                "text": {"text": word},
                "template+text": {"template": template, "text": word},
                "page 5000": {"offset": "125000"},
            }
            filters: dict[str, Any] = {}
            for name, query in queries.items():
                times = [_get(url + "?" + urlencode(query))[0] for _ in range(3)]
                filters[name] = {
                    "cold_s": round(times[0], 3),
                    "warm_median_s": round(median(times[1:]), 3),
                    "ok": max(times) <= PAGE_GOAL_S,
                }
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return {
        "index_build_s": round(index_s, 2),
        "index_mb": round(dataset.index_path.stat().st_size / 1e6, 1),
        "process_start_to_listening_s": round(listening_s, 3),
        "first_page_after_listening_s": round(served_s, 3),
        "process_start_to_first_page_s": round(first_page_s, 3),
        "first_page_ok": served_s <= PAGE_GOAL_S,
        "filters": filters,
        "goal_s": PAGE_GOAL_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=250_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parse_args(parser, {"examples": 2_000, "repeats": 1})
    report: dict[str, Any] = {"render": bench_render(args.repeats)}
    print(json.dumps({"render": report["render"]}, indent=2), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
        big = Path(tmp) / "big.jsonl"
        report["file"] = write_big_file(big, args.examples)
        report["browser"] = bench_browser(big, Path(tmp) / "data")
    print(json.dumps({k: v for k, v in report.items() if k != "render"}, indent=2))
    if args.json:
        write_json(args.json, report)


if __name__ == "__main__":
    main()
