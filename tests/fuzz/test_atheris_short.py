"""The short atheris run of every test run: a few seconds of coverage-guided fuzzing of the JSON
readers (tests/fuzz/fuzz_json_entries.py), seeded with the kept corpus.

Why so short: the test budget of the whole suite is small; this run only proves the target
still runs and replays the corpus (every crashing input kept there), while a long run is a
command in tests/fuzz/README.md. The corpus is copied first: libFuzzer adds what it finds to
its first corpus directory, which must not be the repository's.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
SECONDS = 6


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed")
def test_short_atheris_run_finds_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(HERE / "corpus", corpus)
    samples = HERE.parents[1] / "loaders" / "covr_loaders" / "samples"
    for fmt, name in (("imsitu", "dev.json"), ("vg", "scene_graphs.json")):
        shutil.copy(samples / fmt / name, corpus / f"{fmt}-sample.json")
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "fuzz_json_entries.py"),
            str(corpus),
            f"-max_total_time={SECONDS}",
            "-max_len=8192",
            "-rss_limit_mb=1024",
            f"-artifact_prefix={tmp_path}/",
        ],
        capture_output=True,
        text=True,
        timeout=SECONDS + 60,
        cwd=tmp_path,
    )
    crashes = sorted(p.name for p in tmp_path.glob("crash-*"))
    assert not crashes, done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Done" in done.stderr
