"""`covr subgraphs` and `covr related` as a user runs them: real processes, real embedded store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

COVR = [sys.executable, "-m", "covr.cli.main"]


def covr(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVR_")}
    env["COVR_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [*COVR, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One background server for the module (`covr db start`), with the bundled samples."""
    path = tmp_path_factory.mktemp("relcli")
    started = covr("db", "start", data_dir=path)
    assert started.returncode == 0, started.stderr
    try:
        done = covr("load", "samples", "--json", data_dir=path)
        assert done.returncode == 0, done.stderr
        yield path
    finally:
        covr("db", "stop", data_dir=path)


def test_subgraphs_lists_keys_and_texts(data_dir: Path) -> None:
    done = covr("subgraphs", "gqa:2370799", "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["subgraphs"]
    keys = {s["key"] for s in found}
    assert "building[brick]" in keys
    assert {s["shape"] for s in found} >= {"single", "hop"}
    brick = next(s for s in found if s["key"] == "building[brick]")
    assert brick["text"] == "a brick building"
    text = covr("subgraphs", "gqa:2370799", data_dir=data_dir)
    assert "building[brick]  —  a brick building" in text.stdout


def test_related_for_one_subgraph(data_dir: Path) -> None:
    args = ["related", "gqa:2370799", "--subgraph", "building[brick]", "--json", "--seed", "3"]
    done = covr(*args, data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)["results"]
    assert result["query"]["key"] == "building[brick]"
    assert result["positives"][0] == "gqa:2370799"
    assert result["distractors"]
    for d in result["distractors"]:
        assert d["signature"] in {"object@0", "attribute@0", "object@0+attribute@0"}
        assert d["distance"] == d["signature"].count("+") + 1
        assert d["subgraph"] != "building[brick]"
    again = covr(*args, data_dir=data_dir)
    assert again.stdout == done.stdout  # same seed, same data: same result
    one = covr(*args[:-2], "--max-distance", "1", "--per-signature", "1", data_dir=data_dir)
    [small] = json.loads(one.stdout)["results"]
    assert all(d["distance"] == 1 for d in small["distractors"])
    assert len({d["signature"] for d in small["distractors"]}) == len(small["distractors"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["related", "gqa:0"], "no image 'gqa:0'"),
        (["subgraphs", "nope"], "no image 'nope'"),
        (["related", "gqa:2370799", "--subgraph", "building-(on->x"], "key-syntax"),
        (["related", "gqa:2370799", "--subgraph", "unicorn"], "not a subgraph of image"),
        (["related", "gqa:2370799", "--max-distance", "3"], "max-distance"),
    ],
)
def test_bad_input_exits_2(data_dir: Path, args: list[str], message: str) -> None:
    done = covr(*args, data_dir=data_dir)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
