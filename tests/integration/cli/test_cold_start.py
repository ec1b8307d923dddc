"""Cold start of the ``covr`` command (issue 20, item 1), in real processes: what each command
imports, and that an unknown image fails before the classifiers are loaded. Timings are the
benchmark's job (benchmarks/bench_cli.py); these tests check the causes, which do not depend on
the machine's load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

HEAVY = (
    "nltk",
    "numpy",
    "onnxruntime",
    "grpc",
    "falkordb",
    "redis",
    "neo4j",
    "sklearn",
    "pandas",
    "pyarrow",
    "matplotlib",
    "rich",
)
"""Not listed: pydantic, which this Typer release itself imports to coerce any sub-command's
parameters (``typer._adapters``); `covr --help` alone runs without it."""

PROBE = """
import json, sys
from covr.cli.main import app
try:
    app(sys.argv[1:], prog_name="covr")
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
print("\\nIMPORTED " + json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def probe(args: list[str], data_dir: Path) -> dict[str, object]:
    """Run the CLI in a fresh interpreter; report the exit code and heavy modules imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVR_")}
    env["COVR_DATA_DIR"] = str(data_dir)
    code = PROBE.replace("json.loads(HEAVY)", repr([*HEAVY, "pydantic"]))
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("IMPORTED "))
    result: dict[str, object] = json.loads(line.removeprefix("IMPORTED "))
    result["stderr"] = done.stderr
    return result


@pytest.mark.parametrize(
    "args",
    [["--help"], ["models", "--help"], ["related", "--help"], ["split", "zero-shot", "--help"]],
)
def test_help_imports_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    result = probe(args, tmp_path)
    assert result["code"] == 0
    heavy = result["heavy"]
    assert isinstance(heavy, list)
    assert set(heavy) <= {"pydantic"}
    if args == ["--help"]:
        assert heavy == []


def test_models_score_reads_the_lexical_table_not_wordnet(tmp_path: Path) -> None:
    result = probe(["models", "score", "riding", "near", "--type", "relation"], tmp_path)
    assert result["code"] == 0, result["stderr"]
    heavy = result["heavy"]
    assert isinstance(heavy, list)
    assert "nltk" not in heavy
    assert not {"grpc", "falkordb", "neo4j", "sklearn", "pyarrow", "matplotlib"} & set(heavy)
    assert not (tmp_path / "nltk_data").exists()  # WordNet was not even prepared


def test_related_on_a_missing_image_fails_before_loading_models(tmp_path: Path) -> None:
    result = probe(["related", "gqa:nope"], tmp_path)
    assert result["code"] == 2, result["stderr"]
    assert "no image 'gqa:nope'" in str(result["stderr"])
    heavy = result["heavy"]
    assert isinstance(heavy, list)
    assert "onnxruntime" not in heavy
    assert "nltk" not in heavy
