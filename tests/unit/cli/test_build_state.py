"""``covr build``'s bookkeeping (:mod:`covr.cli.build_state`) and quota allocation: what makes a
stage reusable, what invalidates it, and that outputs appear whole or not at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from covr.cli.build_stages import allocate, split_order
from covr.cli.build_state import BuildState, StageRecord, atomic_dir, fingerprint, measured


def test_fingerprint_is_the_same_in_every_process() -> None:
    """Sets are sorted: their order changes with the hash seed, a fingerprint must not."""
    code = (
        "from covr.cli.build_state import fingerprint; "
        "print(fingerprint({'a': frozenset({'x', 'y', 'z', 'w'})}, {('p', 'q'), ('r', 's')}))"
    )
    prints = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(prints) == 1
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})


def test_a_stage_is_done_only_with_its_fingerprint_and_unchanged_outputs(tmp_path: Path) -> None:
    state = BuildState(tmp_path)
    (tmp_path / "out.jsonl").write_text("one\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.txt").write_text("a")
    outputs = state.outputs(["out.jsonl", "dir"])
    state.save(StageRecord("balance", "fp1", outputs, details={"n": 1}))
    record = state.done("balance", "fp1")
    assert record is not None
    assert record.details == {"n": 1}
    assert state.done("balance", "fp2") is None  # an option or input changed
    (tmp_path / "dir" / "a.txt").write_text("b")
    assert state.done("balance", "fp1") is None  # an output changed since
    (tmp_path / "dir" / "a.txt").write_text("a")
    assert state.done("balance", "fp1") is not None
    (tmp_path / "out.jsonl").unlink()
    assert state.done("balance", "fp1") is None  # an output is gone
    state.path("balance").write_text("{not json")
    assert state.done("balance", "fp1") is None


def test_a_store_output_is_checked_against_the_store(tmp_path: Path) -> None:
    state = BuildState(tmp_path)
    state.save(StageRecord("load", "fp", {"store:": "digest-1"}))
    assert state.done("load", "fp", "digest-1") is not None
    assert state.done("load", "fp", "digest-2") is None


def test_atomic_dir_replaces_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "release"
    with atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("first")
    assert (target / "a.txt").read_text() == "first"

    def interrupted() -> None:
        with atomic_dir(target) as tmp:
            (tmp / "a.txt").write_text("second")
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        interrupted()
    assert (target / "a.txt").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]
    with atomic_dir(target) as tmp:
        (tmp / "b.txt").write_text("third")
    assert sorted(p.name for p in target.iterdir()) == ["b.txt"]


def test_measured_reports_wall_time_and_peak_memory() -> None:
    with measured() as cost:
        block = bytearray(50 * 1024 * 1024)
        block[::4096] = b"x" * len(block[::4096])
    assert cost.wall_s >= 0
    assert cost.peak_rss_mb is not None
    assert cost.peak_rss_mb >= 50


def test_allocate_shares_the_target_by_images_then_forms() -> None:
    assert allocate(190, 19, {"train": 100, "val": 100}) == {"train": 5, "val": 5}
    assert allocate(1000, 19, {"train": 900, "val": 100}) == {"train": 48, "val": 6}
    assert allocate(10, 19, {"train": 1, "val": 1}) == {"train": 2, "val": 2}  # one text each
    assert split_order(["val", "test", "train"]) == ["train", "test", "val"]
