"""Acceptance: SIGKILL ``covr load`` in the middle of a 20,000-image load, run it again.

With ``--resume`` and without it, the final store must equal a clean load: every image of the
file present exactly once, with exactly the content the reader produces (compared as a digest:
node and relationship counts plus a checksum over every stored image).

Cost. The check reads the whole store back, and that read was two thirds of the test's time
(113 s of ~170 s per run with the synthetic generator's full images, ~16 objects and ~18
relations each, quiet machine); loading and re-reading the file took most of the rest. The claim
is about the kill and the re-run of a 20,000-image load cut into 40 batches, not about how big
one image is, so the images are the generator's own trimmed to their first :data:`OBJECTS`
objects (attributes, boxes and the relations between the kept objects stay): still 20,000 images
in 40 batches of 500, killed after at least four, but about a quarter of the elements. The file
and what a clean load of it holds (the reader's scene graphs and their digest) are computed once
for both runs instead of once each.
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from covr.graph import catalog, open_store
from covr.graph.embedded import EmbeddedServer
from covr.scene.model import SceneGraph
from covr_loaders import gqa, synthetic
from covr_loaders.jobs import gqa_job
from covr_loaders.jsonio import ByteCounter
from covr_loaders.readback import Digest, expected_digest, get_scene_graph, store_digest
from tests.integration.conftest import make_settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]
IMAGES = 20_000
BATCH = 500
OBJECTS = 4
"""Objects kept per synthetic image (see the module docstring for why not all of them)."""
KILL_AFTER = 4
"""Batches the first run must have committed before it is killed (of IMAGES // BATCH = 40)."""


def _trimmed(record: tuple[str, Any]) -> tuple[str, dict[str, Any]]:
    """A GQA record cut to its first OBJECTS objects, keeping only relations among them."""
    key, value = record
    kept = dict(list(value["objects"].items())[:OBJECTS])
    objects = {
        oid: {**obj, "relations": [r for r in obj["relations"] if r["object"] in kept]}
        for oid, obj in kept.items()
    }
    return key, {**value, "objects": objects}


@dataclass(frozen=True)
class CleanLoad:
    """The synthetic file and what a clean load of it holds, shared by both runs."""

    path: Path
    graphs: list[SceneGraph]
    digest: Digest


@pytest.fixture(scope="module")
def clean_load(tmp_path_factory: pytest.TempPathFactory) -> CleanLoad:
    path = tmp_path_factory.mktemp("synth") / "train_sceneGraphs.json"
    with path.open("w", encoding="utf-8") as handle:
        records = (_trimmed(gqa.to_record(g)) for g in synthetic.generate(IMAGES, seed=2024))
        json.dump(dict(records), handle)
    settings = make_settings(tmp_path_factory.mktemp("unused"))
    read = list(gqa_job([path], "train", settings.load).inputs[0].records(ByteCounter()))
    graphs = [g for g in read if isinstance(g, SceneGraph)]
    assert len(graphs) == IMAGES, [p for p in read if not isinstance(p, SceneGraph)][:3]
    assert sum(len(g.relations) for g in graphs) > IMAGES // 2  # relations are still there
    return CleanLoad(path, graphs, expected_digest(graphs))


def covr(args: list[str], data_dir: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "COVR_DATA_DIR": str(data_dir),
        "COVR_GRAPH_URI": "",
        "COVR_LOAD_BATCH_IMAGES": str(BATCH),
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


@contextlib.contextmanager
def _server_stopped_after(data_dir: Path) -> Iterator[None]:
    """The killed loader's embedded server outlives it (its own session): stop it in any case."""
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            EmbeddedServer(make_settings(data_dir).graph).stop()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("resume", [True, False])
def test_sigkill_then_rerun_equals_clean_load(
    clean_load: CleanLoad, tmp_path: Path, resume: bool
) -> None:
    data_dir = tmp_path / "data"
    with _server_stopped_after(data_dir):
        check_kill_and_rerun(clean_load, data_dir, resume)


def check_kill_and_rerun(clean: CleanLoad, data_dir: Path, resume: bool) -> None:
    args = ["load", "gqa", str(clean.path), "--split", "train", "--quiet"]
    first = covr(args, data_dir)
    try:
        deadline = time.monotonic() + 240
        while batches_done(data_dir) < KILL_AFTER and time.monotonic() < deadline:
            assert first.poll() is None, first.communicate()
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()
    done_before = batches_done(data_dir)
    assert KILL_AFTER <= done_before < IMAGES // BATCH

    second = covr([*args, "--json"] + (["--resume"] if resume else []), data_dir)
    try:
        out, err = second.communicate(timeout=400)
    finally:
        if second.poll() is None:
            second.kill()
            second.communicate()
    assert second.returncode == 0, err.decode()
    summary = json.loads(out)
    assert summary["images"] == IMAGES
    assert summary["skipped"] == 0
    if resume:
        assert summary["batches_resumed"] >= done_before - 1

    with open_store(make_settings(data_dir).graph) as store:
        nodes = {
            r["label"]: r["count"] for r in store.read(catalog.get("admin/count_nodes_by_label"))
        }
        assert nodes["Image"] == IMAGES
        assert nodes["Object"] == clean.digest.nodes["Object"]
        assert nodes["Relation"] == clean.digest.nodes["Relation"]
        for graph in random.Random(1).sample(clean.graphs, 20):
            assert get_scene_graph(store, graph.image_id) == graph
        # the whole store, content included, equals what a clean load of the file holds
        assert store_digest(store) == clean.digest
