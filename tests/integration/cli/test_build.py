"""``covr build`` (issue 39 item 1) as a user runs it: real ``covr`` processes on the real GQA and
VG samples (``../shared/data/real``) and a real embedded store, no mocks.

- every stage's output is there and the release's files load without warnings: the Parquet
  files with pyarrow, checked against the dataset card's YAML, and the whole folder with the
  ``datasets`` library (a development dependency, offline), and the released JSONL with the
  released format's own checker;
- a build killed (SIGKILL) during generation, then run again, reuses the completed stages and
  gives the same release, byte for byte, as a build never interrupted;
- bad input (a missing file, ``--examples 0``, an OUTDIR that is a file) exits 2 with one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from covr.questions.covr_format import check_released
from tests.integration.cli.test_bad_input_exit_2 import refused
from tests.integration.cli.test_db_commands import COVR, covr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

REAL = Path(__file__).resolve().parents[3].parent / "shared/data/real"
GQA_FILE = REAL / "gqa/train_sceneGraphs.first100.json"
VG_FILE = REAL / "vg/scene_graphs.first100.json"
STAGES = ("load", "generate-train", "generate-val", "balance", "splits", "export", "stats")


def build_args(out: Path, *extra: str) -> list[str]:
    """A small build: GQA train and VG (as the evaluation split), 12 source images each."""
    return [
        "build", str(out), "--gqa", str(GQA_FILE), "--vg", str(VG_FILE), "--vg-split", "val",
        "--examples", "40", "--images", "12", "--seed", "1", "--quiet", *extra,
    ]  # fmt: skip


def env_for(data_dir: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(data_dir),
    }


def release_files(out: Path) -> dict[str, bytes]:
    """What a release is: the examples, the splits, the exported files and the generated ones."""
    found = {}
    for part in ("examples.jsonl", "splits", "release", "generated"):
        root = out / part
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            found[path.relative_to(out).as_posix()] = path.read_bytes()
    return found


@pytest.fixture(scope="module")
def samples() -> None:
    for path in (GQA_FILE, VG_FILE):
        if not path.is_file():
            pytest.skip(f"the real sample {path} is absent (../shared/data/real)")


@pytest.fixture(scope="module")
def uninterrupted(samples: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("build") / "release"
    data_dir = tmp_path_factory.mktemp("store")
    done = covr(*build_args(out, "--json"), data_dir=data_dir, timeout=900)
    assert done.returncode == 0, done.stderr
    return {"out": out, "summary": json.loads(done.stdout), "stderr": done.stderr}


def test_every_stage_leaves_its_output_and_state(uninterrupted: dict[str, Any]) -> None:
    out, summary = uninterrupted["out"], uninterrupted["summary"]
    for stage in STAGES:
        state = json.loads((out / ".build/state" / f"{stage}.json").read_text())
        assert state["fingerprint"], stage
        assert state["wall_s"] >= 0, stage
    for path in (
        "generated/train.jsonl", "generated/val.jsonl.dropped.json", "examples.jsonl",
        "splits/index.json", "release/covr/train.jsonl", "release/covr/val.jsonl",
        "release/hub/README.md", "stats/stats.json", "stats/stats.txt",
    ):  # fmt: skip
        assert (out / path).is_file(), path
    assert sorted(p.name for p in (out / "stats/plots").glob("*.png"))
    assert [s["stage"] for s in summary["stages"]] == [s.replace("-", ":") for s in STAGES]
    assert all(s["status"] == "ran" and s["peak_rss_mb"] > 0 for s in summary["stages"])
    examples = [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]
    assert summary["examples"] == len(examples) > 0
    assert {e["split"] for e in examples} == {"train", "val"}
    assert all(e["properties"] for e in examples)  # covr properties ran
    index = json.loads((out / "splits/index.json").read_text())
    assert any(r["kind"] == "program" for r in index["splits"]), index
    for row in index["splits"]:
        manifest = json.loads((out / row["path"] / "manifest.json").read_text())
        assert manifest["inputs"]["examples"] == "examples.jsonl"
    made, target = summary["examples"], summary["target"]
    assert (summary["note"] is None) == (made >= target), summary
    assert "[2/6] generate val: done in" in uninterrupted["stderr"]  # progress per stage


def test_the_release_loads_without_warnings(
    uninterrupted: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Parquet files agree with the card a hub loader reads, and the ``datasets`` library
    (a development dependency) loads the folder as a user would, offline, without a warning;
    the released JSONL passes the released format's checks."""
    import pyarrow.parquet as pq

    # read when datasets is imported: no network, and a cache of this test's own
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))

    hub = uninterrupted["out"] / "release/hub"
    card = (hub / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    splits = {s["name"]: s["num_examples"] for s in header["dataset_info"]["splits"]}
    features = [f["name"] for f in header["dataset_info"]["features"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, count in splits.items():
            files = sorted((hub / "data").glob(f"{name}-*.parquet"))
            tables = [pq.read_table(f) for f in files]
            assert sum(t.num_rows for t in tables) == count
            assert all(t.schema.names == features for t in tables)
        import datasets  # type: ignore[import-untyped, unused-ignore]

        loaded = datasets.load_dataset(str(hub))
        assert {k: len(v) for k, v in loaded.items()} == splits
        for split in loaded.values():
            assert split.column_names == features
    released = 0
    for split in splits:
        for line in (uninterrupted["out"] / f"release/covr/{split}.jsonl").read_text().splitlines():
            assert check_released(json.loads(line)) is None
            released += 1
    assert released == uninterrupted["summary"]["examples"]


def _kill_during_generation(out: Path, data_dir: Path, log: Path) -> None:
    """Start a build and SIGKILL it (with the processes it started) once the training split's
    generation is done and the evaluation split's is under way."""
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [*COVR, *build_args(out)],
            env=env_for(data_dir),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    state = out / ".build/state"
    deadline = time.monotonic() + 600
    try:
        while not (state / "generate-train.json").exists():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        assert "[2/6] generate val ..." in log.read_text() or _wait_for(log, "generate val")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the build's workers and store server
            os.killpg(process.pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert not (state / "generate-val.json").exists(), "the kill came after the generation"
    assert not (state / "balance.json").exists()


def _wait_for(log: Path, text: str, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while text not in log.read_text():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_killed_during_generation_then_rerun_gives_the_same_release(
    uninterrupted: dict[str, Any], tmp_path: Path
) -> None:
    out, data_dir, log = tmp_path / "release", tmp_path / "store", tmp_path / "stderr.txt"
    data_dir.mkdir()
    _kill_during_generation(out, data_dir, log)
    done = subprocess.run(
        [*COVR, *build_args(out, "--json")],
        env=env_for(data_dir),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status = {s["stage"]: s["status"] for s in json.loads(done.stdout)["stages"]}
    assert status["load"] == "reused", status
    assert status["generate:train"] == "reused", status
    assert status["generate:val"] == "ran", status
    assert status["balance"] == "ran", status
    assert "generate train: done in an earlier run, reused" in done.stderr
    expected = release_files(uninterrupted["out"])
    assert release_files(out).keys() == expected.keys()
    for name, data in expected.items():
        assert release_files(out)[name] == data, name
    again = subprocess.run(
        [*COVR, *build_args(out, "--json")],
        env=env_for(data_dir),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert {s["status"] for s in json.loads(again.stdout)["stages"]} == {"reused"}


def test_a_changed_option_redoes_the_stages_after_it(
    uninterrupted: dict[str, Any], tmp_path: Path
) -> None:
    """A different --seed changes generation's fingerprint: load is reused, the rest is redone."""
    out = tmp_path / "release"
    data_dir = tmp_path / "store"
    first = covr(*build_args(out, "--json"), data_dir=data_dir, timeout=900)
    assert first.returncode == 0, first.stderr
    args = build_args(out, "--json")
    args[args.index("--seed") + 1] = "2"
    second = covr(*args, data_dir=data_dir, timeout=900)
    assert second.returncode == 0, second.stderr
    status = {s["stage"]: s["status"] for s in json.loads(second.stdout)["stages"]}
    assert status["load"] == "reused"
    assert {v for k, v in status.items() if k != "load"} == {"ran"}, status


@pytest.mark.parametrize("case", ["missing file", "examples 0", "outdir is a file", "bad split"])
def test_bad_input_exits_2_with_one_line(samples: None, tmp_path: Path, case: str) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    out = tmp_path / "out"
    args, words = {
        "missing file": ([*build_args(out)[:2], "--gqa", str(tmp_path / "no.json"), "--examples", "5"], ("--gqa", "no such file")),
        "examples 0": ([*build_args(out)[:6], "--examples", "0"], ("--examples", ">= 1")),
        "outdir is a file": (["build", str(a_file), "--gqa", str(GQA_FILE), "--examples", "5"], ("OUTDIR", "is a file")),
        "bad split": (["build", str(out), "--vg", str(VG_FILE), "--vg-split", "Bad Split", "--examples", "5"], ("--vg-split", "lower-case")),
    }[case]  # fmt: skip
    done = covr(*args, data_dir=tmp_path / "store")
    refused(done, *words)
    assert not out.exists() or not any(out.iterdir())
    assert a_file.read_text() == "x"


def test_help_lists_build() -> None:
    done = subprocess.run([sys.executable, "-m", "covr.cli.main", "--help"], capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0
    assert "build" in done.stdout
