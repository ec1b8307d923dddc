"""Acceptance: SIGKILL ``covr load`` in the middle of a 20,000-image load, run it again.

With ``--resume`` and without it, the final store must equal a clean load: every image of the
file present exactly once, with exactly the content the reader produces (compared as a digest:
node and relationship counts plus a checksum over every stored image).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from covr.graph import catalog, open_store
from covr.graph.embedded import EmbeddedServer
from covr.scene.model import SceneGraph
from covr_loaders import synthetic
from covr_loaders.jobs import gqa_job
from covr_loaders.jsonio import ByteCounter
from covr_loaders.readback import expected_digest, get_scene_graph, store_digest
from covr_loaders.writer import validate_only
from tests.integration.conftest import make_settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]
IMAGES = 20_000


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synth") / "train_sceneGraphs.json"
    synthetic.write("gqa", path, images=IMAGES, seed=2024)
    return path


def covr(args: list[str], data_dir: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "COVR_DATA_DIR": str(data_dir),
        "COVR_GRAPH_URI": "",
        "COVR_LOAD_BATCH_IMAGES": "500",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "covr.cli.main", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def batches_done(data_dir: Path) -> int:
    best = 0
    for path in (data_dir / "loads").glob("*.json"):
        try:
            best = max(best, int(json.loads(path.read_text())["batches_done"]))
        except (OSError, ValueError, KeyError):
            continue
    return best


@pytest.mark.timeout(600)
@pytest.mark.parametrize("resume", [True, False])
def test_sigkill_then_rerun_equals_clean_load(big_file: Path, tmp_path: Path, resume: bool) -> None:
    data_dir = tmp_path / "data"
    try:
        check_kill_and_rerun(big_file, data_dir, resume)
    finally:  # a failed run must not leave the killed loader's server behind
        with contextlib.suppress(Exception):
            EmbeddedServer(make_settings(data_dir)).stop()


def check_kill_and_rerun(big_file: Path, data_dir: Path, resume: bool) -> None:
    args = ["load", "gqa", str(big_file), "--split", "train", "--quiet"]
    first = covr(args, data_dir)
    deadline = time.monotonic() + 240
    while batches_done(data_dir) < 4 and time.monotonic() < deadline:
        assert first.poll() is None, first.communicate()
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)
    first.wait()
    done_before = batches_done(data_dir)
    assert 4 <= done_before < IMAGES // 500

    second = covr([*args, "--json"] + (["--resume"] if resume else []), data_dir)
    out, err = second.communicate(timeout=400)
    assert second.returncode == 0, err.decode()
    summary = json.loads(out)
    assert summary["images"] == IMAGES
    assert summary["skipped"] == 0
    if resume:
        assert summary["batches_resumed"] >= done_before - 1

    settings = make_settings(data_dir)
    expected = validate_only(gqa_job([big_file], "train", settings))
    with open_store(settings) as store:
        nodes = {
            r["label"]: r["count"] for r in store.read(catalog.get("admin/count_nodes_by_label"))
        }
        assert nodes["Image"] == IMAGES
        assert nodes["Object"] == expected.objects
        assert nodes["Relation"] == expected.relations
        graphs = [
            g
            for g in gqa_job([big_file], "train", settings).inputs[0].records(ByteCounter())
            if isinstance(g, SceneGraph)
        ]
        for graph in random.Random(1).sample(graphs, 20):
            assert get_scene_graph(store, graph.image_id) == graph
        # the whole store, content included, equals what a clean load of the file holds
        assert store_digest(store) == expected_digest(graphs)
