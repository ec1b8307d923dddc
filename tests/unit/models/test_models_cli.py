"""`covr models score|info|eval` in-process: real ONNX files, JSON output, bad input exits 2."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.settings import Settings, get_settings


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, model_settings: Settings) -> Iterator[CliRunner]:
    monkeypatch.setenv("COVR_DATA_DIR", str(model_settings.data_dir))
    get_settings.cache_clear()
    yield CliRunner()
    get_settings.cache_clear()


def test_score_prints_json(runner: CliRunner) -> None:
    result = runner.invoke(app, ["models", "score", "man", "woman", "--type", "noun", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["type"] == "object"
    assert data["exclusive"] is True


def test_score_is_directional_for_relations(runner: CliRunner) -> None:
    one = runner.invoke(app, ["models", "score", "riding", "near", "--type", "relation"])
    other = runner.invoke(app, ["models", "score", "near", "riding", "--type", "relation"])
    assert one.stdout.split()[1] == "exclusive"
    assert other.stdout.split()[1:] == ["not", "exclusive"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["", "cat", "--type", "noun"], "must not be empty"),
        (["dog", "cat", "--type", "verb"], "unknown node type"),
        (["dog", "猫", "--type", "noun"], "no English form"),
        (["x" * 500, "cat", "--type", "noun"], "characters long"),
    ],
)
def test_score_bad_input_exits_2(runner: CliRunner, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["models", "score", *args])
    assert result.exit_code == 2
    assert message in result.stderr


def test_missing_model_file_exits_1(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["models", "score", "a", "b", "--type", "noun", "--model", str(tmp_path / "x.onnx")]
    )
    assert result.exit_code == 1
    assert "does not exist" in result.stderr


def test_info_lists_both_models(runner: CliRunner) -> None:
    result = runner.invoke(app, ["models", "info", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["exclusivity"]["metadata"]["model_name"] == "covr-exclusivity"
    assert info["presence"]["metadata"]["thresholds"].keys() == {"object", "relation", "attribute"}


def test_eval_exclusivity_prints_the_gold_table(runner: CliRunner) -> None:
    result = runner.invoke(app, ["models", "eval", "exclusivity"])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stdout.splitlines() if ln.split()[:2][-1:] == ["gold"]]
    assert [ln.split()[0] for ln in lines] == ["object", "attribute", "relation"]


def test_train_refuses_bad_options(runner: CliRunner) -> None:
    result = runner.invoke(app, ["models", "train", "exclusivity", "--images", "1"])
    assert result.exit_code == 2
    assert "--images" in result.output
    result = runner.invoke(app, ["models", "train", "presence", "--subgraphs", "0"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["models", "train", "colour"])
    assert result.exit_code == 2


def test_missing_models_dir_is_a_clear_error(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COVR_MODELS_DIR", str(tmp_path))
    get_settings.cache_clear()
    result = runner.invoke(app, ["models", "info"])
    assert result.exit_code == 1
    assert f"{tmp_path}/exclusivity.onnx does not exist" in result.stderr
    result = runner.invoke(app, ["models", "eval", "exclusivity"])
    assert result.exit_code == 1
