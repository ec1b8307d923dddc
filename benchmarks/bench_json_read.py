"""Reading a dataset file's records: the bounded reader (covr_loaders.json_entries) against
ijson's ``kvitems`` (what the loaders used before issue 21), in the same run.

    .venv/bin/python benchmarks/bench_json_read.py [--images 20000] [--repeats 5]

Prints JSON: per reader the median seconds and MB/s over ``--repeats`` passes, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import ijson  # type: ignore[import-untyped]

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import median, parse_args
from covr_loaders import synthetic
from covr_loaders.jsonio import ByteCounter, iter_entries


def _bounded(path: Path) -> int:
    return sum(1 for _ in iter_entries(path, "object", ByteCounter()))


def _ijson(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in ijson.kvitems(handle, "", use_float=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parse_args(parser, {"images": 500, "repeats": 1})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train_sceneGraphs.json"
        synthetic.write("gqa", path, images=args.images, seed=1)
        megabytes = path.stat().st_size / 1e6
        times: dict[str, list[float]] = {"bounded": [], "ijson": []}
        for _ in range(args.repeats):  # interleaved, so machine noise hits both alike
            for name, read in (("bounded", _bounded), ("ijson", _ijson)):
                started = time.perf_counter()
                count = read(path)
                times[name].append(time.perf_counter() - started)
                assert count == args.images
        medians = {k: median(v) for k, v in times.items()}
        print(
            json.dumps(
                {
                    "file_mb": round(megabytes, 1),
                    "images": args.images,
                    "load_average": os.getloadavg()[0],
                    **{
                        name: {"median_s": round(m, 3), "mb_per_s": round(megabytes / m, 1)}
                        for name, m in medians.items()
                    },
                    "bounded_over_ijson": round(medians["bounded"] / medians["ijson"], 2),
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
