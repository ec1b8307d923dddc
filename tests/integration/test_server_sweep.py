"""The session-end sweep (tests/support/server_sweep.py) finds a server a test left running, by
the pid in its ``server.json``, and stops it; a recycled pid (another program) is left alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from covr.graph.embedded import EmbeddedServer
from covr.graph.managed import STATE_NAME
from tests.integration.conftest import make_settings
from tests.support.server_sweep import leftover_servers, stop_leftover_servers

pytestmark = pytest.mark.integration


def test_a_server_left_running_is_found_and_stopped(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "left")
    # outlives its starter, like a killed test
    state = EmbeddedServer(settings.graph).start_detached()
    try:
        assert leftover_servers(tmp_path) == [(state.pid, settings.data_dir.resolve())]
        assert stop_leftover_servers(tmp_path) == [f"pid {state.pid} ({settings.data_dir})"]
        assert leftover_servers(tmp_path) == []
        assert not EmbeddedServer(settings.graph).answers()
    finally:
        EmbeddedServer(settings.graph).stop()  # a no-op when the sweep worked


def test_a_pid_that_runs_something_else_is_left_alone(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        directory = tmp_path / "stale"
        directory.mkdir()
        (directory / STATE_NAME).write_text(json.dumps({"pid": other.pid}), encoding="utf-8")
        assert leftover_servers(tmp_path) == []
        assert stop_leftover_servers(tmp_path) == []
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
