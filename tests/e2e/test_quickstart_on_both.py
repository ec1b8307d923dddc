"""`covr quickstart` on the managed Neo4j gives the same output as on the embedded default.

The acceptance line of the Neo4j issue, run as a user runs it: two real processes, one per
backend, each starting and stopping its own server; the stored counts, the generation report and
the generated examples (byte for byte) must agree. Only the backend's name and location differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

COVR = [sys.executable, "-m", "covr.cli.main"]
NEO4J_ENV = {"COVR_NEO4J_BOLT_PORT": "0", "COVR_NEO4J_HEAP": "768m", "COVR_NEO4J_PAGECACHE": "256m"}


def quickstart(data_dir: Path, backend: str) -> tuple[dict[str, Any], bytes]:
    data_dir.mkdir(parents=True)
    out = data_dir / "q.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        **NEO4J_ENV,
        "COVR_DATA_DIR": str(data_dir),
        "COVR_GRAPH_BACKEND": backend,
    }
    done = subprocess.run(
        [*COVR, "quickstart", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)  # stdout is the JSON only (messages go to stderr)
    return report, out.read_bytes()


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_quickstart_output_is_the_same_on_neo4j(tmp_path: Path) -> None:
    falkor_report, falkor_examples = quickstart(tmp_path / "falkordb", "falkordb")
    neo4j_report, neo4j_examples = quickstart(tmp_path / "neo4j", "neo4j")
    assert falkor_report["store"].pop("backend") == "embedded"
    assert neo4j_report["store"].pop("backend") == "managed-neo4j"
    for report, name in ((falkor_report, "falkordb"), (neo4j_report, "neo4j")):
        assert report["questions"].pop("file") == str(tmp_path / name / "q.jsonl")
    assert neo4j_report == falkor_report
    assert neo4j_report["store"]["totals"]["images"] == 24
    assert neo4j_examples == falkor_examples
    assert len(neo4j_examples.splitlines()) == neo4j_report["questions"]["examples"] > 100
