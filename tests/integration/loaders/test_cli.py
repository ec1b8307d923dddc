"""`covr load`, `covr show` and `covr db stats` as a user runs them: real processes, real store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from covr_loaders.samples import SAMPLES

pytestmark = pytest.mark.integration
COVR = [sys.executable, "-m", "covr.cli.main"]


def covr(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(data_dir),
    }
    return subprocess.run(
        [*COVR, *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_load_show_and_stats(tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    loaded = covr("load", "samples", data_dir=data_dir)
    assert loaded.returncode == 0, loaded.stderr

    text = covr("show", "gqa:2370799", data_dir=data_dir)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("gqa:2370799  (gqa, split val")
    assert "relations (" in text.stdout

    record = as_json(covr("show", "imsitu:stapling_1.jpg", "--json", data_dir=data_dir))
    assert record["id"] == "imsitu:stapling_1.jpg"
    assert record["source"] == "imsitu"
    (owner,) = [o for o in record["objects"].values() if o["relations"]]
    assert sorted(m["name"] for m in owner["relations"][0]["mods"]) == ["at", "onto", "using"]

    missing = covr("show", "gqa:does-not-exist", data_dir=data_dir)
    assert missing.returncode == 2
    assert "no image" in missing.stderr
    shared = covr("show", "2370799", data_dir=data_dir)  # in GQA and VG: ambiguous
    assert shared.returncode == 2
    assert "several sources" in shared.stderr

    stats = as_json(covr("db", "stats", "--json", data_dir=data_dir))
    per = {(d["source"], d["split"]): d for d in stats["datasets"]}
    assert {k: v["images"] for k, v in per.items()} == {
        ("gqa", "val"): 8,
        ("imsitu", "dev"): 12,
        ("vg", "train"): 4,
    }
    assert stats["totals"]["images"] == 24
    assert per[("imsitu", "dev")]["relmods"] > 0


def test_load_exit_codes_for_unreadable_input(tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    empty = tmp_path / "val_sceneGraphs.json"
    empty.write_bytes(b"")
    for args, message in (
        (["gqa", str(empty)], "is empty"),
        (["gqa", str(tmp_path), "--split", "val"], "is a directory"),
        (["vg", str(tmp_path / "nope.json"), "--split", "train"], "no such file"),
        (
            [
                "imsitu",
                str(empty),
                "--space",
                str(SAMPLES / "imsitu" / "imsitu_space.json"),
            ],
            "is empty",
        ),
    ):
        done = covr("load", *args, "--quiet", data_dir=data_dir)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)

    broken = tmp_path / "train_sceneGraphs.json"
    good = json.loads((SAMPLES / "gqa" / "val_sceneGraphs.json").read_text())
    first = next(iter(good))
    good[first]["objects"][next(iter(good[first]["objects"]))]["attributes"] = "red"
    broken.write_text(json.dumps(good))
    strict = covr("load", "gqa", str(broken), "--strict", "--quiet", data_dir=data_dir)
    assert strict.returncode == 2
    assert f"record {first}" in strict.stderr
    assert ".attributes" in strict.stderr
    lenient = covr("load", "gqa", str(broken), "--json", "--quiet", data_dir=data_dir)
    summary = as_json(lenient)
    assert summary["images"] == len(good) - 1
    assert summary["skipped"] == 1
    assert summary["problems"][0]["file"] == str(broken)
    stats = as_json(covr("db", "stats", "--json", data_dir=data_dir))
    assert stats["totals"]["images"] == len(good) - 1  # strict wrote nothing; lenient the rest
