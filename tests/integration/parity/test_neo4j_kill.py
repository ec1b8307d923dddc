"""``kill -9`` of the managed Neo4j in the middle of a load, a restart, and the same load again:
the store ends exactly as a clean load leaves it.

The load runs in this process on a Neo4j of the test's own (the one extra server start of this
folder). After its second batch a thread kills the Java process (pid from
``<data_dir>/neo4j/server.json``) a moment later, so that the kill lands while the next batch's
statements run. The graph room then restarts the server (its next call finds it gone) and
retries the statement; whatever the load made of that, the same load is run again, and the store
must hold every image of the file once, with the content the reader produces (per-image
checksums, node and relationship counts per label and type), and name statistics equal to a
recount.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from covr.graph import GraphError, catalog, open_store
from covr.graph.managed import pid_runs
from covr.graph.neo4j_server import LAUNCHER_CLASS, ManagedNeo4j
from covr.scene.model import SceneGraph
from covr_loaders import synthetic
from covr_loaders.jobs import gqa_job
from covr_loaders.jsonio import ByteCounter
from covr_loaders.progress import NullReporter
from covr_loaders.readback import expected_digest, store_digest
from covr_loaders.writer import Batch, run_load
from tests.integration.conftest import BACKENDS, TEST_BACKENDS, make_settings
from tests.integration.parity.helpers import counts, expected_checksums, image_checksums

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

IMAGES = 240
BATCH = 40


class KillJava(NullReporter):
    """After ``after`` batches, kills the server with SIGKILL ``delay`` seconds later (from a
    thread, so the kill meets the load's next statements)."""

    def __init__(self, state_file: Path, after: int, delay: float) -> None:
        self.state_file = state_file
        self.after = after
        self.delay = delay
        self.batches = 0
        self.killed: int | None = None
        self.error = ""
        self.thread: threading.Thread | None = None

    def update(self, bytes_read: int, images: int) -> None:
        self.batches += 1
        if self.batches == self.after and self.thread is None:
            self.thread = threading.Thread(target=self._kill, daemon=True)
            self.thread.start()

    def _kill(self) -> None:
        time.sleep(self.delay)
        pid = int(json.loads(self.state_file.read_text(encoding="utf-8"))["pid"])
        if not pid_runs(pid, LAUNCHER_CLASS.encode()):
            self.error = f"server.json names no running Neo4j (pid {pid})"
            return
        os.kill(pid, signal.SIGKILL)
        self.killed = pid


def records(path: Path, split: str, data_dir: Path) -> list[SceneGraph]:
    job = gqa_job([path], split, make_settings(data_dir).load)
    return [g for g in job.inputs[0].records(ByteCounter()) if isinstance(g, SceneGraph)]


def test_kill_9_during_a_load_then_rerun_equals_a_clean_load(tmp_path: Path) -> None:
    if not set(BACKENDS) <= set(TEST_BACKENDS):
        pytest.skip("COVR_TEST_BACKENDS leaves out neo4j")
    source = tmp_path / "val_sceneGraphs.json"
    synthetic.write("gqa", source, images=IMAGES, seed=404, split="val")
    data_dir = tmp_path / "data"
    settings = make_settings(data_dir, "neo4j", load_batch_images=BATCH)
    graphs = records(source, "val", tmp_path)
    assert len(graphs) == IMAGES
    job = gqa_job([source], "val", settings.load)
    killer = KillJava(data_dir / "neo4j" / "server.json", after=2, delay=0.05)
    try:
        with open_store(settings.graph) as store:
            store.apply_schema()
            first_pid = ManagedNeo4j(settings.graph).read_state()
            # the load may get through (the store restarts the server and retries the cut-off
            # statement) or fail with the server gone; either way the same load runs again
            with contextlib.suppress(GraphError):
                run_load(store, job, data_dir=data_dir, batch_images=BATCH, reporter=killer)
            assert killer.thread is not None
            killer.thread.join(30)
            assert not killer.error, killer.error
            assert killer.killed is not None
            assert first_pid is not None
            assert killer.killed == first_pid.pid
            again = run_load(store, job, data_dir=data_dir, batch_images=BATCH)
            assert again.completed
            assert again.images == IMAGES
            assert again.skipped == 0
            server = getattr(store, "server", None)
            assert server is not None
            assert server.restarts >= 1
            assert ManagedNeo4j(settings.graph).read_state() != first_pid

            assert image_checksums(store) == expected_checksums(graphs)
            expected = expected_digest(graphs)
            assert store_digest(store) == expected
            stored = counts(store)
            assert {k: stored["nodes"].get(k, 0) for k in expected.nodes} == expected.nodes
            assert {
                k: stored["relationships"].get(k, 0) for k in expected.relationships
            } == expected.relationships
            names = {
                (r["type"], r["split"], r["name"]): [r["images"], r["nodes"]]
                for r in store.read(catalog.get("stats/all"))
            }
            assert names == Batch.of(0, graphs).names
    finally:  # a failed run must not leave its server behind
        with contextlib.suppress(Exception):
            ManagedNeo4j(settings.graph).stop()
