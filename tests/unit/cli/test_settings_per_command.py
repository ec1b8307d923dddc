"""Each command reads the settings afresh: one process may run several commands (tests through
CliRunner, notebooks), and keeping the first command's settings sent a later command's reads and
writes to the first one's data directory (the cause of a browser test that failed only after
another test file had run in the same worker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from covr.cli.main import app

pytestmark = pytest.mark.unit


def test_two_commands_in_one_process_see_their_own_data_directories(tmp_path: Path) -> None:
    runner = CliRunner()
    seen = []
    for name in ("first", "second"):
        env = {"COVR_DATA_DIR": str(tmp_path / name), "COVR_GRAPH_URI": ""}
        done = runner.invoke(app, ["db", "status", "--json"], env=env)
        assert done.exit_code == 0, done.output
        seen.append(json.loads(done.output)["data_dir"])
    assert seen == [str(tmp_path / "first"), str(tmp_path / "second")]


def test_backend_option_names_the_backends_the_settings_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--backend`` takes the values of ``COVR_GRAPH_BACKEND`` (read from the settings' field:
    a new backend is added in the graph room and its settings section, not in the CLI)."""
    monkeypatch.setenv("COVR_GRAPH_BACKEND", "falkordb")  # the option sets it: restored after
    runner = CliRunner()
    env = {"COVR_DATA_DIR": str(tmp_path), "COVR_GRAPH_URI": ""}
    done = runner.invoke(app, ["--backend", "nope", "db", "status"], env=env)
    assert done.exit_code == 2
    assert "--backend: expected falkordb or neo4j, got 'nope'" in done.output
    done = runner.invoke(app, ["--backend", "falkordb", "db", "status", "--json"], env=env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["data_dir"] == str(tmp_path)
