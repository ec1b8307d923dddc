"""A short run of the issue 40 soak (benchmarks/bench_soak_kill.py) on each store.

Three rounds of ``covr load`` (a real process) of GQA files with the issue's bad records (object
keys ``"1"`` and ``" 1"``, colliding ``:`` ids, ``"width": 1e19``: one kind per round) beside new
images and new versions of stored ones, ImportSceneGraphs streams with the same kinds through a
real ``covr serve``, and one SIGKILL of the store server during the second round's load. After
every round and at the end: every acknowledged image stored exactly as written, every other one
its old or new version, none that was stored missing, nothing stored that no write made. The
ten-minute runs and their numbers are in docs/security.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_soak_kill import soak

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(600)]


def test_a_short_soak_with_one_kill_loses_nothing(backend: str, tmp_path: Path) -> None:
    report = soak(
        backend=backend,
        minutes=8.0,
        max_rounds=3,
        kill_rounds=(2,),
        images=30,
        replace=10,
        bad_every=1,
        sample=100,
        work=tmp_path,
        store_back_s=180.0,  # a Neo4j restart under load took 76 s
    )
    summary = {k: v for k, v in report.items() if k not in ("round_rows", "kill_rows")}
    assert report["rounds"] == 3, summary
    assert report["kills"] == 1, summary
    assert report["bad_files"] == 3, summary
    assert report["load_problems"] >= 3, summary  # every bad record was refused, by name
    assert report["images_acknowledged"] > 0, summary
    assert report["lost"] == 0, summary
    assert report["disappeared"] == 0, summary
    assert report["stray_ids"] == [], summary
    assert report["serve_alive_after"], summary
    if report["unanswering"] and backend == "falkordb":
        # the open defect of docs/security.md ("Soak"): after a kill -9 the restarted FalkorDB
        # may hold Image label entries of nodes that do not exist; nothing is lost (asserted
        # above), but statements reading every Image fail
        pytest.xfail(f"FalkorDB store damaged by the kill: {report['unanswering']}")
    assert report["ok"], summary
